import Foundation
import GRDB
import GRDBSQLite

/// Checked while rows are stepped, so a long fetch stops when asked.
final class CancellationFlag: @unchecked Sendable {
    // @unchecked Sendable: a single atomic-enough Bool read by the SQLite progress handler; a stale read
    // only delays the stop by one handler call.
    private let lock = NSLock()
    private var cancelled = false
    private var handlers: [@Sendable () -> Void] = []
    var isCancelled: Bool { lock.lock(); defer { lock.unlock() }; return cancelled }
    func cancel() {
        lock.lock()
        let wasCancelled = cancelled
        cancelled = true
        let pending = handlers
        handlers = []
        lock.unlock()
        if !wasCancelled { for handler in pending { handler() } }
    }
    func addHandler(_ handler: @escaping @Sendable () -> Void) {
        lock.lock()
        if cancelled { lock.unlock(); handler(); return }
        handlers.append(handler)
        lock.unlock()
    }
}

extension Database {
    /// Steps a query with SQLite's own API (no intermediate row objects), handing each row's first
    /// `columnCount` values to `body`. With a cancellation flag, SQLite is interrupted from its progress
    /// handler, so even a long sort stops at once.
    func stepRows(sql: String, arguments: [DatabaseValue], cancellation: CancellationFlag? = nil,
                  _ body: (SQLiteStatement) throws -> Void) throws {
        let statement = try cachedStatement(sql: sql)
        try statement.setArguments(StatementArguments(arguments))
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        if let cancellation {
            let context = Unmanaged.passUnretained(cancellation).toOpaque()
            sqlite3_progress_handler(sqliteConnection, 1000, { pointer in
                guard let pointer else { return 0 }
                return Unmanaged<CancellationFlag>.fromOpaque(pointer).takeUnretainedValue().isCancelled ? 1 : 0
            }, context)
        }
        defer { if cancellation != nil { sqlite3_progress_handler(sqliteConnection, 0, nil, nil) } }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_ROW {
                try body(handle)
            } else if code == SQLITE_DONE {
                return
            } else if code == SQLITE_INTERRUPT {
                throw ObjectGraphError.cancelled
            } else {
                let message = String(cString: sqlite3_errmsg(sqliteConnection))
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
            }
        }
    }

    /// Reads full table rows into shared blocks, handing each row to `body` in order once its block is
    /// complete. `expectedRows`, when known, sizes the first block.
    func fetchRowValues(sql: String, arguments: [DatabaseValue], columnCount: Int, expectedRows: Int? = nil,
                        cancellation: CancellationFlag? = nil,
                        _ body: (consuming RowValues) throws -> Void) throws {
        var builder = RowBlockBuilder(width: columnCount, expectedRows: expectedRows)
        try stepRows(sql: sql, arguments: arguments, cancellation: cancellation) { handle in
            try builder.appendRow(of: handle, sealingFullBlockInto: body)
        }
        try builder.sealBlock(body)
    }
}

/// SQLite's "copy the bytes now" destructor, for binding Swift strings and data whose storage moves.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// A NUL byte that lives as long as the process, for binding empty strings.
private nonisolated(unsafe) let emptyText: UnsafePointer<CChar> = {
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    pointer.pointee = 0
    return UnsafePointer(pointer)
}()

/// A cached write statement, looked up once and then bound and stepped row after row: per-row writes
/// pay neither the statement-cache lookup (a hash of the SQL text) nor argument containers.
struct BoundWrite {
    private let statement: Statement
    private let database: Database
    private var handle: SQLiteStatement { statement.sqliteStatement }

    init(_ db: Database, sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        database = db
        sqlite3_reset(statement.sqliteStatement)
        sqlite3_clear_bindings(statement.sqliteStatement)
    }

    /// Binds one value to the 1-based parameter `index`.
    @inline(__always)
    func bind(_ value: DatabaseValue, at index: Int32) throws {
        let code: Int32
        switch value.storage {
        case .null: code = sqlite3_bind_null(handle, index)
        case .int64(let v): code = sqlite3_bind_int64(handle, index, v)
        case .double(let v): code = sqlite3_bind_double(handle, index, v)
        case .string(let v): try bind(v, at: index); return
        case .blob(let v):
            code = v.withUnsafeBytes { bytes in
                // An empty blob likewise needs a non-NULL pointer.
                sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(emptyText), Int32(bytes.count), transientDestructor)
            }
        }
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds an integer to the 1-based parameter `index` (no `DatabaseValue` on the way).
    @inline(__always)
    func bind(_ value: Int64, at index: Int32) throws {
        let code = sqlite3_bind_int64(handle, index, value)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds a double to the 1-based parameter `index`.
    @inline(__always)
    func bind(_ value: Double, at index: Int32) throws {
        let code = sqlite3_bind_double(handle, index, value)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds a string's UTF-8 bytes in place, with their length: no C-string copy, no strlen.
    @inline(__always)
    func bind(_ value: String, at index: Int32) throws {
        var value = value
        let code = value.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { text in
                // An empty string still needs a non-NULL pointer, or SQLite binds NULL.
                sqlite3_bind_text(handle, index, text.baseAddress ?? emptyText, Int32(text.count), transientDestructor)
            }
        }
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds `values` to parameters 1, 2, … in order.
    @inline(__always)
    func bind<Values: Sequence>(_ values: Values) throws where Values.Element == DatabaseValue {
        var index: Int32 = 1
        for value in values {
            try bind(value, at: index)
            index += 1
        }
    }

    /// Runs the statement with the values bound so far; returns the number of rows changed.
    @discardableResult
    func step() throws -> Int {
        let code = sqlite3_step(handle)
        defer { sqlite3_reset(handle) }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
        return Int(sqlite3_changes(database.sqliteConnection))
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(database.sqliteConnection)),
                      sql: statement.sql)
    }
}

extension Database {
    /// Runs a (cached) statement once with values bound straight through SQLite's API, skipping the
    /// argument containers that dominate per-row writes. Returns the number of rows changed. For many
    /// rows with the same SQL, keep a ``BoundWrite`` instead.
    @discardableResult
    func executeBound<Values: Sequence>(sql: String, _ values: Values) throws -> Int where Values.Element == DatabaseValue {
        let write = try BoundWrite(self, sql: sql)
        try write.bind(values)
        return try write.step()
    }
}
