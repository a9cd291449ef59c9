import Foundation
import GRDB
import GRDBSQLite

/// The row a query is on while the store steps it, read column by column (0-based) without copying the
/// row out: what the layers above the store read per row instead of SQLite's statement. Valid only inside
/// the closure it is handed to.
///
/// A concrete struct over the statement, not a protocol: it is read once per column of every row, and
/// each read compiles to the one SQLite call it wraps.
struct SteppedRow {
    private let statement: SQLiteStatement

    fileprivate init(_ statement: SQLiteStatement) { self.statement = statement }

    /// The column's value as stored.
    @inline(__always)
    func value(at index: Int32) -> DatabaseValue {
        DatabaseValue(sqliteStatement: statement, index: index)
    }

    /// The column as an integer (SQLite's conversion: 0 for NULL).
    @inline(__always)
    func integer(at index: Int32) -> Int64 {
        sqlite3_column_int64(statement, index)
    }

    /// The column's integer when it is stored as one, else nil.
    @inline(__always)
    func storedInteger(at index: Int32) -> Int64? {
        sqlite3_column_type(statement, index) == SQLITE_INTEGER ? sqlite3_column_int64(statement, index) : nil
    }

    /// The column's real when it is stored as one, else nil.
    @inline(__always)
    func storedReal(at index: Int32) -> Double? {
        sqlite3_column_type(statement, index) == SQLITE_FLOAT ? sqlite3_column_double(statement, index) : nil
    }
}

extension Database {
    /// Steps a query as ``stepRows(sql:arguments:cancellation:_:)`` does, handing each row to `body` as a
    /// ``SteppedRow``.
    ///
    /// - Throws: what ``stepRows(sql:arguments:cancellation:_:)`` throws, and what `body` throws.
    func forEachRow(sql: String, arguments: [DatabaseValue], cancellation: CancellationFlag? = nil,
                    _ body: (SteppedRow) throws -> Void) throws {
        try stepRows(sql: sql, arguments: arguments, cancellation: cancellation) { try body(SteppedRow($0)) }
    }
}

extension PersistentStore {
    /// Runs a dictionary-result query (``PredicateSQLCompiler/CompiledDictionaryQuery``) in one read,
    /// handing each result row to `body` in order.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; what `body` throws.
    func readRows(of query: PredicateSQLCompiler.CompiledDictionaryQuery, _ body: (SteppedRow) throws -> Void) throws {
        try read { db in try db.forEachRow(sql: query.sql, arguments: query.arguments, body) }
    }
}
