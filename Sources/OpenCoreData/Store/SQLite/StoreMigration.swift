import Foundation
import GRDB

/// Migrating a store file to a version of its model bundle: finding the store's version, planning
/// (directly, or through the intermediate versions when no direct inferred mapping exists), and running
/// the plans in one transaction (docs/MIGRATION.md).
///
/// Opening a store does this on its own when the model came from a bundle (see
/// ``StoreOptions/migratesStoreAutomatically``); this type is for tools and for looking before leaping.
///
/// ```swift
/// let bundle = try ModelVersionBundle(contentsOf: modelURL)
/// let plans = try StoreMigration.plan(storeAt: storeURL, to: bundle)   // nothing written
/// try StoreMigration.migrate(storeAt: storeURL, to: bundle)
/// ```
public enum StoreMigration {
    /// The plans that take the store at `url` to `version` of `bundle` (nil: its current version), in
    /// order; empty when the store is already there. Reads the store without changing it, and runs the
    /// first plan's checks, so a refusal shows here.
    ///
    /// - Throws: ``StoreError`` when the file is not a store, ``StoreError/incompatibleModel(path:differences:)``
    ///   when no version of the bundle wrote it, ``ModelError/versionNotFound(bundle:version:available:)``
    ///   for an unknown `version`, and the ``MigrationError`` that refuses the migration.
    public static func plan(storeAt url: URL, to bundle: ModelVersionBundle, version: String? = nil) throws -> [MigrationPlan] {
        let target = try bundle.version(namedOrCurrent: version)
        return try ReadOnlyStoreFile.read(url.path) { db in
            try Self.plans(db, path: url.path, bundle: bundle, target: target, targetModel: target.model)
        }
    }

    /// Migrates the store at `url` to `version` of `bundle` (nil: its current version); returns the plans
    /// it ran (empty when the store was already there). `progress(done, total)` counts statements.
    ///
    /// - Throws: what ``plan(storeAt:to:version:)`` throws, and ``MigrationError/stepFailed(path:step:reason:)``
    ///   when a statement fails; the file is then exactly as it was.
    @discardableResult
    public static func migrate(storeAt url: URL, to bundle: ModelVersionBundle, version: String? = nil,
                               progress: ((Int, Int) -> Void)? = nil) throws -> [MigrationPlan] {
        let plans = try plan(storeAt: url, to: bundle, version: version)
        try MigrationRunner.run(plans, onStoreAt: url.path, progress: progress)
        return plans
    }

    /// What opening a store does first: when `model` came from a bundle and another version of it wrote
    /// the store, migrate (if `options` allow) or refuse with ``MigrationError/migrationNeeded(path:storeVersion:modelVersion:reason:)``.
    /// Returns without doing anything when the store fits the model or no version of the bundle wrote it
    /// (the ordinary open then reports what differs).
    static func migrateIfNeeded(path: String, model: ManagedObjectModel, options: StoreOptions) throws {
        // A migration on a copy killed after its write-back leaves the store migrated and its copy behind,
        // and the store then opens without migrating: the copies of dead processes go at every writable open.
        if !options.readOnly {
            StoreFileReplacement.removeAbandonedCopies(of: URL(fileURLWithPath: path))
        }
        guard let bundleURL = model.versionBundleURL, let modelVersion = model.versionName,
              let metadata = try? StoreMetadata.read(storeAt: path),
              metadata.versionHashes != model.entityVersionHashesByName else { return }
        let bundle = try ModelVersionBundle(contentsOf: bundleURL)
        guard let stored = bundle.version(withHashes: metadata.versionHashes, notAfter: modelVersion),
              let target = bundle.version(named: modelVersion) else { return }
        // A mapping model from the store's version to the model's (passed in the options, else beside the
        // bundle) is used before any inferred mapping (docs/MIGRATION.md, "Mapping models").
        // A compiled mapping model names no versions: it is matched by the entity version hashes it records.
        func mappingModel(from source: ModelVersion, to destination: ModelVersion,
                          destinationModel: ManagedObjectModel) throws -> MappingModel? {
            try options.mappingModels.first {
                ($0.sourceModelVersionName == source.name && $0.destinationModelVersionName == destination.name)
                    || $0.fits(sourceModel: source.model, destinationModel: destinationModel)
            } ?? MappingModel.find(in: bundleURL.deletingLastPathComponent(), from: source.name, to: destination.name)
        }
        let mapping = try mappingModel(from: stored, to: target, destinationModel: model)
        // Without one mapping model for the whole way, the app's mapping models for each step (inferring the
        // steps without one).
        let chain = mapping != nil ? nil
            : try MigrationChain.find(in: bundle, from: stored, to: target, targetModel: model, mappingFor: mappingModel)
        let reason: String? = options.readOnly ? "the store is opened read-only"
            : !options.migratesStoreAutomatically ? "automatic migration is turned off (shouldMigrateStoreAutomatically)"
            : !options.infersMappingModelAutomatically && mapping == nil && chain?.isMappedThroughout != true
                ? "inferring the mapping is turned off (shouldInferMappingModelAutomatically)" : nil
        if let reason {
            throw MigrationError.migrationNeeded(path: path, storeVersion: stored.name, modelVersion: modelVersion, reason: reason)
        }
        if let manager = options.stagedMigrationManager {
            // Stages run code on contexts, so they work on a copy (StagedMigrationRunner).
            try StagedMigrationRunner.migrate(storeAt: path, bundle: bundle, target: target, manager: manager,
                                              busyTimeout: options.busyTimeout, recordsHistory: options.persistentHistoryTracking)
            return
        }
        if let chain {
            try chain.migrateInPlace(storeAt: URL(fileURLWithPath: path), busyTimeout: options.busyTimeout)
            return
        }
        if let mapping {
            try MappingModelMigration.migrateInPlace(storeAt: URL(fileURLWithPath: path), sourceModel: stored.model, destinationModel: model,
                                                     mapping: mapping, busyTimeout: options.busyTimeout)
            return
        }
        let planned = try ReadOnlyStoreFile.read(path) { db in
            try Self.plans(db, path: path, bundle: bundle, target: target, targetModel: model)
        }
        try MigrationRunner.run(planned, onStoreAt: path, busyTimeout: options.busyTimeout)
    }

