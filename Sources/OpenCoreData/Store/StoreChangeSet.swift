import Foundation

/// Everything one save writes, in store terms: rows to insert, update and delete, join rows, and
/// foreign keys on other tables. Built by the context, written by the store in one transaction.
package struct StoreChangeSet {
    package struct Insert {
        package var id: ManagedObjectID
        package var table: String
        package var row: RowValues
    }

    package struct Update {
        package var id: ManagedObjectID
        package var table: String
        package var expectedVersion: Int64
        /// Column index in the table → new value.
        package var values: [(column: Int, value: StoreValue)]
        /// Skip the version check (the overwrite merge policy).
        package var force = false
    }

    package struct Delete {
        package var id: ManagedObjectID
        package var table: String
        package var expectedVersion: Int64
    }

    package struct JoinRow: Hashable {
        package var table: String
        package var sourceColumn: String
        package var destinationColumn: String
        package var source: Int64
        package var destination: Int64
    }

    /// The position of a destination in an ordered many-to-many relationship, kept in its join row.
    package struct JoinOrderUpdate {
        package var table: String
        package var orderColumn: String
        package var sourceColumn: String
        package var destinationColumn: String
        package var source: Int64
        package var destination: Int64
        package var position: Int64
    }

    /// A foreign key or order column on another object's row (hidden to-many keys, ordered positions).
    package struct ForeignKeyUpdate {
        package var table: String
        package var column: String
        package var primaryKey: Int64
        package var value: StoreValue
    }

    package var inserts: [Insert] = []
    package var updates: [Update] = []
    package var deletes: [Delete] = []
    package var joinInserts: Set<JoinRow> = []
    package var joinDeletes: Set<JoinRow> = []
    /// Written after the join rows are inserted.
    package var joinOrderUpdates: [JoinOrderUpdate] = []
    /// Join tables to clear for a deleted object: (table, column, key).
    package var joinClears: [(table: String, column: String, key: Int64)] = []
    package var foreignKeyUpdates: [ForeignKeyUpdate] = []
    /// Hidden foreign keys to clear when their owner is deleted: (table, column, owner key).
    package var foreignKeyClears: [(table: String, column: String, key: Int64)] = []
}

/// A row whose version moved on in the store since the context read it.
package struct StoreConflict: Error {
    package var id: ManagedObjectID
    package var expectedVersion: Int64
    /// The row in the store now; nil when it was deleted.
    package var currentRow: RowValues?

    package init(id: ManagedObjectID, expectedVersion: Int64, currentRow: RowValues?) {
        self.id = id
        self.expectedVersion = expectedVersion
        self.currentRow = currentRow
    }
}

package struct StoreConflicts: Error {
    package var conflicts: [StoreConflict]

    package init(conflicts: [StoreConflict]) { self.conflicts = conflicts }
}
