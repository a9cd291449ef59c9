import Foundation
import GRDB
import GRDBSQLite

/// Checked while rows are stepped, so a long fetch stops when asked.
package final class CancellationFlag: @unchecked Sendable {
    // @unchecked Sendable: a single atomic-enough Bool read by the SQLite progress handler; a stale read
    // only delays the stop by one handler call.
    private let lock = NSLock()
    private var cancelled = false
    private var handlers: [@Sendable () -> Void] = []
    package var isCancelled: Bool { lock.lock(); defer { lock.unlock() }; return cancelled }
    func cancel() {
        lock.lock()
        let wasCancelled = cancelled
        cancelled = true
        let pending = handlers
        handlers = []
        lock.unlock()
        if !wasCancelled { for handler in pending { handler() } }
    }
    /// Runs `handler` once when the flag is cancelled (at once if it already is); a store that stops a
    /// statement on its server (PostgreSQL) sends the cancel from here.
    package func addHandler(_ handler: @escaping @Sendable () -> Void) {
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
    ///
    /// Strings are bound with their full length (GRDB's arguments bind them as C strings, which end at the
    /// first NUL: `"admin\0x"` would be bound as `"admin"`). The statement's `MATCHES` comparisons share one
    /// ``RegularExpressionBudget``, which also watches `cancellation`.
    ///
    /// - Throws: `ObjectGraphError.cancelled` when cancelled; the ``QueryLanguageError`` a SQL function of the
    ///   query language threw (an invalid pattern, the regular-expression time limit); else GRDB's
    ///   `DatabaseError`.
    func stepRows(sql: String, arguments: [StoreValue], cancellation: CancellationFlag? = nil,
                  _ body: (SQLiteStatement) throws -> Void) throws {
        let statement = try cachedStatement(sql: sql)
        let handle = statement.sqliteStatement
        try bindFully(arguments, to: statement)
        defer { sqlite3_reset(handle) }
        if let cancellation {
            // Unretained: `cancellation` is held by this call, and the handler is removed (the `defer` below)
            // before it returns. Not a fast path: SQLite's C callback takes only a raw pointer.
            let context = Unmanaged.passUnretained(cancellation).toOpaque()
            sqlite3_progress_handler(sqliteConnection, 1000, { pointer in
                guard let pointer else { return 0 }
                return Unmanaged<CancellationFlag>.fromOpaque(pointer).takeUnretainedValue().isCancelled ? 1 : 0
            }, context)
        }
        defer { if cancellation != nil { sqlite3_progress_handler(sqliteConnection, 0, nil, nil) } }
        let budget = RegularExpressionBudget(cancellation: cancellation)
        try budget.withCurrent {
            while true {
                let code = sqlite3_step(handle)
                if code == SQLITE_ROW {
                    try body(handle)
                } else if code == SQLITE_DONE {
                    return
                } else if code == SQLITE_INTERRUPT {
                    throw ObjectGraphError.cancelled
                } else {
                    // A function of ours failed: SQLite only kept its message, the budget kept the error.
                    if let failure = budget.failure { throw failure }
                    let message = String(cString: sqlite3_errmsg(sqliteConnection))
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
                }
            }
        }
    }

    /// Binds `values` to a statement's parameters 1, 2, … with SQLite's API: strings and blobs with their full
    /// length, so a NUL inside a string is part of the value, as it is in memory.
    ///
    /// - Throws: `DatabaseError` when the count differs from the statement's parameters or SQLite refuses a value.
    func bindFully(_ values: [StoreValue], to statement: Statement) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard Int(sqlite3_bind_parameter_count(handle)) == values.count else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE,
                                message: "wrong number of statement arguments: \(values.count)", sql: statement.sql)
        }
        for (offset, value) in values.enumerated() {
            let code = bindValue(value, to: handle, at: Int32(offset + 1))
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                    message: String(cString: sqlite3_errmsg(sqliteConnection)), sql: statement.sql)
            }
        }
    }

    /// Runs a statement that returns no rows (a batch UPDATE or DELETE) with its values bound in full, under
    /// one ``RegularExpressionBudget`` like ``stepRows(sql:arguments:cancellation:_:)``.
    ///
    /// - Throws: what ``stepRows(sql:arguments:cancellation:_:)`` throws.
    func executeFully(sql: String, arguments: [StoreValue]) throws {
        try stepRows(sql: sql, arguments: arguments) { _ in }
    }

    /// The first column of the first row as an integer (a `COUNT(*)`), values bound in full; nil without a row.
    ///
    /// - Throws: what ``stepRows(sql:arguments:cancellation:_:)`` throws.
    func fetchInteger(sql: String, arguments: [StoreValue]) throws -> Int? {
        var value: Int?
        try stepRows(sql: sql, arguments: arguments) { handle in
            if value == nil { value = Int(sqlite3_column_int64(handle, 0)) }
        }
        return value
    }

    /// Reads full table rows into shared blocks, handing each row to `body` in order once its block is
    /// complete. `expectedRows`, when known, sizes the first block; `external` names the columns kept in
    /// Core Data's external binary storage form, handed over decoded.
    func fetchRowValues(sql: String, arguments: [StoreValue], columnCount: Int, expectedRows: Int? = nil,
                        cancellation: CancellationFlag? = nil, external: ExternalBinaryStorage.TableColumns? = nil,
                        _ body: (consuming RowValues) throws -> Void) throws {
        var builder = RowBlockBuilder(width: columnCount, expectedRows: expectedRows, external: external)
        try stepRows(sql: sql, arguments: arguments, cancellation: cancellation) { handle in
            try builder.appendRow(of: handle, sealingFullBlockInto: body)
        }
        try builder.sealBlock(body)
    }
}

