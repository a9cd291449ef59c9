import Foundation

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

    /// Whether the store has the registry (it is made the first time a reader registers).
    ///
    /// - Throws: what the session throws.
    package static func exists(in session: some SQLSession) throws -> Bool {
        try session.tableExists(table)
    }

    /// Registers `name`, or moves its mark, to "has seen every transaction through `seen`". The table
    /// must exist.
    ///
    /// - Throws: what the session throws.
    package static func register(_ name: String, seen: Int64, in session: some SQLSession) throws {
        try session.execute(registerSQL, [name.storeValue, seen.storeValue, Date().timeIntervalSinceReferenceDate.storeValue])
    }

    /// Removes `name`; returns whether it was registered.
    ///
    /// - Throws: what the session throws.
    package static func unregister(_ name: String, in session: some SQLSession) throws -> Bool {
        guard try exists(in: session) else { return false }
        return try session.execute(unregisterSQL, [name.storeValue]) > 0
    }

    /// Every registered reader: name, last transaction seen, when it last said so; by name. Empty when the
    /// store has no registry.
    ///
    /// - Throws: what the session throws; ``StoreError/corrupt(path:reason:)`` naming the row and column when
    ///   another program wrote a value of the wrong type or NULL there (a reader left out would let pruning
    ///   delete what it has not read).
    package static func all(in session: some SQLSession) throws -> [(name: String, seen: Int64, timestamp: Double)] {
        guard try exists(in: session) else { return [] }
        return try session.rows(allSQL, []).enumerated().map { position, row in
            func refuse(_ column: Int, _ name: String, _ expected: String) -> StoreError {
                StoreError.corrupt(path: session.location,
                                   reason: "\(table) row \(position + 1): \(name) is \(row[column]), not \(expected)")
            }
            guard let name = String.fromStoreValue(row[0]) else { throw refuse(0, "Z_NAME", "a name") }
            guard let seen = Int64.fromStoreValue(row[1]) else { throw refuse(1, "Z_SEEN", "a transaction number") }
            guard let timestamp = Double.fromStoreValue(row[2]) else { throw refuse(2, "Z_TIMESTAMP", "a time") }
            return (name, seen, timestamp)
        }
    }
}
