import Foundation

/// Store metadata in Core Data's words: what apps read to decide whether a store needs migrating, and write
/// their own keys into.
extension PersistentStoreCoordinator {
    /// The metadata of the store at `url` (Core Data's `metadataForPersistentStore(ofType:at:options:)`):
    /// `NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes` (entity name → 32-byte `Data`), … as the
    /// store's `Z_METADATA` holds them, read without opening or changing the store. Compare it with a model
    /// through ``ManagedObjectModel/isConfiguration(withName:compatibleWithStoreMetadata:)``.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for a store type other than
    ///   ``SQLiteStoreType``; what ``StoreOptions/init(optionDictionary:)`` throws for an option that is not read; ``StoreError/notAStore(path:reason:)``
    ///   for a missing file or one that is not a store; ``StoreError/corrupt(path:reason:)`` for metadata
    ///   that is not Core Data's.
    public static func metadataForPersistentStore(ofType storeType: String, at url: URL,
                                                  options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        guard try StoreType(coreDataName: storeType) == .sqlite else {
            throw ObjectGraphError.unsupportedStoreType(name: storeType, operation: "Reading metadata at \(url.path)")
        }
        _ = try StoreOptions(optionDictionary: options)
        return try StoreMetadata.dictionary(storeAt: url.path)
    }

    /// The metadata of `store`, one of this coordinator's (Core Data's `metadata(for:)`).
    ///
    /// - Throws: ``StoreError`` when it cannot be read.
    public func metadata(for store: PersistentStore) throws -> [String: Any] {
        try store.backend.metadataDictionary()
    }

    /// Replaces the metadata of `store` with `metadata` (Core Data's `setMetadata(_:for:)`), written at once
    /// where Core Data writes it with the next save. The keys the library keeps (`NSStoreType`,
    /// `NSStoreUUID`, `NSStoreModelVersionHashes`, …) may be given, unchanged, or left out; the app's own
    /// keys are replaced by those given. A migration of the store later keeps only the library's keys.
    ///
    /// - Throws: ``ObjectGraphError/libraryMetadataKey(_:)`` when `metadata` changes a key the library keeps;
    ///   ``ObjectGraphError/invalidStoreMetadata(reason:)`` when it holds a value a property list cannot; ``StoreError/readOnly(path:)`` for a read-only
    ///   store; ``StoreError`` when SQLite refuses.
    public func setMetadata(_ metadata: [String: Any], for store: PersistentStore) throws {
        try store.backend.setMetadataDictionary(metadata)
    }
}
