import Foundation

/// A change set's relationship writes, written once for every store: after the rows' own updates, deletes
/// and inserts, the join rows and foreign keys the save changed, in an order that never leaves two links
/// for one pair (clears first, then removals, then additions, then the new orders and keys).
package enum RelationshipRowWriter {
    /// Writes `changes`' join-row and foreign-key changes. A join row that is already there is left as it
    /// is (`ON CONFLICT DO NOTHING`, which SQLite and PostgreSQL both spell this way).
    ///
    /// - Throws: what the session throws.
    package static func write(_ changes: StoreChangeSet, in session: some SQLSession) throws {
        for clear in changes.joinClears {
            try session.execute("DELETE FROM \(clear.table) WHERE \(clear.column) = ?", [clear.key.storeValue])
        }
        for clear in changes.foreignKeyClears {
            try session.execute("UPDATE \(clear.table) SET \(clear.column) = NULL WHERE \(clear.column) = ?", [clear.key.storeValue])
        }
        for row in changes.joinDeletes {
            try session.execute("DELETE FROM \(row.table) WHERE \(row.sourceColumn) = ? AND \(row.destinationColumn) = ?",
                                [row.source.storeValue, row.destination.storeValue])
        }
        for row in changes.joinInserts {
            try session.execute("INSERT INTO \(row.table) (\(row.sourceColumn), \(row.destinationColumn)) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                [row.source.storeValue, row.destination.storeValue])
        }
        for update in changes.joinOrderUpdates {
            try session.execute("UPDATE \(update.table) SET \(update.orderColumn) = ? WHERE \(update.sourceColumn) = ? AND \(update.destinationColumn) = ?",
                                [update.position.storeValue, update.source.storeValue, update.destination.storeValue])
        }
        for update in changes.foreignKeyUpdates {
            try session.execute("UPDATE \(update.table) SET \(update.column) = ? WHERE Z_PK = ?",
                                [update.value, update.primaryKey.storeValue])
        }
    }
}
