import Foundation
import GRDB

/// The rows a store file's bookkeeping tables hold, read through a read-only connection that changes
/// nothing (``ReadOnlyStoreFile``): what the backend-neutral readers of entity numbers, the model cache and
/// the metadata parse.
extension SQLiteStore {
    /// The `Z_ENT, Z_NAME` rows of the store file's `Z_PRIMARYKEY` below Core Data's own entity numbers, in
    /// number order.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is missing, cannot be opened as SQLite
    ///   or has no `Z_PRIMARYKEY`.
    static func primaryKeyRows(ofStoreAt path: String) throws -> [[StoreValue]] {
        try ReadOnlyStoreFile.read(path) { db in
            guard try db.tableExists("Z_PRIMARYKEY") else {
                throw StoreError.notAStore(path: path, reason: "it has no Z_PRIMARYKEY table")
            }
            return try SQLiteSession(db: db).rows("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < ? ORDER BY Z_ENT",
                                                  [HistoryTables.firstReservedEntityNumber.storeValue])
        }
    }

    /// The store file's `Z_MODELCACHE.Z_CONTENT` as stored; nil when it has no model cache.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is missing or not SQLite.
    static func modelCacheCell(ofStoreAt path: String) throws -> StoreValue? {
        try ReadOnlyStoreFile.read(path) { db in
            guard try db.tableExists("Z_MODELCACHE") else { return nil }
            return try StoreValue.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")
        }
    }
}

extension StoreMetadata {
    /// Reads the metadata of the store file at `path` through a read-only connection that changes nothing.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is missing or not an SQLite
    ///   store, ``StoreError/corrupt(path:reason:)`` when `Z_METADATA` has no readable row.
    static func read(storeAt path: String) throws -> StoreMetadata {
        try ReadOnlyStoreFile.read(path) { db in try read(db, path: path) }
    }

    /// Reads the metadata row through an open connection.
    static func read(_ db: Database, path: String) throws -> StoreMetadata {
        guard try db.tableExists("Z_METADATA") else {
            throw StoreError.notAStore(path: path, reason: "it has no Z_METADATA table")
        }
        guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1"),
              let plist = row[1] as Data? else {
            throw StoreError.corrupt(path: path, reason: "Z_METADATA has no row with a property list")
        }
        return try StoreMetadata(plistData: plist, rowUUID: row[0], storePath: path)
    }
}
