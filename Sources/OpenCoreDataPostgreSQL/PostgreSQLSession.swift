import Foundation
import OpenCoreData
import Logging
import PostgresNIO
import Synchronization

/// One connection, checked out of the store's pool for the length of one piece of work, used by one thread.
///
/// The store's API is synchronous (contexts work on their own queues), so each statement waits for its
/// result on the calling thread; the connection's I/O runs on SwiftNIO's event loops, never on that thread.
/// Statements take SQLite-style `?` placeholders (``PostgreSQLStatementText``) and values only as bindings.
final class PostgreSQLSession {
    let connection: PostgresConnection
    /// The server, for error messages.
    let server: String
    let logger: Logger
    /// Seconds a statement may wait for its reply before the connection is closed (nil: no limit).
    let queryTimeout: Double?
    private var transactionDepth = 0
    /// Whether a transaction is open (``transaction(beginning:_:)`` is running): a new one is then a savepoint.
    var isInTransaction: Bool { transactionDepth > 0 }
    /// Whether a unique index's refusal is thrown as ``PostgreSQLUniqueViolation`` (a save's writes) rather
    /// than as a server error.
    var reportsUniqueViolations = false

    init(connection: PostgresConnection, server: String, logger: Logger, queryTimeout: Double? = nil) {
        self.connection = connection
        self.server = server
        self.logger = logger
        self.queryTimeout = queryTimeout
    }

    /// Runs one statement and returns how many rows it wrote (0 for statements that write none).
    ///
    /// - Throws: ``StoreError/serverError(sqlState:message:statement:)`` when the server refuses it,
    ///   ``StoreError/connectionLost(server:reason:)`` when the connection drops.
    @discardableResult
    func execute(_ sql: String, _ arguments: [StoreValue] = []) throws -> Int {
        try run(sql, arguments).metadata.rows ?? 0
    }

    /// Runs one query and returns its rows as the store's values, in column order.
    ///
    /// - Throws: as ``execute(_:_:)``, and ``StoreError/unexpectedValue(column:type:)`` for a cell
    ///   of a type the layout never uses.
    func rows(_ sql: String, _ arguments: [StoreValue] = []) throws -> [[StoreValue]] {
        try run(sql, arguments).rows.map(PostgreSQLValueCoding.values(of:))
    }

