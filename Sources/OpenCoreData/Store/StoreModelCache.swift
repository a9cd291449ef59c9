import Foundation

/// The compiled model a store carries in `Z_MODELCACHE` (`Z_CONTENT`: the `.mom` keyed archive, DEFLATE
/// compressed), which Core Data writes so a store can be migrated without the model it was written with.
enum StoreModelCache {
    /// The cache's uncompressed size may be at most this: compiled models are kilobytes to a few megabytes.
    static let maximumModelSize = 64 << 20

    /// The cache's content in the store at `path` as stored (compressed); nil when the store has no cache or
    /// it is empty. Reads through a read-only connection; the file is not changed.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is not SQLite;
    ///   ``StoreError/corrupt(path:reason:)`` when the cache is not a blob.
    static func content(path: String) throws -> Data? {
        let blob = try SQLiteStore.modelCacheCell(ofStoreAt: path)
        guard let blob, !blob.isNull else { return nil }
        guard let compressed = Data.fromStoreValue(blob) else {
            throw StoreError.corrupt(path: path, reason: "Z_MODELCACHE.Z_CONTENT is not a blob")
        }
        return compressed
    }

    /// The archived model in a cache's content, decompressed; `path` names the store in errors.
    ///
    /// - Throws: ``StoreError/corrupt(path:reason:)`` when the content does not decompress, or would expand
    ///   past ``maximumModelSize`` bytes (the reason names the limit).
    static func archive(fromContent compressed: Data, path: String) throws -> Data {
        do {
            return try Inflate.decompress(compressed, maximumOutput: maximumModelSize)
        } catch let failure as Inflate.Failure {
            throw StoreError.corrupt(path: path, reason: "Z_MODELCACHE does not decompress: \(failure.reason)")
        }
    }

    /// The model in a cache's content (the bytes of `Z_MODELCACHE.Z_CONTENT`), numbered as `storeNumbers`
    /// (the store's `Z_PRIMARYKEY`, see ``ManagedObjectModel/entityNumbers(ofStoreAt:)``) says when they fit
    /// it, by our numbering otherwise; `path` names the store in errors.
    ///
    /// The lowest level that takes the bytes: ``ManagedObjectModel/cachedModel(ofStoreAt:)`` reads them from
    /// the store, and the fuzz target `FuzzModelCache` hands them in directly.
    ///
    /// - Throws: as ``ManagedObjectModel/cachedModel(ofStoreAt:)``.
    static func model(fromContent compressed: Data, path: String, storeNumbers: [String: Int]?) throws -> ManagedObjectModel {
        let data = try archive(fromContent: compressed, path: path)
        var loader = CompiledModelLoader(source: path + " (Z_MODELCACHE)")
        let contents = try loader.contents(from: data)
        let numbers = storeNumbers.map { ManagedObjectModel.following(renames: contents.entities, in: $0) }
        do {
            return try ManagedObjectModel(compiled: contents, entityNumbers: numbers)
        } catch ModelError.unusableEntityNumbers {
            // Fresh descriptions: the refused model may hold the first ones.
            return try ManagedObjectModel(compiled: try loader.contents(from: data))
        }
    }
}

extension ManagedObjectModel {
    /// The model the store at `url` carries in `Z_MODELCACHE`, numbered as the store numbers its entities
    /// (our numbering when the store's does not fit); nil when the store has no model cache. The file is read
    /// through a read-only connection and not changed.
    ///
    /// ```swift
    /// if let model = try ManagedObjectModel.cachedModel(ofStoreAt: storeURL) { … }
    /// ```
    ///
    /// - Throws: ``StoreError`` when the file is not a store or the cache does not decompress;
    ///   ``ModelError/malformedModelFile(path:reason:)`` when the cached archive is damaged, and every check of
    ///   ``init(entities:versionIdentifiers:entityNumbers:)``.
    public static func cachedModel(ofStoreAt url: URL) throws -> ManagedObjectModel? {
        guard let content = try StoreModelCache.content(path: url.path) else { return nil }
        return try StoreModelCache.model(fromContent: content, path: url.path,
                                         storeNumbers: try? entityNumbers(ofStoreAt: url))
    }
}
