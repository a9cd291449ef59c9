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
    static func all(in db: Database) throws -> [(name: String, seen: Int64, timestamp: Double)] {
        guard try exists(in: db) else { return [] }
        return try Row.fetchAll(db, sql: allSQL).map { ($0[0], $0[1], $0[2]) }
    }
}
