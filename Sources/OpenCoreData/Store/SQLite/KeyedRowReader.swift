import Foundation
import GRDB
import GRDBSQLite

/// A reader connection the store keeps for loading rows by primary key (`Z_PK IN (…)`): the query every
/// batch of faults and every results-controller batch runs, twenty rows at a time.
///
/// Through GRDB's pool each such read checks a reader out, hops to its queue and runs
/// `PRAGMA schema_version` before the SELECT; here it is one prepared statement per table and key count,
/// stepped on the caller's thread. Each load is a single autocommit SELECT, so it reads the latest
/// committed state (one consistent WAL snapshot), as a pool reader does.
///
/// Used by one thread at a time: a caller that finds it busy reads through the pool instead (returns
/// nil), so concurrent contexts never wait for each other here.
final class KeyedRowReader: @unchecked Sendable {
    // @unchecked Sendable: `connection`, `statements`, `lastStatement` and `openFailed` are touched only while `lock` is held.
    private let lock = NSLock()
    private let path: String
    private let busyTimeout: TimeInterval
    private var connection: OpaquePointer?
    private var openFailed = false
    private var statements: [StatementKey: OpaquePointer] = [:]
    /// The statement used last: consecutive batches mostly share one, found without hashing the key.
    private var lastStatement: (key: StatementKey, statement: OpaquePointer)?

    private struct StatementKey: Hashable {
        let table: String
        let count: Int
    }

    /// Whether stores use it: yes unless `OCD_KEYED_READER=0` (a switch for comparing against the pool).
    static let isEnabled = ProcessInfo.processInfo.environment["OCD_KEYED_READER"] != "0"

    /// Prepared statements kept at most (one per table and key count; batches mostly share one count).
    private static let statementLimit = 32

    init(path: String, busyTimeout: TimeInterval) {
        self.path = path
        self.busyTimeout = busyTimeout
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        if let connection { sqlite3_close_v2(connection) }
    }

    /// Steps the rows of `keys` (at most 500) in `table` into shared blocks, handing each to `body`. Nil when the connection
    /// is in use by another thread or cannot be opened: the caller reads through the pool then.
    func read(table: StoreSchema.Table, keys: ArraySlice<Int64>, external: ExternalBinaryStorage.TableColumns? = nil,
              _ body: (consuming RowValues) throws -> Void) throws -> Bool? {
        guard !keys.isEmpty, lock.try() else { return nil }
        defer { lock.unlock() }
        guard let statement = try statement(table: table, count: keys.count) else { return nil }
        defer {
            sqlite3_reset(statement)
        }
        var index: Int32 = 1
        for key in keys {
            sqlite3_bind_int64(statement, index, key)
            index += 1
        }
        var builder = RowBlockBuilder(width: table.columns.count, expectedRows: keys.count, external: external)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW {
                try builder.appendRow(of: statement, sealingFullBlockInto: body)
            } else if code == SQLITE_DONE {
                try builder.sealBlock(body)
                return true
            } else {
                throw error(code: code, sql: String(cString: sqlite3_sql(statement)))
            }
        }
    }

    private func statement(table: StoreSchema.Table, count: Int) throws -> OpaquePointer? {
        if let lastStatement, lastStatement.key.count == count, lastStatement.key.table == table.name {
            return lastStatement.statement
        }
        let key = StatementKey(table: table.name, count: count)
        if let cached = statements[key] {
            lastStatement = (key, cached)
            return cached
        }
        guard let connection = try open() else { return nil }
        if statements.count >= Self.statementLimit {
            for statement in statements.values { sqlite3_finalize(statement) }
            statements.removeAll()
            lastStatement = nil
        }
        let columns = table.columns.map { "t0." + $0.name }.joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: count).joined(separator: ",")
        let sql = "SELECT \(columns) FROM \(table.name) t0 WHERE t0.Z_PK IN (\(placeholders))"
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw error(code: code, sql: sql)
        }
        statements[key] = statement
        lastStatement = (key, statement)
        return statement
    }

    private func open() throws -> OpaquePointer? {
        if let connection { return connection }
        if openFailed { return nil }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            // The pool still reads this store; only the shortcut is lost.
            sqlite3_close_v2(handle)
            openFailed = true
            return nil
        }
        sqlite3_busy_timeout(handle, Int32(max(0, min(busyTimeout * 1000, Double(Int32.max)))))
        connection = handle
        return handle
    }

    private func error(code: Int32, sql: String) -> DatabaseError {
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
    }
}