    // MARK: Planning

    /// The plans from the version that wrote the store to `target`: one per version in between when each
    /// step has an inferred mapping, else one direct plan. Runs the first plan's checks.
    static func plans(_ db: Database, path: String, bundle: ModelVersionBundle, target: ModelVersion,
                      targetModel: ManagedObjectModel) throws -> [MigrationPlan] {
        let metadata = try StoreMetadata.read(db, path: path)
        let result = try plans(metadata: metadata, path: path, bundle: bundle, target: target, targetModel: targetModel,
                               dialect: SQLiteDialect(), differences: { model in
            let tables = Set(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'").map { $0.uppercased() })
            return try SQLiteStore.schemaDifferences(db, model: model, tableSet: tables)
        }, storedNumbers: {
            var numbers: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT \(quoted("Z_NAME")), \(quoted("Z_ENT")) FROM \(quoted("Z_PRIMARYKEY"))") {
                if let name = row[0] as String?, let number = row[1] as Int? { numbers[name] = number }
            }
            return numbers
        })
        if let first = result.first { try MigrationRunner.runChecks(of: first, in: db, path: path) }
        return result
    }

    /// The plans from the version whose hashes `metadata` carries to `target`, for a store in any database:
    /// `differences` says how its tables differ from those a model implies, `storedNumbers` reads the entity
    /// numbers of its `Z_PRIMARYKEY` (once the tables are known to fit), and `dialect` writes the statements
    /// for its database. Runs no check.
    ///
    /// - Throws: ``StoreError/incompatibleModel(path:differences:)`` when no version of `bundle` wrote the
    ///   store, ``MigrationError/storeIsNewer(path:storeVersion:modelVersion:)``,
    ///   ``MigrationError/storeDoesNotMatchItsVersion(path:version:differences:)``, and the planner's
    ///   refusals (``MigrationError/unsupportedChange(entity:property:reason:)``, …).
    package static func plans(metadata: StoreMetadata, path: String, bundle: ModelVersionBundle, target: ModelVersion,
                              targetModel: ManagedObjectModel, dialect: any SQLDialect,
                              differences: (ManagedObjectModel) throws -> [String],
                              storedNumbers readNumbers: () throws -> [String: Int]) throws -> [MigrationPlan] {
        if metadata.versionHashes == targetModel.entityVersionHashesByName { return [] }
        guard let stored = bundle.version(withHashes: metadata.versionHashes, notAfter: target.name) else {
            throw StoreError.incompatibleModel(path: path, differences: metadata.differences(from: targetModel))
        }
        guard let from = bundle.versions.firstIndex(where: { $0.name == stored.name }),
              let to = bundle.versions.firstIndex(where: { $0.name == target.name }) else { return [] }
        if from > to {
            throw MigrationError.storeIsNewer(path: path, storeVersion: stored.name, modelVersion: target.name)
        }
        let found = try differences(stored.model)
        guard found.isEmpty else {
            throw MigrationError.storeDoesNotMatchItsVersion(path: path, version: stored.name, differences: found)
        }
        let storedNumbers = try readNumbers()
        func model(at index: Int) -> ManagedObjectModel { index == to ? targetModel : bundle.versions[index].model }
        func numbers(of model: ManagedObjectModel) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: model.entitiesByNumber.map { ($0.name, $0.entityNumber) })
        }
        func direct() throws -> [MigrationPlan] {
            [try InferredMappingPlanner(
                source: stored.model, sourceVersion: stored.name, target: targetModel, targetVersion: target.name,
                storedEntityNumbers: storedNumbers, metadata: metadata, dialect: dialect).plan()]
        }
        // Step through every version in between first: renaming identifiers name elements of the version
        // before, so each step is the change its author described ("Shop 3" renames what "Shop 2" called
        // `mail`, which "Shop" called `email`). When a step has no inferred mapping, go directly.
        func stepwise() throws -> [MigrationPlan] {
            var plans: [MigrationPlan] = []
            var stepMetadata = metadata
            for index in from..<to {
                plans.append(try InferredMappingPlanner(
                    source: model(at: index), sourceVersion: bundle.versions[index].name,
                    target: model(at: index + 1), targetVersion: bundle.versions[index + 1].name,
                    storedEntityNumbers: index == from ? storedNumbers : numbers(of: model(at: index)),
                    metadata: stepMetadata, dialect: dialect).plan())
                stepMetadata.versionHashes = model(at: index + 1).entityVersionHashesByName
            }
            return plans
        }
        if to - from > 1, let plans = try? stepwise() { return plans }
        return try direct()
    }
}
