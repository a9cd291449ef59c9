import Foundation
import Synchronization
import OpenCoreData

/// Mirrors a container's SQLite store through a sync server (`ocd sync serve`; docs/SYNC.md): Core Data's
/// CloudKit mirroring, with a server you run.
///
/// Each round pushes the local transactions the server has not acknowledged, then pulls and applies the
/// server's transactions after the last one applied here. Rounds run when ``start()`` is called, after each
/// local save, every ``SyncOptions/pollInterval``, and on ``sync()``; one round runs at a time.
///
/// ```swift
/// let container = PersistentContainer(name: "Notes", managedObjectModel: model)
/// container.persistentStoreDescriptions[0].options = StoreOptions(persistentHistoryTracking: true)
/// try container.loadPersistentStores()
/// let engine = try SyncEngine(container: container, server: URL(string: "https://sync.example.com")!,
///                             token: { try await myApp.currentSyncToken() })
/// await engine.start()
/// ```
///
/// Pulled changes are saved by a background context whose `transactionAuthor` is
/// ``SyncOptions/author``; contexts that merge changes from their parent see them as any other save.
public actor SyncEngine {
    /// Posted (object: the engine) whenever ``state`` changes; `userInfo["state"]` is the new ``SyncState``.
    public static let stateDidChangeNotification = Notification.Name("OpenCoreDataSyncStateDidChange")

    /// What the engine is doing now.
    public private(set) var state: SyncState = .stopped
    /// Every state the engine passes through, from the moment it is made.
    public nonisolated let states: AsyncStream<SyncState>

    private let local: SyncLocalStore
    private let connection: any SyncTransport
    private let options: SyncOptions
    private let modelFingerprint: String
    private let statesContinuation: AsyncStream<SyncState>.Continuation
    private let wakeRequested: WakeFlag
    private var loop: Task<Void, Never>?
    private var roundInFlight: Task<Void, Error>?
    private var saveObserver: (any NSObjectProtocol)?
    private let news: SyncNewsListener?

    /// An engine for `container`'s store, talking to `server` with the bearer tokens `token` gives.
    ///
    /// - Throws: ``SyncError/storeNotSyncable(reason:)`` when the container does not have exactly one
    ///   writable SQLite store with persistent history tracking on.
    public init(container: PersistentContainer, server: URL, token: @escaping @Sendable () async throws -> String,
                options: SyncOptions = SyncOptions()) throws {
        try self.init(container: container, transport: SyncServerConnection(server: server, token: token), options: options,
                      news: { (wake: WakeFlag) -> SyncNewsListener in
                          SyncNewsListener(server: server, token: token, onNews: { wake.raise() })
                      })
    }

    /// An engine that pushes and pulls through `transport` (tests relay between replicas in memory).
    ///
    /// - Throws: as ``init(container:server:token:options:)``.
    init(container: PersistentContainer, transport: any SyncTransport, options: SyncOptions,
         news: ((WakeFlag) -> SyncNewsListener)? = nil) throws {
        let wake = WakeFlag()
        wakeRequested = wake
        self.news = news?(wake)
        local = try SyncLocalStore(container: container)
        connection = transport
        self.options = options
        modelFingerprint = SyncModelFingerprint.of(container.managedObjectModel)
        (states, statesContinuation) = AsyncStream.makeStream(of: SyncState.self, bufferingPolicy: .bufferingNewest(64))
        statesContinuation.yield(.stopped)
    }

    /// An engine that sends the same bearer token with every request.
    ///
    /// - Throws: as ``init(container:server:token:options:)``.
    public init(container: PersistentContainer, server: URL, token: String, options: SyncOptions = SyncOptions()) throws {
        try self.init(container: container, server: server, token: { token }, options: options)
    }

    /// Starts syncing in the background: a round now, then after each local save and every poll interval,
    /// until ``stop()``.
    public func start() {
        guard loop == nil else { return }
        let author = options.author
        let wake = wakeRequested
        saveObserver = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didSaveObjectsNotification, object: nil, queue: nil) { notification in
            if (notification.object as? ManagedObjectContext)?.transactionAuthor != author {
                wake.raise()
            }
        }
        news?.start()
        loop = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                _ = try? await self.sync()
                await self.waitForNextRound()
            }
        }
    }

    /// Stops the background rounds (a round under way finishes first) and reports ``SyncState/stopped``.
    public func stop() async {
        loop?.cancel()
        news?.stop()
        if let saveObserver { NotificationCenter.default.removeObserver(saveObserver) }
        saveObserver = nil
        _ = await loop?.value
        loop = nil
        if let roundInFlight { _ = try? await roundInFlight.value }
        report(.stopped)
    }

    /// Runs one round now (waiting for one under way to end first): pushes what is pending, then pulls.
    ///
    /// - Throws: ``SyncError`` (the state reports it too), ``StoreError`` and `ObjectGraphError` from the store.
    public func sync() async throws {
        while let running = roundInFlight { _ = try? await running.value }
        let round = Task { try await self.runRound() }
        roundInFlight = round
        defer { roundInFlight = nil }
        do {
            try await round.value
            report(.idle)
        } catch let error as SyncError {
            if case .unreachable(_, let reason) = error { report(.offline(reason: reason)) } else { report(.error(error.description)) }
            throw error
        } catch {
            report(.error(String(describing: error)))
            throw error
        }
    }

    private func runRound() async throws {
        try await push()
        try await pull()
    }

    private func push() async throws {
        let clientID = try local.clientID()
        var first = true
        while true {
            let mark = try local.pushedThrough()
            let context = newContext()
            let (local, author, limit) = (self.local, options.author, options.pushBatchSize)
            let batch: PushBuilder.Batch? = try await context.perform {
                var builder = PushBuilder(context: context, local: local, clientID: clientID, author: author)
                return try builder.nextBatch(after: mark, limit: limit)
            }
            guard let batch else { return }
            if !batch.resurrected.isEmpty {
                let context = newContext()
                let ids = batch.resurrected
                try await context.perform {
                    for id in ids { if let object = try? context.existingObject(with: id) { context.delete(object) } }
                    if context.hasChanges { try context.save() }
                }
            }
            if !batch.transactions.isEmpty {
                if first { report(.pushing); first = false }
                if !batch.bookkeeping.isEmpty { try local.store.writeSyncBookkeeping(records: batch.bookkeeping) }
                let answer = try await connection.push(SyncPushRequest(model: modelFingerprint, transactions: batch.transactions))
                let sent = Set(batch.transactions.map(\.id))
                guard sent.isSubset(of: Set(answer.acknowledged)) else {
                    throw SyncError.malformedResponse(reason: "the push was not acknowledged whole (\(sent.subtracting(answer.acknowledged).count) missing)")
                }
                if !batch.deletions.isEmpty { try local.store.writeSyncBookkeeping(records: batch.deletions) }
            }
            try local.setPushedThrough(batch.through)
        }
    }

    /// Pulls and applies the zone's transactions in the server's order, this client's own included: a
    /// foreign change the server ordered before one of ours must not win here when ours won there, and
    /// applying ours again restores it (values equal to the local ones are not set again).
    private func pull() async throws {
        var first = true
        while true {
            let token = try local.serverToken()
            let page = try await connection.pull(after: token, limit: options.pullPageSize)
            guard page.serverToken >= token else {
                throw SyncError.malformedResponse(reason: "the server's token went back from \(token) to \(page.serverToken)")
            }
            if !page.transactions.isEmpty {
                if first { report(.pulling); first = false }
                let context = newContext()
                let (local, policy, author) = (self.local, options.mergePolicy, options.author)
                let mark = try local.pushedThrough()
                let transactions = page.transactions
                try await context.perform {
                    var applier = try PullApplier(context: context, local: local, policy: policy) {
                        let history = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: mark)) as? PersistentHistoryResult
                        return PendingLocalChanges(history?.transactions ?? [], excludingAuthor: author)
                    }
                    try applier.apply(transactions)
                }
            }
            if page.serverToken != token { try local.setServerToken(page.serverToken) }
            if !page.hasMore || page.transactions.isEmpty { return }
        }
    }

    private func newContext() -> ManagedObjectContext {
        let context = local.container.newBackgroundContext()
        context.transactionAuthor = options.author
        // An app save that lands between the apply's reads and its save is a local change not yet pushed:
        // under the default policy its values win, as they will on the server once pushed.
        context.mergePolicy = options.mergePolicy == .localChangesWin ? .mergeByPropertyStoreTrump : .mergeByPropertyObjectTrump
        return context
    }

    private func waitForNextRound() async {
        let deadline = ContinuousClock.now + options.pollInterval
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if wakeRequested.lower() { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func report(_ new: SyncState) {
        guard new != state else { return }
        state = new
        statesContinuation.yield(new)
        NotificationCenter.default.post(name: Self.stateDidChangeNotification, object: self, userInfo: ["state": new])
    }
}

/// A flag a local save raises (from any thread) and the engine's loop lowers when it starts a round.
final class WakeFlag: Sendable {
    private let raised = Mutex(false)

    func raise() { raised.withLock { $0 = true } }

    /// Lowers the flag; returns whether it was raised.
    func lower() -> Bool { raised.withLock { let was = $0; $0 = false; return was } }
}