/// SQLite's "copy the bytes now" destructor, for binding Swift strings and data whose storage moves.
// SQLITE_TRANSIENT, which C spells as the cast of -1: SQLite copies the bytes before the call returns.
// Not a fast path: the macro does not import into Swift, so it is spelled here as C spells it.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
/// A NUL byte that lives as long as the process, for binding empty strings.
// Never freed and never written after it is made, so sharing it across threads is safe. Not a fast path:
// one non-NULL pointer for every empty value, which SQLite would otherwise bind as NULL.
private nonisolated(unsafe) let emptyText: UnsafePointer<CChar> = {
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    pointer.pointee = 0
    return UnsafePointer(pointer)
}()

/// Binds one value to the 1-based parameter `index` of `handle`, strings and blobs with their length (a NUL
/// inside is kept); returns SQLite's result code.
@inline(__always)
func bindValue(_ value: StoreValue, to handle: SQLiteStatement, at index: Int32) -> Int32 {
    switch value.storage {
    case .null: return sqlite3_bind_null(handle, index)
    case .int64(let v): return sqlite3_bind_int64(handle, index, v)
    case .double(let v): return sqlite3_bind_double(handle, index, v)
    case .string(let v): return bindText(v, to: handle, at: index)
    case .blob(let v):
        return v.withUnsafeBytes { bytes in
            // An empty blob likewise needs a non-NULL pointer.
            sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(emptyText), Int32(bytes.count), transientDestructor)
        }
    }
}

/// Binds a string's UTF-8 bytes in place, with their length: no C-string copy, no strlen, no cut at a NUL.
@inline(__always)
func bindText(_ value: String, to handle: SQLiteStatement, at index: Int32) -> Int32 {
    var value = value
    return value.withUTF8 { bytes in
        // Safe: `UInt8` and `CChar` have the same size and alignment, and the rebinding lasts only for the
        // call, which copies the bytes (`transientDestructor`). Saves the C-string copy and `strlen` of GRDB's
        // binding, per string bound (`insert-save`, `update-per-object`).
        bytes.withMemoryRebound(to: CChar.self) { text in
            // An empty string still needs a non-NULL pointer, or SQLite binds NULL.
            sqlite3_bind_text(handle, index, text.baseAddress ?? emptyText, Int32(text.count), transientDestructor)
        }
    }
}

/// A cached write statement, looked up once and then bound and stepped row after row: per-row writes
/// pay neither the statement-cache lookup (a hash of the SQL text) nor argument containers.
package struct BoundWrite {
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
    package func bind(_ value: StoreValue, at index: Int32) throws {
        if case .string(let v) = value.storage { try bind(v, at: index); return }
        let code = bindValue(value, to: handle, at: index)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds an integer to the 1-based parameter `index` (no `StoreValue` on the way).
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
        let code = bindText(value, to: handle, at: index)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Binds `values` to parameters 1, 2, … in order.
    @inline(__always)
    func bind<Values: Sequence>(_ values: Values) throws where Values.Element == StoreValue {
        var index: Int32 = 1
        for value in values {
            try bind(value, at: index)
            index += 1
        }
    }

    /// Runs the statement with the values bound so far; returns the number of rows changed.
    @discardableResult
    package func step() throws -> Int {
        let code = sqlite3_step(handle)
        defer { sqlite3_reset(handle) }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
        return Int(sqlite3_changes(database.sqliteConnection))
    }

    /// Runs the statement once and returns the first column of its first result row (what a `RETURNING`
    /// clause gives), or nil when it returns none.
    func stepReturningInteger() throws -> Int64? {
        let code = sqlite3_step(handle)
        defer { sqlite3_reset(handle) }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
        return code == SQLITE_ROW ? sqlite3_column_int64(handle, 0) : nil
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
    func executeBound<Values: Sequence>(sql: String, _ values: Values) throws -> Int where Values.Element == StoreValue {
        let write = try BoundWrite(self, sql: sql)
        try write.bind(values)
        return try write.step()
    }
}
