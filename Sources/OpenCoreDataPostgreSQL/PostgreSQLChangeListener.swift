import Foundation
import OpenCoreData
import PostgresNIO
import Synchronization

/// Hears of every transaction any process commits to a PostgreSQL store with history on, in commit order,
/// and hands them over with their changes: the PostgreSQL side of the change feed.
///
/// It keeps one connection of its own that `LISTEN`s on the store's channel. A notification only wakes it;
/// what it delivers is read from the history tables after the last transaction it delivered, so a lost
/// notification or a dropped connection delays a transaction, never loses it: after reconnecting it catches
/// up from its last token. A short periodic check covers a connection that died without a sound.
///
/// ```swift
/// let listener = try PostgreSQLChangeListener(store: store, after: lastToken) { transactions in
///     for transaction in transactions { print(transaction.author ?? "-", transaction.changes?.count ?? 0) }
/// }
/// // … later
/// listener.stop()
/// ```
public final class PostgreSQLChangeListener: Sendable {
    /// The store listened to.
    public let store: PostgreSQLStore
    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)
    private let handler: @Sendable ([PersistentHistoryTransaction]) -> Void
    /// How often the connection is checked when no notification comes (also bounds catching up after a
    /// silent connection loss).
    static let checkInterval: TimeInterval = 1
    /// How many transactions one read delivers at most.
    static let batchSize = 500

    private struct State {
        var lastDelivered: Int64
        var stopped = false
        var connection: PostgresConnection?
        var reconnections = 0
    }

    /// Starts listening. Transactions numbered above `after` (all of them when nil, none before now when
    /// `.now`) are delivered to `handler`, oldest first, on the listener's own thread.
    ///
    /// - Throws: ``StoreError/connectionFailed(server:reason:)`` when the first connection cannot be
    ///   opened; ``StoreError/incompatibleModel(path:differences:)`` when the store does not
    ///   record history, or `after` is a token of another store.
    public init(store: PostgreSQLStore, after token: PersistentHistoryToken?,
                handler: @escaping @Sendable ([PersistentHistoryTransaction]) -> Void) throws {
        guard store.recordsHistory else {
            throw StoreError.incompatibleModel(path: store.configuration.redactedURL,
                                                         differences: ["the store was opened without history, so there is nothing to listen to"])
        }
        if let token, token.storeIdentifier != store.identifier {
            throw StoreError.incompatibleModel(path: store.configuration.redactedURL,
                                                         differences: ["the token \(token) belongs to another store"])
        }
        self.store = store
        self.handler = handler
        state = Mutex(State(lastDelivered: token?.transactionNumber ?? 0))
        let connection = try listeningConnection()
        state.withLock { $0.connection = connection }
        let thread = Thread { [self] in run() }
        thread.name = "OpenCoreData.PostgreSQLChangeListener"
        thread.start()
    }

    /// The token of the last transaction delivered (nil before the first).
    public var lastDeliveredToken: PersistentHistoryToken? {
        let number = state.withLock { $0.lastDelivered }
        return number == 0 ? nil : PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: number)
    }

    /// How many times the listener has reconnected after losing its connection.
    public var reconnections: Int { state.withLock { $0.reconnections } }

    /// Stops listening and closes the connection; no delivery starts afterwards.
    public func stop() {
        let connection = state.withLock { state -> PostgresConnection? in
            state.stopped = true
            defer { state.connection = nil }
            return state.connection
        }
        wake.signal()
        // Waited for: a connection released before it has closed trips postgres-nio's assertion.
        if let connection { try? (connection.close() as EventLoopFuture<Void>).wait() }
    }

    /// Opens a connection that wakes this listener on every notification of the store's channel.
    private func listeningConnection() throws -> PostgresConnection {
        let connection = try store.pool.openDedicatedConnection()
        let channel = store.historyChannel
        connection.addListener(channel: channel) { [wake] _, _ in wake.signal() }
        do {
            // The channel name is made by the store from a checked schema name.
            let session = PostgreSQLSession(connection: connection, server: store.configuration.redactedURL,
                                            logger: .init(label: "OpenCoreData.PostgreSQL"))
            try session.execute("LISTEN \(channel)")
        } catch {
            try? (connection.close() as EventLoopFuture<Void>).wait()
            throw error
        }
        return connection
    }

    private func run() {
        var backoff: TimeInterval = 0.05
        while true {
            let (stopped, connection) = state.withLock { ($0.stopped, $0.connection) }
            if stopped { return }
            guard let connection, !connection.isClosed else {
                // Reconnect, then catch up from the last delivered transaction.
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 2)
                if let fresh = try? listeningConnection() {
                    let keep = state.withLock { state -> Bool in
                        guard !state.stopped else { return false }
                        state.connection = fresh
                        state.reconnections += 1
                        return true
                    }
                    if !keep { try? (fresh.close() as EventLoopFuture<Void>).wait() }
                    backoff = 0.05
                } else {
                    state.withLock { $0.connection = nil }
                }
                continue
            }
            deliverNew()
            _ = wake.wait(timeout: .now() + Self.checkInterval)
        }
    }

    /// Reads and hands over every transaction after the last delivered one.
    private func deliverNew() {
        while true {
            let (stopped, after) = state.withLock { ($0.stopped, $0.lastDelivered) }
            if stopped { return }
            let transactions: [PersistentHistoryTransaction]
            do {
                transactions = try store.pool.withSession { session in
                    try PostgreSQLHistory.transactions(after: after, limit: Self.batchSize, model: store.model,
                                                       storeIdentifier: store.identifier, in: session)
                }
            } catch {
                return  // The next wake or check tries again; nothing was delivered, so nothing is lost.
            }
            guard let last = transactions.last else { return }
            handler(transactions)
            state.withLock { $0.lastDelivered = last.transactionNumber }
            if transactions.count < Self.batchSize { return }
        }
    }
}
