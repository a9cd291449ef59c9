import Foundation

extension ManagedObjectModel {
    /// The entity numbers (`Z_ENT`) the store at `url` gives its entities, by name, from its `Z_PRIMARYKEY`.
    /// The file is read through a read-only connection and not changed.
    ///
    /// Pass them to ``init(entities:versionIdentifiers:entityNumbers:)``, or use
    /// ``init(contentsOf:numberedLikeStoreAt:)``, to read and write a store whose numbering differs from ours.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is not SQLite or has no `Z_PRIMARYKEY`;
    ///   ``StoreError/corrupt(path:reason:)`` when a row lacks its name or number or repeats one.
    public static func entityNumbers(ofStoreAt url: URL) throws -> [String: Int] {
        try StoreEntityNumbers.read(path: url.path)
    }

    /// Loads the model at `modelURL` with its entities numbered as the store at `storeURL` numbers them: an
    /// Xcode model (as ``init(contentsOf:)`` reads it) or a compiled `.mom`/`.momd` (as
    /// ``init(compiledModelAt:)`` reads it).
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(contentsOf: modelURL, numberedLikeStoreAt: storeURL)
    /// try PersistentStoreCoordinator(managedObjectModel: model).addPersistentStore(type: .sqlite, at: storeURL)
    /// ```
    ///
    /// - Throws: what ``init(contentsOf:)``, ``init(compiledModelAt:)`` and ``entityNumbers(ofStoreAt:)``
    ///   throw, and ``ModelError/unusableEntityNumbers(reason:)`` when the store's entities are not the
    ///   model's (one missing, one extra, numbers not 1 to the entity count).
    public convenience init(contentsOf modelURL: URL, numberedLikeStoreAt storeURL: URL) throws {
        let contents = try Self.entityDescriptions(in: modelURL)
        let numbers = Self.following(renames: contents.entities, in: try Self.entityNumbers(ofStoreAt: storeURL))
        try self.init(compiled: contents, entityNumbers: numbers)
    }

    /// A store's entity numbers with each entity the store knows by its old name (its renaming identifier)
    /// filed under its new one. Core Data leaves `Z_PRIMARYKEY`'s names as they were when it migrates a store
    /// to a version that renames an entity (alemar11's `SampleModel_V2` still lists `ExpensiveSportCar`, which
    /// that model calls `LuxuryCar`, renamed from it), and matches the entity by its renaming identifier.
    static func following(renames entities: [EntityDescription], in numbers: [String: Int]) -> [String: Int] {
        var renamed = numbers
        let names = Set(entities.map(\.name))
        for entity in entities where renamed[entity.name] == nil {
            guard let old = entity.renamingIdentifier, !names.contains(old), let number = renamed[old] else { continue }
            renamed[old] = nil
            renamed[entity.name] = number
        }
        return renamed
    }

    /// Fresh entity descriptions of the model file at `url`, compiled or Xcode source.
    private static func entityDescriptions(in url: URL) throws -> CompiledModelContents {
        if ["mom", "momd"].contains(url.pathExtension.lowercased()) {
            let file = try CompiledModelLoader.momFile(for: url)
            guard let data = try? Data(contentsOf: file) else {
                throw ModelError.malformedModelFile(path: file.path, reason: "the file cannot be read")
            }
            var loader = CompiledModelLoader(source: file.path)
            return try loader.contents(from: data)
        }
        let contentsURL = try XcodeModelLoader.contentsFileURL(for: url)
        let root = try XcodeModelLoader.modelRoot(at: contentsURL)
        return try XcodeModelLoader(source: contentsURL.path).contents(fromModel: root)
    }
}
