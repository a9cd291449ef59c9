import Foundation
import Logging
import OpenCoreData
import PostgresNIO
import Synchronization

extension PostgreSQLStore {
    /// Runs one query of an asynchronous fetch (or of `fetchBatches`): each row is handed to `body` as it
    /// arrives, so progress moves while the server sends, and cancelling `cancellation` stops the statement
    /// on the server, not only its rows here.
    ///
    /// postgres-nio offers no protocol-level cancel request, so the cancel is `pg_cancel_backend` with the
    /// session's backend process ID, sent from a connection of its own (a busy pool may have none to spare).
    /// Once cancelled, the rows still on their way are read and dropped until the server ends the statement;
    /// the connection then goes back to the pool, usable. A cancel that cannot be sent (the server unreachable, the
    /// role not allowed to signal) closes the statement's connection instead, so the fetch never waits for a
    /// statement nobody can stop.
    ///
    /// - Throws: ``ObjectGraphError/cancelled`` once `cancellation` is cancelled, whatever the server answered
    ///   after it; ``StoreError/connectionLost(server:reason:)`` when the connection drops;
    ///   ``StoreError/serverError(sqlState:message:statement:)`` when the server refuses the query;
    ///   what `body` throws.
    func readCancellable(_ sql: String, _ arguments: [StoreValue], cancellation: CancellationFlag,
                         _ body: ([StoreValue]) throws -> Void) throws {
        if cancellation.isCancelled { throw ObjectGraphError.cancelled }
        try pool.withSession { session in
            guard let backend = try session.rows("SELECT pg_backend_pid()").first.flatMap({ Int64.fromStoreValue($0[0]) }) else {
                throw StoreError.unexpectedValue(column: "pg_backend_pid()", type: "no value")
            }
            let statementCancel = PostgreSQLStatementCancel(pool: pool, backend: backend, connection: session.connection)
            cancellation.addHandler { statementCancel.cancel() }
            let stream = PostgreSQLRowStream(session: session, sql: sql, arguments: arguments)
            var failure: (any Error)?
            do {
                while let batch = try stream.next() {
                    // Cancelled: the rest is read and dropped until the server ends the statement.
                    if cancellation.isCancelled { continue }
                    for row in batch {
                        try body(row)
                        if cancellation.isCancelled { break }
                    }
                }
            } catch {
                failure = error
                // A connection that reported its loss goes, even before SwiftNIO has marked it closed, so the
                // pool never hands it out again.
                if case StoreError.connectionLost? = error as? StoreError {
                    try? (session.connection.close() as EventLoopFuture<Void>).wait()
                }
            }
            if statementCancel.finish() { statementCancel.settle(session) }
            if cancellation.isCancelled { throw ObjectGraphError.cancelled }
            if let failure { throw failure }
        }
    }
}

/// The server-side cancel of one running statement, armed while the statement runs and disarmed when it
/// ends, so a late cancel never reaches the backend once it runs another piece of work.
final class PostgreSQLStatementCancel: Sendable {
    private enum State { case running, sending, sent, finished }
    private let state = Mutex(State.running)
    private let sentSignal = DispatchSemaphore(value: 0)
    private let pool: PostgreSQLConnectionPool
    private let backend: Int64
    private let connection: PostgresConnection

    init(pool: PostgreSQLConnectionPool, backend: Int64, connection: PostgresConnection) {
        self.pool = pool
        self.backend = backend
        self.connection = connection
    }

    /// Sends the cancel in the background (the caller may be a context's queue): `pg_cancel_backend` from a
    /// connection of its own; when that fails, the statement's connection is closed instead.
    func cancel() {
        let starts = state.withLock { state in
            guard state == .running else { return false }
            state = .sending
            return true
        }
        guard starts else { return }
        // A queue of its own (a serial one gets a thread even when the shared ones are all blocked).
        DispatchQueue(label: "OpenCoreData.PostgreSQL.cancel").async { [self] in
            if !sendCancel() { let _: EventLoopFuture<Void> = connection.close() }
            state.withLock { $0 = .sent }
            sentSignal.signal()
        }
    }

    /// Whether the server took the cancel (false also when the backend has gone, whose connection is dead).
    private func sendCancel() -> Bool {
        guard let connection = try? pool.openDedicatedConnection() else { return false }
        defer { try? (connection.close() as EventLoopFuture<Void>).wait() }
        let session = PostgreSQLSession(connection: connection, server: pool.configuration.redactedURL,
                                        logger: Logger(label: "OpenCoreData.PostgreSQL"), queryTimeout: pool.configuration.queryTimeout)
        let rows = try? session.rows("SELECT pg_cancel_backend(CAST(? AS integer))", [backend.storeValue])
        return rows?.first.flatMap { Bool.fromStoreValue($0[0]) } == true
    }

    /// Called when the statement has ended: disarms the cancel, waits for one being sent, and says whether
    /// one was sent.
    func finish() -> Bool {
        let before = state.withLock { state in
            defer { if state == .running { state = .finished } }
            return state
        }
        switch before {
        case .running, .finished: return false
        case .sending: sentSignal.wait(); return true
        case .sent: return true
        }
    }

    /// After a cancel: a signal the backend received only once the statement had ended must not cancel the
    /// next piece of work on the connection, so a probe takes it (an idle backend ignores it; one running
    /// the probe fails the probe, which is run again).
    func settle(_ session: PostgreSQLSession) {
        guard !session.connection.isClosed else { return }
        for _ in 0..<2 {
            if (try? session.execute("SELECT 1")) != nil { return }
        }
    }
}
