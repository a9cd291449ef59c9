import Foundation
import GRDB
import GRDBSQLite

/// The SQLite store's answers to a ``StoreQuery``: counts, rows, keys, each in one read.
extension SQLiteStore {
    /// Runs ``StoreQuery/countSQL``.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    package func count(of query: StoreQuery) throws -> Int {
        try read { db in try db.fetchInteger(sql: query.countSQL, arguments: query.arguments) ?? 0 }
    }

    /// Steps ``StoreQuery/rowsSQL`` in one read, readying external binary storage as rows are read (values in
    /// the row decoded, files left to be read when asked for).
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; ``ObjectGraphError/cancelled``; what `body` throws.
    package func readRows(of query: StoreQuery, cancellation: CancellationFlag?,
                          _ body: (consuming RowValues) throws -> Void) throws {
        try read { db in
            try db.fetchRowValues(sql: query.rowsSQL, arguments: query.arguments, columnCount: query.columnCount,
                                  cancellation: cancellation, external: query.externalColumns, body)
        }
    }

    /// Steps ``StoreQuery/primaryKeysSQL`` in one read.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; ``ObjectGraphError/cancelled``; what `body` throws.
    package func readPrimaryKeys(of query: StoreQuery, cancellation: CancellationFlag?, _ body: (Int64) throws -> Void) throws {
        try read { db in
            try db.stepRows(sql: query.primaryKeysSQL, arguments: query.arguments, cancellation: cancellation) { handle in
                try body(sqlite3_column_int64(handle, 0))
            }
        }
    }

    /// Steps ``StoreQuery/idsSQL`` in one read.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; ``ObjectGraphError/cancelled``; what `body` throws.
    package func readEntityKeys(of query: StoreQuery, cancellation: CancellationFlag?,
                                _ body: (_ entityNumber: Int, _ primaryKey: Int64) throws -> Void) throws {
        try read { db in
            try db.stepRows(sql: query.idsSQL, arguments: query.arguments, cancellation: cancellation) { handle in
                try body(Int(sqlite3_column_int64(handle, 0)), sqlite3_column_int64(handle, 1))
            }
        }
    }
}