    /// Runs one query and hands its rows to `body` in order, each decoded into one buffer reused from row to
    /// row (valid only during the call): no array per row for a long read that keeps a few values of each.
    ///
    /// - Throws: as ``rows(_:_:)``, and what `body` throws.
    func forEachRow(_ sql: String, _ arguments: [StoreValue] = [],
                    _ body: (UnsafeBufferPointer<StoreValue>) throws -> Void) throws {
        var values: [StoreValue] = []
        for row in try run(sql, arguments).rows {
            values.removeAll(keepingCapacity: true)
            for cell in row { values.append(try PostgreSQLValueCoding.value(of: cell)) }
            try values.withUnsafeBufferPointer(body)
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws. Nested calls run
    /// in a savepoint, so an inner failure undoes only the inner work.
    ///
    /// - Parameter begin: the statement that opens an outermost transaction (`BEGIN` with its modes, so that
    ///   setting them costs no round trip of its own); nested calls ignore it.
    /// - Throws: what `body` throws, or the errors of ``execute(_:_:)`` for BEGIN and COMMIT (a COMMIT the
    ///   server refuses, such as a serialization failure, leaves nothing written).
    func transaction<Result>(beginning begin: String = "BEGIN", _ body: () throws -> Result) throws -> Result {
        let savepoint = "ocd_savepoint_\(transactionDepth)"
        try execute(transactionDepth == 0 ? begin : "SAVEPOINT \(savepoint)")
        transactionDepth += 1
        do {
            let result = try body()
            transactionDepth -= 1
            try execute(transactionDepth == 0 ? "COMMIT" : "RELEASE SAVEPOINT \(savepoint)")
            return result
        } catch {
            transactionDepth -= 1
            // A lost connection has rolled the transaction back already.
            if !connection.isClosed {
                _ = try? execute(transactionDepth == 0 ? "ROLLBACK" : "ROLLBACK TO SAVEPOINT \(savepoint)")
            }
            throw error
        }
    }

    /// The statement log `OCD_SQL_DEBUG=1` turns on, as for SQLite stores (one line a statement, with its time).
    static let sqlLogger = Logger(label: "OpenCoreData.SQL")
    static let sqlDebug: Bool = ProcessInfo.processInfo.environment["OCD_SQL_DEBUG"].map { $0 != "0" && !$0.isEmpty } ?? false

    private func run(_ sql: String, _ arguments: [StoreValue]) throws -> PostgresQueryResult {
        guard Self.sqlDebug else { return try runOnce(sql, arguments) }
        let start = DispatchTime.now().uptimeNanoseconds
        defer {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let (text, _) = PostgreSQLStatementText.numberingPlaceholders(sql)
            let bound = arguments.isEmpty ? "" : " [\(arguments.count) bound]"
            Self.sqlLogger.info("\(text)\(bound) (\(String(format: "%.4f", seconds))s)")
        }
        return try runOnce(sql, arguments)
    }

    private func runOnce(_ sql: String, _ arguments: [StoreValue]) throws -> PostgresQueryResult {
        let (text, count) = PostgreSQLStatementText.numberingPlaceholders(sql)
        precondition(count == arguments.count, "statement has \(count) placeholders for \(arguments.count) values")
        let query = PostgresQuery(unsafeSQL: text, binds: PostgreSQLValueCoding.bindings(arguments))
        // A server that stops answering without closing the connection would leave the wait below blocked for
        // as long as TCP keeps the connection: past the timeout the connection is closed, which fails it.
        let timedOut = TimeoutFlag()
        let deadline = queryTimeout.map { seconds in
            connection.eventLoop.scheduleTask(in: .milliseconds(Int64(seconds * 1000))) { [connection] in
                timedOut.raised.store(true, ordering: .sequentiallyConsistent)
                let _: EventLoopFuture<Void> = connection.close()
            }
        }
        defer { deadline?.cancel() }
        do {
            // postgres-nio can leave a query waiting for ever when the connection closes under it (a server
            // restart between two statements): the wait looks at the connection every second, and a closed
            // connection whose query never answered is a lost connection.
            let reply = connection.query(query, logger: logger)
            let answered = DispatchSemaphore(value: 0)
            reply.whenComplete { _ in answered.signal() }
            while answered.wait(timeout: .now() + 1) == .timedOut {
                if connection.isClosed, answered.wait(timeout: .now() + 1) == .timedOut {
                    throw StoreError.connectionLost(server: server, reason: "the connection closed before the reply")
                }
            }
            return try reply.wait()
        } catch {
            if timedOut.raised.load(ordering: .sequentiallyConsistent), let queryTimeout {
                let seconds = queryTimeout == queryTimeout.rounded() ? "\(Int(queryTimeout))" : "\(queryTimeout)"
                throw StoreError.connectionLost(
                    server: server, reason: "no reply within \(seconds) s (query_timeout); the connection was closed")
            }
            if reportsUniqueViolations, let violation = PostgreSQLUniqueViolation(error, statement: text) { throw violation }
            let storeError = Self.storeError(error, server: server, statement: text)
            if case StoreError.connectionLost? = storeError as? StoreError {
                // Closed now: SwiftNIO may not have marked it closed yet when the pool takes it back, and the
                // pool would hand the dead connection to the next piece of work.
                try? (connection.close() as EventLoopFuture<Void>).wait()
            }
            throw storeError
        }
    }

    /// A postgres-nio error as the store's.
    ///
    /// A server error that ends the session is a lost connection, not a refused statement: the server says
    /// so (FATAL or PANIC) as it closes the connection, when it shuts down (SQLSTATE 57P01 for a fast
    /// shutdown or restart, 57P02 after a crash), when an administrator terminates the backend
    /// (`pg_terminate_backend`, 57P01 too), or for a connection exception (class 08). Either way the
    /// transaction did not commit and the connection is gone, which is what callers need to know.
    static func storeError(_ error: any Error, server: String, statement: String) -> any Error {
        guard let error = error as? PSQLError else { return error }
        if error.code == .server, let info = error.serverInfo {
            let state = info[.sqlState] ?? "?", message = info[.message] ?? "\(error)"
            let severity = info[.severity] ?? info[.localizedSeverity] ?? ""
            if ["FATAL", "PANIC"].contains(severity) || state.hasPrefix("08") || state.hasPrefix("57P") {
                return StoreError.connectionLost(server: server, reason: "\(message) (SQLSTATE \(state))")
            }
            return StoreError.serverError(sqlState: state, message: message, statement: statement)
        }
        return StoreError.connectionLost(server: server, reason: "\(error.code)")
    }
}

/// Whether a statement's timeout fired: set on the event loop, read by the waiting thread.
private final class TimeoutFlag: Sendable {
    let raised = Atomic<Bool>(false)
}

/// The engine's shared code (``BatchDeleteCascade``…) runs on a PostgreSQL session as on an SQLite one.
extension PostgreSQLSession: SQLSession {
    /// The server, as its redacted URL names it.
    var location: String { server }

    /// Whether the store's schema (the session's `search_path`) has the table; PostgreSQL folds unquoted
    /// names to lower case, so the comparison ignores case.
    ///
    /// - Throws: as ``execute(_:_:)``.
    func tableExists(_ name: String) throws -> Bool {
        let found = try rows("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
                             + "AND upper(table_name) = upper(?)", [name.storeValue])
        return (found.first.flatMap { Int64.fromStoreValue($0[0]) } ?? 0) > 0
    }

    /// A statement whose values are gathered as they are bound and sent when it runs (postgres-nio prepares
    /// each query on the server as it sends it).
    func prepareWrite(_ sql: String) -> PostgreSQLPreparedWrite {
        PostgreSQLPreparedWrite(session: self, sql: sql)
    }

    /// An inserter that sends many rows a statement: one round trip per ``PostgreSQLRowInserter/rowsPerInsert``
    /// rows instead of one per object (100,000 objects took 24.7 s on loopback one INSERT at a time).
    func rowInserter(table: String, columns: [String]) -> PostgreSQLRowInserter {
        PostgreSQLRowInserter(session: self, table: table, columns: columns)
    }

    /// Runs `body` in a savepoint of the open transaction (a nested ``transaction(beginning:_:)``).
    ///
    /// - Throws: what `body` throws (after rolling the savepoint back), or the server's errors as
    ///   ``execute(_:_:)`` throws them.
    func savepoint<Outcome>(_ body: () throws -> Outcome) throws -> Outcome {
        precondition(isInTransaction, "a savepoint needs an open transaction")
        return try transaction(body)
    }
}

/// The PostgreSQL session's ``SQLPreparedWrite``: the values bound so far, sent with the statement by ``step()``.
final class PostgreSQLPreparedWrite: SQLPreparedWrite {
    private let session: PostgreSQLSession
    private let sql: String
    private var values: [StoreValue] = []

    init(session: PostgreSQLSession, sql: String) {
        self.session = session
        self.sql = sql
    }

    /// Keeps `value` for placeholder `index`.
    func bind(_ value: StoreValue, at index: Int32) {
        let position = Int(index) - 1
        if position >= values.count { values += Array(repeating: .null, count: position - values.count + 1) }
        values[position] = value
    }

    /// Sends the statement with the values bound since it last ran.
    ///
    /// - Throws: as ``PostgreSQLSession/execute(_:_:)``.
    @discardableResult
    func step() throws -> Int {
        defer { values.removeAll(keepingCapacity: true) }
        return try session.execute(sql, values)
    }
}

/// The PostgreSQL session's ``SQLRowInserter``: rows gathered into multi-row `INSERT`s. The tables have no
/// foreign-key constraints, so grouping rows by table cannot change what is accepted.
final class PostgreSQLRowInserter: SQLRowInserter {
    /// The most rows one multi-row INSERT carries (within PostgreSQL's 65,535 parameters a statement).
    static let rowsPerInsert = 500

    private let session: PostgreSQLSession
    private let table: String
    private let columns: [String]
    private let rowsPerStatement: Int
    private var pending: [StoreValue] = []
    private var pendingRows = 0

    init(session: PostgreSQLSession, table: String, columns: [String]) {
        self.session = session
        self.table = table
        self.columns = columns
        rowsPerStatement = max(1, min(Self.rowsPerInsert, 60_000 / max(columns.count, 1)))
    }

    /// Keeps the row, and sends the rows kept when there are enough for one statement.
    ///
    /// - Throws: as ``PostgreSQLSession/execute(_:_:)`` (a uniqueness violation among them).
    func insert(_ row: RowValues) throws {
        pending += row
        pendingRows += 1
        if pendingRows == rowsPerStatement { try finish() }
    }

    /// Sends the rows kept.
    ///
    /// - Throws: as ``insert(_:)``.
    func finish() throws {
        guard pendingRows > 0 else { return }
        let rowPlaceholders = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let sql = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
            + Array(repeating: rowPlaceholders, count: pendingRows).joined(separator: ", ")
        try session.execute(sql, pending)
        pending.removeAll(keepingCapacity: true)
        pendingRows = 0
    }
}
