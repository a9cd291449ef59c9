import Foundation
import GRDB
import GRDBSQLite

/// The SQLite store's ``SQLSession``: one GRDB connection inside the transaction the store opened, with
/// values bound to their full length and statements taken from the connection's cache.
struct SQLiteSession: SQLSession {
    /// The connection, valid for the duration of the store's `read` or `write` call that lent it.
    let db: Database

    /// The connection's description (GRDB names it after the store's file).
    var location: String { db.description }

    /// Runs one statement and returns SQLite's count of rows it changed.
    ///
    /// - Throws: GRDB's `DatabaseError` when SQLite refuses the statement (the store reports it as a ``StoreError``).
    @discardableResult
    func execute(_ sql: String, _ arguments: [StoreValue]) throws -> Int {
        try db.executeFully(sql: sql, arguments: arguments)
        return db.changesCount
    }

    /// Runs one query and returns its rows, each column read straight from the statement.
    ///
    /// - Throws: as ``execute(_:_:)``.
    func rows(_ sql: String, _ arguments: [StoreValue]) throws -> [[StoreValue]] {
        var rows: [[StoreValue]] = []
        try db.stepRows(sql: sql, arguments: arguments) { handle in
            let width = sqlite3_column_count(handle)
            var row: [StoreValue] = []
            row.reserveCapacity(Int(width))
            for column in 0..<width { row.append(StoreValue(sqliteStatement: handle, index: column)) }
            rows.append(row)
        }
        return rows
    }
}
