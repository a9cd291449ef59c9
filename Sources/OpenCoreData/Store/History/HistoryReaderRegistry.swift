import Foundation
import GRDB

/// The store's registry of history readers (docs/HISTORY.md): one row per reader that asked pruning to
/// keep what it has not read, with the last transaction it has seen. Our own table, not Core Data's: on
/// SQLite it is made the first time a reader registers on a store opened with history tracking, never
/// otherwise, and Core Data ignores it (its `Z_` name is one no entity table can have). The PostgreSQL
/// store lays out the same table, and runs the same statements (``registerSQL``, ``unregisterSQL``,
/// ``allSQL``).
package enum HistoryReaderRegistry {
    package static let table = "Z_OCDHISTORYREADER"
    /// Longest reader name accepted (names are labels, not data).
    static let maximumNameLength = 256

    /// Registers a reader or moves its mark; values: name, last transaction seen, seconds since the
    /// reference date.
    package static let registerSQL = """
        INSERT INTO Z_OCDHISTORYREADER (Z_NAME, Z_SEEN, Z_TIMESTAMP) VALUES (?, ?, ?)
        ON CONFLICT (Z_NAME) DO UPDATE SET Z_SEEN = excluded.Z_SEEN, Z_TIMESTAMP = excluded.Z_TIMESTAMP
        """
    /// Removes a reader; value: its name.
    package static let unregisterSQL = "DELETE FROM Z_OCDHISTORYREADER WHERE Z_NAME = ?"
    /// Every reader: name, last transaction seen, when it last said so; by name.
    package static let allSQL = "SELECT Z_NAME, Z_SEEN, Z_TIMESTAMP FROM Z_OCDHISTORYREADER ORDER BY Z_NAME"

    /// Creates the table where missing.
    static func create(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS Z_OCDHISTORYREADER (Z_NAME VARCHAR PRIMARY KEY NOT NULL,
                Z_SEEN INTEGER NOT NULL, Z_TIMESTAMP FLOAT NOT NULL)
            """)
    }

    static func exists(in db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                         arguments: [table]) == 1
    }

    /// Registers `name`, or moves its mark, to "has seen every transaction through `seen`".
    static func register(_ name: String, seen: Int64, in db: Database) throws {
        try create(in: db)
        try db.execute(sql: registerSQL, arguments: [name, seen, Date().timeIntervalSinceReferenceDate])
    }

    /// Removes `name`; returns whether it was registered.
    static func unregister(_ name: String, in db: Database) throws -> Bool {
        guard try exists(in: db) else { return false }
        try db.execute(sql: unregisterSQL, arguments: [name])
        return db.changesCount > 0
    }

    /// Every registered reader: name, last transaction seen, when it last said so; by name.
    ///
    /// - Throws: `DatabaseError` `SQLITE_CORRUPT` (a `StoreError.corrupt` once the store maps it) naming the
    ///   row and column when another program wrote a value of the wrong type or NULL there.
    static func all(in db: Database) throws -> [(name: String, seen: Int64, timestamp: Double)] {
        guard try exists(in: db) else { return [] }
        return try Row.fetchAll(db, sql: allSQL).enumerated().map { position, row in
            func refuse(_ column: String, _ expected: String) -> DatabaseError {
                DatabaseError(resultCode: .SQLITE_CORRUPT,
                              message: "\(table) row \(position + 1): \(column) is \(row[column] as StoreValue), not \(expected)")
            }
            guard let name = String.fromStoreValue(row[0]) else { throw refuse("Z_NAME", "a name") }
            guard let seen = Int64.fromStoreValue(row[1]) else { throw refuse("Z_SEEN", "a transaction number") }
            guard let timestamp = Double.fromStoreValue(row[2]) else { throw refuse("Z_TIMESTAMP", "a time") }
            return (name, seen, timestamp)
        }
    }
}
