import Foundation
import OpenCoreData
import Synchronization

/// The served store's commits made elsewhere (another process, another server), as `/events` streams them:
/// one watch of the store (the coordinator's remote changes: the file's commits on SQLite, the change feed
/// on PostgreSQL) turned into ``StoreChange``s and handed to every open stream, with a heartbeat between
/// them so that a stream whose client went away notices and ends.
final class ChangeFeed: Sendable {
    /// What a stream sends: a change, or a comment that keeps the connection checked.
    enum Message: Sendable {
        case change(StoreChange)
        case heartbeat

        /// The message as server-sent event text.
        var eventText: String {
            switch self {
            case .change(let change): change.eventText
            case .heartbeat: ": alive\n\n"
            }
        }
    }

    /// How often an idle stream is written to (a write to a closed connection fails, which ends the stream).
    static let heartbeatInterval: Duration = .seconds(5)

    private struct State {
        var streams: [UInt64: AsyncStream<Message>.Continuation] = [:]
        var nextIdentifier: UInt64 = 0
        var finished = false
    }

    private let browser: StoreBrowser
    private let state = Mutex(State())

    init(browser: StoreBrowser) {
        self.browser = browser
    }

    /// How many streams are open.
    var streamCount: Int { state.withLock { $0.streams.count } }

    /// A new stream of what follows; it ends when ``finish()`` is called or its reader lets it go.
    func subscribe() -> AsyncStream<Message> {
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingNewest(100))
        let identifier = state.withLock { state -> UInt64? in
            guard !state.finished else { return nil }
            state.nextIdentifier += 1
            state.streams[state.nextIdentifier] = continuation
            return state.nextIdentifier
        }
        guard let identifier else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: identifier) }
        }
        return stream
    }

    /// Ends every stream, and refuses new ones (the server is stopping: open streams must not hold it up).
    func finish() {
        let streams = state.withLock { state in
            state.finished = true
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }

    /// Watches the store until the returned task is cancelled: each commit noticed becomes a change sent to
    /// every stream; a heartbeat goes out every ``heartbeatInterval``.
    ///
    /// - Throws: the store's error when its counts or history token cannot be read at the start.
    func start() throws -> Task<Void, Never> {
        let coordinator = browser.opened.coordinator
        let changes = coordinator.remoteChanges
        let initialCounts = try browser.counts()
        let initialToken = try browser.opened.coordinator.currentPersistentHistoryToken()
        let browser = self.browser
        return Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [weak self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.heartbeatInterval)
                        self?.send(.heartbeat)
                    }
                }
                group.addTask { [weak self] in
                    var counts = initialCounts
                    var last = initialToken
                    for await remote in changes {
                        guard let self else { return }
                        do {
                            if let change = try Self.change(remote, browser: browser, counts: &counts, last: &last) {
                                self.send(.change(change))
                            }
                        } catch {
                            // A store that cannot be read now may be readable at the next commit; the
                            // pages show the error when they are loaded.
                            Console.error("ocd serve: the change could not be read: \(error)")
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Sends `message` to every open stream.
    private func send(_ message: Message) {
        for stream in state.withLock({ Array($0.streams.values) }) { stream.yield(message) }
    }

    /// What `remote` changed: the counts now, and per entity the inserts, updates and deletes the history
    /// holds since `last` (or, without history, what the counts' differences from `counts` say). Nil when
    /// the history holds no new transaction: the commit changed no object (another process opening the
    /// store writes its metadata). Without history such a commit cannot be told from an update, so it is
    /// sent, saying only that the store changed.
    ///
    /// - Throws: the store's error when it cannot be counted or its history read.
    private static func change(_ remote: RemoteChange, browser: StoreBrowser, counts: inout [String: Int],
                               last: inout PersistentHistoryToken?) throws -> StoreChange? {
        guard let token = remote.historyToken else {
            let now = try browser.counts()
            defer { counts = now }
            let subentities = Dictionary(uniqueKeysWithValues: browser.model.entities.map { ($0.name, $0.subentities.map(\.name)) })
            return StoreChange(counts: now, changes: StoreChange.changes(from: counts, to: now, subentities: subentities),
                               history: false)
        }
        // The numbers went backwards (history cleared, the file replaced): all the history is new.
        if let seen = last, token.transactionNumber < seen.transactionNumber { last = nil }
        let after = last
        let transactions = try browser.withContext { context in
            (try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: after)) as? PersistentHistoryResult)?
                .transactions ?? []
        }
        var byEntity: [String: StoreChange.EntityChange] = [:]
        for transaction in transactions {
            last = transaction.token
            for change in transaction.changes ?? [] {
                let name = change.changedObjectID.entity.name
                var entry = byEntity[name] ?? StoreChange.EntityChange(entity: name)
                switch change.changeType {
                case .insert: entry.inserted += 1
                case .update: entry.updated += 1
                case .delete: entry.deleted += 1
                }
                byEntity[name] = entry
            }
        }
        guard !transactions.isEmpty else { return nil }
        // Counted after the history was read, so the counts include every change the event names: a commit
        // right after the one notified shows in both (and its own event then names nothing new), never in the
        // changes without the counts.
        let now = try browser.counts()
        counts = now
        return StoreChange(counts: now, changes: byEntity.keys.sorted().compactMap { byEntity[$0] }, history: true)
    }
}
