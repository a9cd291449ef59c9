import Foundation

/// Replacing and removing store files in Core Data's words, as a migrator does once it has made a migrated
/// copy of a store.
extension PersistentStoreCoordinator {
    /// Replaces the contents of the store at `destinationURL` with those of the store at `sourceURL` (Core
    /// Data's `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)`),
    /// creating it when it does not exist. The copy is SQLite's backup of every page, written into the
    /// destination as one transaction: the destination holds either its old contents or the new ones, never a
    /// mix; its write-ahead log goes with it. The files of values kept outside rows (`_EXTERNAL_DATA`) go
    /// with the rows: the source's are put beside the destination's first, and the destination's old ones
    /// removed once its rows are replaced.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for another store type than
    ///   ``SQLiteStoreType``; what ``StoreOptions/init(optionDictionary:)`` throws for an option that is not read; ``StoreError/notAStore(path:reason:)`` when the source is missing or not a
    ///   store; ``StoreError/busy(path:)`` when another connection holds the destination's write lock;
    ///   ``MigrationError/stepFailed(path:step:reason:)`` when SQLite refuses the copy, or a folder of values
    ///   kept outside rows is a link or a file in it cannot be copied (the destination is left as it was).
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
                                       ofType storeType: String) throws {
        guard try StoreType(coreDataName: storeType) == .sqlite else {
            throw ObjectGraphError.unsupportedStoreType(name: storeType, operation: "Replacing store files")
        }
        let options = try StoreOptions(optionDictionary: destinationOptions)
        _ = try StoreOptions(optionDictionary: sourceOptions)
        // The source must be a store, read as it is (its write-ahead log included).
        _ = try StoreMetadata.read(storeAt: sourceURL.path)
        try StoreFileCopy.replaceStore(at: destinationURL, withStoreAt: sourceURL, busyTimeout: options.busyTimeout)
    }

    /// Removes the store file at `url` with its `-wal`, `-shm` and `-journal` files and its folder of values
    /// kept outside rows (Core Data's `destroyPersistentStore(at:ofType:options:)`). A store this coordinator
    /// has open at `url` is taken out first. Nothing at `url` is not an error.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for another store type than
    ///   ``SQLiteStoreType``; what ``StoreOptions/init(optionDictionary:)`` throws for an option that is not
    ///   read; ``StoreError/notAStore(path:reason:)`` for a file at `url` that is not a store (it is left alone);
    ///   `CocoaError` when a file cannot be removed.
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws {
        guard try StoreType(coreDataName: storeType) == .sqlite else {
            throw ObjectGraphError.unsupportedStoreType(name: storeType, operation: "Destroying store files")
        }
        _ = try StoreOptions(optionDictionary: options)
        let path = url.standardizedFileURL.path
        for store in persistentStores where store.url?.standardizedFileURL.path == path { remove(store) }
        guard FileManager.default.fileExists(atPath: path) else { return }
        // Only a store is removed: a path given by mistake to another file is refused.
        if (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 > 0 {
            guard (try? StoreMetadata.read(storeAt: path)) != nil else {
                throw StoreError.notAStore(path: path, reason: "it holds no Core Data metadata, so it was not destroyed")
            }
        }
        let external = ExternalBinaryStorage.directory(forStoreAt: url)
        if FileManager.default.fileExists(atPath: external.path) { try FileManager.default.removeItem(at: external) }
        for suffix in ["-wal", "-shm", "-journal", ""] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
