import Foundation
import OpenCoreData

extension PostgreSQLStore {
    /// Reserves `count` consecutive primary keys for objects stored in `root`'s table; returns the first.
    ///
    /// Keys come from blocks this process reserved in `Z_PRIMARYKEY`: one `UPDATE … RETURNING` in a
    /// transaction of its own takes the entity's row lock just long enough to move `Z_MAX` on by a whole
    /// block, so any number of processes reserve disjoint blocks and never collide, and a save holds no key
    /// lock while it writes. Keys of a block a process never used are skipped (gaps, as Core Data allows).
    ///
    /// - Throws: ``StoreError/primaryKeysExhausted(path:entity:maximum:)`` when the keys would pass 2^63 - 1;
    ///   ``StoreError/corrupt(path:reason:)`` when `Z_PRIMARYKEY` has no row for `root`; the connection's
    ///   errors (``StoreError``).
    package func reservePrimaryKeys(root: EntityDescription, count: Int) throws -> Int64 {
        precondition(count > 0, "reserve at least one key")
        keyLock.lock()
        if let block = takeFromBlock(root: root.entityNumber, count: count) {
            keyLock.unlock()
            return block
        }
        keyLock.unlock()
        let reserved = max(count, keyBlockSize)
        let server = configuration.redactedURL
        let rows: [[StoreValue]]
        do {
            rows = try pool.withSession { session in
                try session.rows("UPDATE Z_PRIMARYKEY SET Z_MAX = COALESCE(Z_MAX, 0) + ? WHERE Z_ENT = ? RETURNING Z_MAX",
                                 [Int64(reserved).storeValue, Int64(root.entityNumber).storeValue])
            }
        } catch StoreError.serverError(let state, _, _) where state == "22003" {
            // numeric_value_out_of_range: Z_MAX + reserved passed 2^63 - 1; nothing was written.
            throw StoreError.primaryKeysExhausted(path: server, entity: root.name, maximum: "near 2^63 - 1")
        }
        guard let end = rows.first.flatMap({ Int64.fromStoreValue($0[0]) }) else {
            throw StoreError.corrupt(path: server, reason: "Z_PRIMARYKEY has no row for entity \(root.name)")
        }
        let first = end - Int64(reserved) + 1
        keyLock.lock()
        defer { keyLock.unlock() }
        // What is left of this block serves the next reservations; an older remainder is dropped.
        if reserved > count { keyBlocks[root.entityNumber] = (first + Int64(count), end + 1) }
        return first
    }

    /// `count` keys from the block already reserved for `root`, when it has that many left. Called under `keyLock`.
    private func takeFromBlock(root: Int, count: Int) -> Int64? {
        guard let block = keyBlocks[root], block.end - block.next >= Int64(count) else { return nil }
        keyBlocks[root] = (block.next + Int64(count), block.end)
        return block.next
    }
}
