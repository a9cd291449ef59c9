import Foundation
import OpenCoreData
import Logging
import PostgresNIO

/// One query's rows handed to the calling thread in batches as the server sends them.
///
/// ``PostgreSQLSession/rows(_:_:)`` waits for the whole result; an asynchronous fetch reports progress as rows
/// arrive and must be able to stop midway, so it reads through this instead. Rows are decoded on SwiftNIO's
/// event loop as they arrive and queued here; the calling thread (a context's background work) takes them.
/// The socket is read as fast as the server sends, as for a whole result: postgres-nio's back-pressured row
/// sequence is not used, because a connection that closes while its rows wait for demand stops the process
/// in postgres-nio (a precondition in its row stream state machine), and a lost connection must be an error.
final class PostgreSQLRowStream: @unchecked Sendable {
    // @unchecked Sendable: `pending`, `outcome` change only under `condition`.
    private let condition = NSCondition()
    private var pending: [[StoreValue]] = []
    /// Set when the statement has ended: nil error for its end, else why it failed.
    private var outcome: Result<Void, any Error>?
    private let statement: String
    private let server: String
    /// Sends the query; its rows start arriving at once.
    init(session: PostgreSQLSession, sql: String, arguments: [StoreValue]) {
        let (text, count) = PostgreSQLStatementText.numberingPlaceholders(sql)
        precondition(count == arguments.count, "statement has \(count) placeholders for \(arguments.count) values")
        statement = text
        server = session.server
        let query = PostgresQuery(unsafeSQL: text, binds: PostgreSQLValueCoding.bindings(arguments))
        let connection = session.connection
        let timeout = session.queryTimeout.map { seconds in
            // As `PostgreSQLSession` does: a server that stops answering would leave the reader waiting for as
            // long as TCP keeps the connection, so past the timeout the connection is closed, which ends it.
            connection.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) { [weak self, server] in
                self?.end(.failure(StoreError.connectionLost(
                    server: server, reason: "no reply within \(seconds) s (query_timeout); the connection was closed")))
                let _: EventLoopFuture<Void> = connection.close()
            }
        }
        connection.query(query, logger: session.logger) { [self] row in
            let values = try PostgreSQLValueCoding.values(of: row)
            condition.withLock {
                pending.append(values)
                condition.signal()
            }
        }.whenComplete { [self] result in
            timeout?.cancel()
            end(result.map { _ in () }.mapError { PostgreSQLSession.storeError($0, server: server, statement: text) })
        }
    }

    private func end(_ result: Result<Void, any Error>) {
        condition.withLock {
            if outcome == nil { outcome = result }
            condition.signal()
        }
    }

    /// The rows that arrived since the last call, in order (waiting for one at least), or nil once the
    /// statement has ended.
    ///
    /// - Throws: ``StoreError/serverError(sqlState:message:statement:)`` when the server ends the
    ///   statement with an error (SQLSTATE 57014 after a cancel), ``StoreError/connectionLost(server:reason:)``
    ///   when the connection drops or the reply takes longer than `query_timeout`,
    ///   ``StoreError/unexpectedValue(column:type:)`` for a cell of a type the layout never uses.
    func next() throws -> [[StoreValue]]? {
        condition.lock()
        defer { condition.unlock() }
        while pending.isEmpty && outcome == nil { condition.wait() }
        if !pending.isEmpty {
            defer { pending = [] }
            return pending
        }
        if case .failure(let error) = outcome { throw error }
        return nil
    }
}
