import Foundation
import GRDB

/// The store's metadata as Core Data hands it to apps: the property list of `Z_METADATA` as a dictionary
/// (`NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes`, …, and the app's own keys).
extension StoreMetadata {
    /// The keys whose values the library keeps: an app's metadata may repeat them, not change them.
    static let libraryKeys: Set<String> = [Key.storeType, Key.storeUUID, Key.versionHashes, Key.versionHashesVersion,
                                           Key.versionIdentifiers]

    /// The metadata of the store at `path` as a dictionary, read without changing the file (committed
    /// changes in its write-ahead log included).
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` for a missing file or one without `Z_METADATA`,
    ///   ``StoreError/corrupt(path:reason:)`` for metadata that is not Core Data's.
    static func dictionary(storeAt path: String) throws -> [String: Any] {
        try ReadOnlyStoreFile.read(path) { db in try dictionary(db, path: path) }
    }

    /// The metadata row's property list as a dictionary, checked as ``read(_:path:)`` checks it.
    static func dictionary(_ db: Database, path: String) throws -> [String: Any] {
        _ = try read(db, path: path)
        let plist = try Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1") ?? Data()
        guard let dictionary = try? PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any] else {
            throw StoreError.corrupt(path: path, reason: "metadata is not a property list dictionary")
        }
        return dictionary
    }
}

extension SQLiteStore {
    /// The store's metadata as a dictionary (Core Data's `metadata`).
    ///
    /// - Throws: ``StoreError`` when the metadata row cannot be read.
    package func metadataDictionary() throws -> [String: Any] {
        try read { db in try StoreMetadata.dictionary(db, path: displayPath) }
    }

    /// Writes `metadata` as the store's metadata at once: the app's keys as given, the library's as they are.
    ///
    /// - Throws: ``ObjectGraphError/libraryMetadataKey(_:)`` when `metadata` changes a key the library keeps
    ///   (``StoreMetadata/libraryKeys``); ``ObjectGraphError/invalidStoreMetadata(reason:)`` when it holds a
    ///   value a property list cannot;
    ///   ``StoreError/readOnly(path:)`` for a read-only store, ``StoreError`` when SQLite refuses.
    package func setMetadataDictionary(_ metadata: [String: Any]) throws {
        try write { db in
            let data = try StoreMetadata.propertyList(replacingAppKeysOf: StoreMetadata.dictionary(db, path: displayPath),
                                                      with: metadata)
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [data])
        }
    }
}

extension StoreMetadata {
    /// The property list of `current` with the app's keys replaced by those of `metadata`: the library's keys
    /// as they are (`metadata` may repeat them, unchanged), keys `metadata` leaves out removed, as Core Data
    /// replaces the whole dictionary.
    ///
    /// - Throws: ``ObjectGraphError/libraryMetadataKey(_:)`` when `metadata` changes a key the library keeps
    ///   (named) or holds a value a property list cannot.
    package static func propertyList(replacingAppKeysOf current: [String: Any], with metadata: [String: Any]) throws -> Data {
        var merged = current
        for (key, value) in metadata {
            if StoreMetadata.libraryKeys.contains(key) {
                guard let kept = merged[key], Self.samePropertyListValue(kept, value) else {
                    throw ObjectGraphError.libraryMetadataKey(key)
                }
                continue
            }
            merged[key] = value
        }
        // Keys the app left out are removed, as Core Data replaces the whole dictionary; the library's stay.
        for key in merged.keys where !StoreMetadata.libraryKeys.contains(key) && metadata[key] == nil
            && !StoreMetadata.Key.written.contains(key) {
            merged[key] = nil
        }
        do {
            return try PropertyListSerialization.data(fromPropertyList: merged, format: .binary, options: 0)
        } catch {
            throw ObjectGraphError.invalidStoreMetadata(reason: "\(error)")
        }
    }

    /// Whether two property list values (strings, data, numbers, booleans, arrays, dictionaries) are equal.
    private static func samePropertyListValue(_ first: Any, _ second: Any) -> Bool {
        switch (first, second) {
        case let (first as String, second as String): return first == second
        case let (first as Data, second as Data): return first == second
        case let (first as Bool, second as Bool): return first == second
        case let (first as Int, second as Int): return first == second
        case let (first as Double, second as Double): return first == second
        case let (first as [Any], second as [Any]):
            return first.count == second.count && zip(first, second).allSatisfy { samePropertyListValue($0, $1) }
        case let (first as [String: Any], second as [String: Any]):
            return Set(first.keys) == Set(second.keys)
                && first.allSatisfy { key, value in second[key].map { samePropertyListValue(value, $0) } ?? false }
        default: return false
        }
    }
}
