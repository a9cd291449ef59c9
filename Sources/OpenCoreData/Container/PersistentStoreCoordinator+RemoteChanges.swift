import Foundation

/// A commit another process or coordinator made to one of a coordinator's stores.
public struct RemoteChange: Sendable, Hashable {
    /// The store's UUID.
    public let storeIdentifier: String
    /// The store's file.
    public let storeURL: URL?
    /// The newest transaction in the store's history when the commit was noticed (stores with history
    /// tracking only).
    public let historyToken: PersistentHistoryToken?
}

/// The watchers of a coordinator's stores and what each has merged, guarded by a lock.
final class RemoteChangeState: @unchecked Sendable {
    // @unchecked Sendable: every field is guarded by `lock`.
    private let lock = NSLock()
    private var watchers: [ObjectIdentifier: any StoreChangeWatch] = [:]
    /// Per store: the newest transaction already merged (or made here).
    private var merged: [ObjectIdentifier: Int64] = [:]
    let continuations = ContinuationStore<RemoteChange>()

    func add(_ watcher: any StoreChangeWatch, for store: any StoreBackend, startingAt transaction: Int64) {
        lock.withLock {
            watchers[ObjectIdentifier(store)] = watcher
            merged[ObjectIdentifier(store)] = transaction
        }
    }

    /// Stops and forgets the store's watcher, if it has one.
    func remove(_ store: any StoreBackend) {
        let watcher = lock.withLock { () -> (any StoreChangeWatch)? in
            merged.removeValue(forKey: ObjectIdentifier(store))
            return watchers.removeValue(forKey: ObjectIdentifier(store))
        }
        watcher?.stop()
    }

    func removeAll() {
        let all = lock.withLock { () -> [any StoreChangeWatch] in
            defer { watchers = [:]; merged = [:] }
            return Array(watchers.values)
        }
        for watcher in all { watcher.stop() }
        continuations.finish()
    }

    /// The newest transaction merged for `store`, replaced by `newest`.
    func advance(_ store: any StoreBackend, to newest: Int64) -> Int64? {
        lock.withLock {
            guard let previous = merged[ObjectIdentifier(store)] else { return nil }
            merged[ObjectIdentifier(store)] = max(previous, newest)
            return previous
        }
    }
}

extension PersistentStoreCoordinator {
    /// Posted, with the coordinator as its object, when another process or coordinator commits to one of
    /// its stores opened with ``StoreOptions/remoteChangeNotifications`` (Core Data's
    /// `NSPersistentStoreRemoteChange`). The user info holds ``storeUUIDKey``, ``storeURLKey`` and, with
    /// history tracking, ``historyTokenKey``.
    public static let remoteChangeNotification = Notification.Name("NSPersistentStoreRemoteChangeNotification")
    /// The store's UUID (a `String`) in a remote-change notification.
    public static let storeUUIDKey = "storeUUID"
    /// The store's file URL in a remote-change notification.
    public static let storeURLKey = "storeURL"
    /// The newest ``PersistentHistoryToken`` in a remote-change notification (history tracking only).
    public static let historyTokenKey = "historyToken"

    /// Remote changes as an asynchronous sequence (the same events as ``remoteChangeNotification``).
    public var remoteChanges: AsyncStream<RemoteChange> { remoteChangeState.continuations.makeStream() }

    /// Starts watching a store opened with remote-change notifications.
    func startWatching(_ store: any StoreBackend) throws {
        guard store.options.remoteChangeNotifications, store.canNoticeCommitsElsewhere else { return }
        let start = try store.currentHistoryToken().transactionNumber
        guard let watcher = try store.watchCommitsElsewhere({ [weak self, weak store] in
            guard let self, let store else { return }
            self.storeChangedElsewhere(store)
        }) else { return }
        remoteChangeState.add(watcher, for: store, startingAt: start)
    }

    /// A commit was noticed on `store`: drop cached rows, merge what the history says changed into the
    /// contexts that merge automatically (skipping this coordinator's own commits, already merged), and
    /// tell the app.
    private func storeChangedElsewhere(_ store: any StoreBackend) {
        rowCache.removeAll()
        // A store with history (tracked here or by whoever wrote it) says what changed; one without can
        // only say that something did.
        var token: PersistentHistoryToken?
        if let current = try? store.currentHistoryToken(), current.transactionNumber > 0 {
            token = current
            if let previous = remoteChangeState.advance(store, to: current.transactionNumber),
               current.transactionNumber > previous {
                let request = PersistentHistoryChangeRequest.fetchHistory(
                    after: PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: previous))
                if let result = try? store.execute(request) {
                    let own = store.takeOwnTransactions(through: current.transactionNumber)
                    let remote = result.transactions.filter { !own.contains($0.transactionNumber) }
                    let saved = remote.contextDidSave
                    if !saved.isEmpty { broadcast(saved, from: nil) }
                }
            }
        }
        let change = RemoteChange(storeIdentifier: store.identifier, storeURL: store.url, historyToken: token)
        var info: [String: Any] = [Self.storeUUIDKey: store.identifier]
        if let url = store.url { info[Self.storeURLKey] = url }
        if let token { info[Self.historyTokenKey] = token }
        NotificationCenter.default.post(name: Self.remoteChangeNotification, object: self, userInfo: info)
        remoteChangeState.continuations.yield(change)
    }
}
