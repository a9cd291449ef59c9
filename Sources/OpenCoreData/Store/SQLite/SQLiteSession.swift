import Foundation
import GRDB
import GRDBSQLite

/// The SQLite store's ``SQLSession``: one GRDB connection inside the transaction the store opened, with
/// values bound to their full length and statements taken from the connection's cache.
struct SQLiteSession: SQLSession {
    /// The connection, valid for the duration of the store's `read` or `write` call that lent it.
    let db: Database

    /// The database file's path (the connection's label for one with no file, such as an in-memory store).
    var location: String {
        if let name = sqlite3_db_filename(db.sqliteConnection, "main"), name.pointee != 0 { return String(cString: name) }
        return db.description
    }

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

    /// Whether the file's `sqlite_master` lists the table, read now: GRDB's `tableExists` answers from a
    /// schema cache that can miss a table another connection made since (a reader registry made by another
    /// process's registration, which a prune must see).
    ///
    /// - Throws: GRDB's `DatabaseError` when SQLite cannot read its schema.
    func tableExists(_ name: String) throws -> Bool {
        try db.fetchInteger(sql: "SELECT COUNT(*) FROM main.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                            arguments: [name.storeValue]) ?? 0 > 0
    }

    /// A statement from the connection's cache, bound straight through SQLite's API.
    ///
    /// - Throws: GRDB's `DatabaseError` when SQLite cannot prepare it.
    func prepareWrite(_ sql: String) throws -> BoundWrite {
        try BoundWrite(db, sql: sql)
    }

    /// An inserter that steps each row through one cached statement as it comes: a local file gains
    /// nothing from multi-row statements, and nothing has to be kept.
    ///
    /// - Throws: GRDB's `DatabaseError` when SQLite cannot prepare the statement.
    func rowInserter(table: String, columns: [String]) throws -> SQLiteRowInserter {
        SQLiteRowInserter(write: try BoundWrite(db, sql: SQLiteRowInserter.insertSQL(table: table, columns: columns)))
    }

    /// Runs `body` in a GRDB savepoint.
    ///
    /// - Throws: what `body` throws (after rolling the savepoint back), or GRDB's `DatabaseError`.
    func savepoint<Outcome>(_ body: () throws -> Outcome) throws -> Outcome {
        var outcome: Outcome?
        try db.inSavepoint {
            outcome = try body()
            return .commit
        }
        return outcome!
    }
}

extension BoundWrite: SQLPreparedWrite {}

/// The SQLite session's ``SQLRowInserter``: one cached `INSERT`, bound and stepped per row.
struct SQLiteRowInserter: SQLRowInserter {
    let write: BoundWrite

    /// `INSERT INTO table (columns) VALUES (?, …)`: one row in `columns`' order.
    static func insertSQL(table: String, columns: [String]) -> String {
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
    }

    /// Binds and steps the row at once.
    ///
    /// - Throws: GRDB's `DatabaseError` when SQLite refuses the row (a uniqueness constraint among others).
    @inline(__always)
    func insert(_ row: RowValues) throws {
        try write.bind(row)
        try write.step()
    }

    /// Nothing is left to write.
    func finish() throws {}
}

