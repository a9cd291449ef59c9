import Foundation

/// Whether a store fits a model, in Core Data's words: what a progressive migrator asks of each model version
/// to find the one that wrote a store.
extension ManagedObjectModel {
    /// Whether a store whose metadata is `metadata` (``PersistentStoreCoordinator/metadataForPersistentStore(ofType:at:options:)``)
    /// was written with this model: its entity version hashes (`NSStoreModelVersionHashes`) are exactly the
    /// model's (Core Data's `isConfiguration(withName:compatibleWithStoreMetadata:)`). A model here has one
    /// configuration, its whole self: `nil` or `"Default"`; any other name is not compatible.
    public func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any]) -> Bool {
        guard configuration == nil || configuration == "Default" else { return false }
        guard let hashes = metadata[StoreMetadata.Key.versionHashes] as? [String: Any] else { return false }
        let stored = hashes.compactMapValues { $0 as? Data }
        return stored.count == hashes.count && stored == entityVersionHashesByName
    }
}
