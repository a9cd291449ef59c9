import Foundation

/// What a commit tells the history about itself: who made it, and the objects it inserted and updated.
/// On SQLite deletes are not listed: the store's delete triggers see every one, cascades and batch deletes
/// included; PostgreSQL lists them with their tombstones.
package struct HistoryEntry: Sendable {
    /// One object inserted or updated.
    package struct Change: Sendable {
        package var type: PersistentHistoryChangeType
        package var entityNumber: Int
        package var primaryKey: Int64
        /// For an update: the changed properties' slots in the entity's `allProperties` (the bits of
        /// `ZCOLUMNS`).
        package var updatedSlots: [Int] = []
        /// For a delete, where the store reads them as it deletes (PostgreSQL): the values of the entity's
        /// preserved attributes, in tombstone-column order (``HistoryTables/preservedColumns(of:)``).
        package var tombstone: [StoreValue] = []

        package init(type: PersistentHistoryChangeType, entityNumber: Int, primaryKey: Int64, updatedSlots: [Int] = [],
                     tombstone: [StoreValue] = []) {
            self.type = type
            self.entityNumber = entityNumber
            self.primaryKey = primaryKey
            self.updatedSlots = updatedSlots
            self.tombstone = tombstone
        }
    }

    package var author: String?
    package var contextName: String?
    package var changes: [Change] = []

    package init(author: String? = nil, contextName: String? = nil, changes: [Change] = []) {
        self.author = author
        self.contextName = contextName
        self.changes = changes
    }
}

extension HistoryEntry {
    /// The program named in every transaction this process records (`ZBUNDLEIDTS`).
    package static let processName = ProcessInfo.processInfo.processName
    /// The process named in every transaction this process records (`ZPROCESSIDTS`).
    package static let processID = String(ProcessInfo.processInfo.processIdentifier)

    /// `ZCOLUMNS`: bit `slot` set for each changed property (byte slot / 8, bit slot % 8).
    package static func bitmap(_ slots: [Int]) -> Data? {
        guard let highest = slots.max() else { return nil }
        var bytes = [UInt8](repeating: 0, count: highest / 8 + 1)
        for slot in slots where slot >= 0 { bytes[slot / 8] |= 1 << UInt8(slot % 8) }
        return Data(bytes)
    }

    /// The slots a `ZCOLUMNS` bitmap names.
    package static func slots(in bitmap: Data) -> [Int] {
        var slots: [Int] = []
        for (index, byte) in bitmap.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 { slots.append(index * 8 + bit) }
        }
        return slots
    }
}
