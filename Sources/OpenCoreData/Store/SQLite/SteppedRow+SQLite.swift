import Foundation
import GRDB

extension Database {
    /// Steps a query as ``stepRows(sql:arguments:cancellation:_:)`` does, handing each row to `body` as a
    /// ``SteppedRow``.
    ///
    /// - Throws: what ``stepRows(sql:arguments:cancellation:_:)`` throws, and what `body` throws.
    func forEachRow(sql: String, arguments: [StoreValue], cancellation: CancellationFlag? = nil,
                    _ body: (SteppedRow) throws -> Void) throws {
        try stepRows(sql: sql, arguments: arguments, cancellation: cancellation) { try body(SteppedRow(sqliteStatement: $0)) }
    }
}

extension SQLiteStore {
    /// Runs a dictionary-result query (``PredicateSQLCompiler/CompiledDictionaryQuery``) in one read,
    /// handing each result row to `body` in order.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; what `body` throws.
    package func readRows(of query: PredicateSQLCompiler.CompiledDictionaryQuery, _ body: (SteppedRow) throws -> Void) throws {
        try read { db in try db.forEachRow(sql: query.sql, arguments: query.arguments, body) }
    }
}
