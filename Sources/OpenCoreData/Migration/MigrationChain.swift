import Foundation

/// A store several versions behind, migrated one version at a time: through each step's mapping model where
/// the app ships one (an app ships `v1_v2`, `v2_v3`, … rather than one per pair of versions), inferring the
/// steps that have none, as one crash-safe migration: every step runs on a copy of the store, which is
/// written back in one transaction at the end (``StoreFileReplacement``), so a failure at any step leaves the
/// store exactly as it was (docs/MIGRATION.md, "Mapping models").
struct MigrationChain {
    /// One version to the next: through `mapping`, or inferred when it is nil.
    struct Step {
        let source: ModelVersion
        let sourceModel: ManagedObjectModel
        let destination: ModelVersion
        let destinationModel: ManagedObjectModel
        let mapping: MappingModel?
    }

    let bundle: ModelVersionBundle
    let steps: [Step]

    /// Whether every step has a mapping model (no inference needed).
    var isMappedThroughout: Bool { steps.allSatisfy { $0.mapping != nil } }

    /// The steps from `stored` to `target` (`targetModel` being the model the store is opened with), each
    /// with the mapping model `mappingFor` finds for it; nil when the store is less than two versions behind
    /// or no step has a mapping model (a direct or inferred migration then does it).
    ///
    /// - Throws: what `mappingFor` throws (a mapping model beside the bundle that cannot be read).
    static func find(in bundle: ModelVersionBundle, from stored: ModelVersion, to target: ModelVersion,
                     targetModel: ManagedObjectModel,
                     mappingFor: (ModelVersion, ModelVersion, ManagedObjectModel) throws -> MappingModel?) throws -> MigrationChain? {
        guard let from = bundle.versions.firstIndex(where: { $0.name == stored.name }),
              let to = bundle.versions.firstIndex(where: { $0.name == target.name }), to - from > 1 else { return nil }
        var steps: [Step] = []
        for index in from..<to {
            let destinationModel = index + 1 == to ? targetModel : bundle.versions[index + 1].model
            steps.append(Step(source: bundle.versions[index], sourceModel: bundle.versions[index].model,
                              destination: bundle.versions[index + 1], destinationModel: destinationModel,
                              mapping: try mappingFor(bundle.versions[index], bundle.versions[index + 1], destinationModel)))
        }
        guard steps.contains(where: { $0.mapping != nil }) else { return nil }
        return MigrationChain(bundle: bundle, steps: steps)
    }

    /// Runs every step on a copy of the store at `url` and writes the result back in one transaction.
    ///
    /// - Throws: what ``MappingModelMigration/migrateInPlace(storeAt:sourceModel:destinationModel:mapping:busyTimeout:)``
    ///   throws for a mapping step, the planner's refusals for an inferred step, and what
    ///   ``StoreFileCopy/replaceContents(of:withStoreAt:busyTimeout:)`` throws when a step's result cannot be
    ///   carried to the next; the store is then exactly as it was.
    func migrateInPlace(storeAt url: URL, busyTimeout: TimeInterval) throws {
        guard let first = steps.first else { return }
        let path = url.path
        let snapshot = try StoreFileReplacement.snapshot(of: path, busyTimeout: busyTimeout)
        defer { snapshot.discard() }
        // Another connection may have migrated the store before the snapshot: its result is kept.
        guard try StoreMetadata.read(storeAt: snapshot.copyPath).versionHashes == first.sourceModel.entityVersionHashesByName else { return }
        // A mapping step makes a new store named after the copy (removed with it when a process dies), which
        // is then copied back into the copy: after every step the copy holds the store at that version.
        let derived = StoreFileReplacement.derivedPath(of: snapshot.copyPath)
        func removeDerived() {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: derived + suffix) }
        }
        defer { removeDerived() }
        let folder = ExternalBinaryStorage.directory(forStoreAt: url)
        for step in steps {
            if let mapping = step.mapping {
                removeDerived()
                try MappingModelMigration.migrate(storeAt: URL(fileURLWithPath: snapshot.copyPath), sourceModel: step.sourceModel,
                                                  destinationModel: step.destinationModel, mapping: mapping,
                                                  into: URL(fileURLWithPath: derived),
                                                  batchSize: MappingModelMigration.defaultBatchSize, externalData: folder)
                // Written with the backup API, the copy keeps its identity, and so the lock that marks it in use.
                try StoreFileCopy.replaceContents(of: snapshot.copyPath, withStoreAt: derived, busyTimeout: busyTimeout)
            } else {
                let plans = try ReadOnlyStoreFile.read(snapshot.copyPath) { db in
                    try StoreMigration.plans(db, path: path, bundle: bundle, target: step.destination, targetModel: step.destinationModel)
                }
                try MigrationRunner.run(plans, onStoreAt: snapshot.copyPath, busyTimeout: busyTimeout)
            }
        }
        try StoreFileReplacement.replaceContents(of: path, with: snapshot)
    }
}
