import Foundation

/// Runs a ``StagedMigrationManager``'s stages on a store file: the stages are placed between the
/// store's version and the target, the store is copied (``StoreFileReplacement``), every stage runs on
/// the copy (handlers through a container opened on it, inferred plans through ``MigrationRunner``), and
/// the copy replaces the original only when all succeeded.
package enum StagedMigrationRunner {
    /// One part of the way: from one version index of the bundle to a later one, with the custom stage
    /// whose handlers run around it (nil: inferred only).
    package struct Segment: Equatable {
        /// The version index the segment starts at.
        package var from: Int
        /// The version index it ends at.
        package var to: Int
        /// The custom stage whose handlers run around it; nil for the inferred mapping alone.
        package var stage: CustomMigrationStage?

        package static func == (left: Segment, right: Segment) -> Bool {
            left.from == right.from && left.to == right.to && left.stage === right.stage
        }
    }

    /// The segments from version index `from` to `to`: a custom stage where one starts at the version
    /// reached (and ends no later than `to`), else the inferred mapping up to the next custom stage's
    /// source version or the target.
    ///
    /// - Throws: ``MigrationError/invalidStage(stage:reason:)`` for a stage naming a version the bundle
    ///   does not have, a custom stage that does not go forward, or two custom stages from one version.
    package static func segments(of manager: StagedMigrationManager, in bundle: ModelVersionBundle,
                         from: Int, to: Int) throws -> [Segment] {
        func index(of name: String, in stage: MigrationStage) throws -> Int {
            let wanted = XcodeModelLoader.versionName(name)
            if let found = bundle.versions.firstIndex(where: { $0.name == wanted }) ?? bundle.versions.lastIndex(where: { $0.hashDigest == name }) {
                return found
            }
            throw MigrationError.invalidStage(stage: stage.description,
                                              reason: "the bundle has no version '\(name)' (it has \(bundle.versions.map(\.name).joined(separator: ", ")))")
        }
        var customs: [Segment] = []
        for stage in manager.stages {
            switch stage {
            case let custom as CustomMigrationStage:
                let source = try index(of: custom.currentModel, in: custom), destination = try index(of: custom.nextModel, in: custom)
                guard source < destination else {
                    throw MigrationError.invalidStage(stage: custom.description,
                                                      reason: "'\(custom.nextModel)' does not come after '\(custom.currentModel)' in the bundle")
                }
                if let other = customs.first(where: { $0.from == source }) {
                    throw MigrationError.invalidStage(stage: custom.description,
                                                      reason: "\(other.stage!.description) also starts at '\(custom.currentModel)'")
                }
                customs.append(Segment(from: source, to: destination, stage: custom))
            case let lightweight as LightweightMigrationStage:
                // Inferred like the versions no stage covers: checked so a misspelt version is not ignored.
                for name in lightweight.versions { _ = try index(of: name, in: lightweight) }
            default:
                throw MigrationError.invalidStage(stage: stage.description, reason: "only lightweight and custom stages exist")
            }
        }
        var result: [Segment] = []
        var current = from
        while current < to {
            if let custom = customs.first(where: { $0.from == current && $0.to <= to }) {
                result.append(custom)
                current = custom.to
            } else {
                let next = customs.map(\.from).filter { $0 > current && $0 < to }.min() ?? to
                result.append(Segment(from: current, to: next, stage: nil))
                current = next
            }
        }
        return result
    }

    /// Migrates the store at `path` to `target` through `manager`'s stages; returns the inferred plans it
    /// ran, in order (empty when the store was already at `target`). The handlers' containers record
    /// persistent history when `recordsHistory` (the store's option) is set or the store already has history.
    ///
    /// - Throws: ``MigrationError/invalidStage(stage:reason:)``, ``MigrationError/stageFailed(path:stage:reason:)``
    ///   when a handler throws, ``MigrationError/storeChangedDuringMigration(path:)``, what inferred
    ///   planning and running throw, and ``StoreError`` for a file that is not a store of the bundle. The
    ///   store is left as it was in every case.
    @discardableResult
    static func migrate(storeAt path: String, bundle: ModelVersionBundle, target: ModelVersion,
                        manager: StagedMigrationManager, busyTimeout: TimeInterval,
                        recordsHistory: Bool = false) throws -> [MigrationPlan] {
        let metadata = try ReadOnlyStoreFile.read(path) { try StoreMetadata.read($0, path: path) }
        if metadata.versionHashes == target.model.entityVersionHashesByName { return [] }
        guard let stored = bundle.version(withHashes: metadata.versionHashes, notAfter: target.name),
              let from = bundle.versions.firstIndex(where: { $0.name == stored.name }),
              let to = bundle.versions.firstIndex(where: { $0.name == target.name }) else {
            throw StoreError.incompatibleModel(path: path, differences: metadata.differences(from: target.model))
        }
        if from > to { throw MigrationError.storeIsNewer(path: path, storeVersion: stored.name, modelVersion: target.name) }
        let segments = try segments(of: manager, in: bundle, from: from, to: to)

        let snapshot = try StoreFileReplacement.snapshot(of: path, busyTimeout: busyTimeout)
        defer { snapshot.discard() }
        let copy = snapshot.copyPath
        var ran: [MigrationPlan] = []
        // Values kept outside rows: the copy reads and writes a folder of its own (the original's files
        // shared into it), so the original folder changes only around the write-back.
        let externalData: StagedMigrationExternalData?
        do {
            externalData = try StagedMigrationExternalData(storeAt: path, copyPath: copy,
                                                            models: bundle.versions[from...to].map(\.model))
        } catch {
            throw reporting(error, at: path, insteadOf: copy)
        }
        defer { externalData?.discard() }
        do {
            // The handlers' saves are recorded where the store records history (asked for, or already there).
            let tracksHistory = try recordsHistory || ReadOnlyStoreFile.read(copy) { try HistoryTables.exist(in: $0) }
            for segment in segments {
                if let stage = segment.stage, let handler = stage.willMigrateHandler {
                    try run(handler, of: stage, named: "willMigrate", manager: manager, onStoreAt: copy,
                            externalData: externalData?.workingFolder,
                            version: bundle.versions[segment.from], tracksHistory: tracksHistory, reportedPath: path)
                }
                let destination = bundle.versions[segment.to]
                let plans = try ReadOnlyStoreFile.read(copy) { db in
                    try StoreMigration.plans(db, path: path, bundle: bundle, target: destination, targetModel: destination.model)
                }
                try MigrationRunner.run(plans, onStoreAt: copy, busyTimeout: busyTimeout)
                ran += plans
                if let stage = segment.stage, let handler = stage.didMigrateHandler {
                    try run(handler, of: stage, named: "didMigrate", manager: manager, onStoreAt: copy,
                            externalData: externalData?.workingFolder,
                            version: destination, tracksHistory: tracksHistory, reportedPath: path)
                }
            }
            try externalData?.publish(model: target.model, reportedPath: path)
        } catch {
            throw reporting(error, at: path, insteadOf: copy)
        }
        do {
            try StoreFileReplacement.replaceContents(of: path, with: snapshot)
        } catch {
            externalData?.withdraw()
            throw error
        }
        externalData?.removeReleasedFiles()
        return ran
    }

    /// Runs one handler with the manager's container open on the copy at `version`, closing it after.
    /// `externalData` is the copy's folder of values kept outside rows.
    private static func run(_ handler: CustomMigrationStage.Handler, of stage: CustomMigrationStage, named name: String,
                            manager: StagedMigrationManager, onStoreAt copy: String, externalData: URL?,
                            version: ModelVersion, tracksHistory: Bool, reportedPath: String) throws {
        let stageName = "\(stage.description) (\(name), at '\(version.name)')"
        let container = PersistentContainer(name: "StagedMigration", managedObjectModel: version.model)
        // Automatic migration off: the copy is at exactly this version, and must not move on its own.
        // History as the store keeps it, so the handler's saves are recorded like any other.
        var options = StoreOptions(persistentHistoryTracking: tracksHistory, migratesStoreAutomatically: false)
        options.externalDataDirectory = externalData
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: URL(fileURLWithPath: copy), options: options)]
        do {
            try container.loadPersistentStores()
        } catch {
            throw MigrationError.stageFailed(path: reportedPath, stage: stageName,
                                             reason: "the store could not be opened at this version: \(reporting(error, at: reportedPath, insteadOf: copy))")
        }
        manager.setContainer(container)
        defer {
            manager.setContainer(nil)
            let coordinator = container.persistentStoreCoordinator
            coordinator.persistentStores.forEach(coordinator.remove)
        }
        do {
            try handler(manager, stage)
        } catch {
            throw MigrationError.stageFailed(path: reportedPath, stage: stageName,
                                             reason: "\(reporting(error, at: reportedPath, insteadOf: copy))")
        }
    }

    /// `error` with the copy's path replaced by the original's, so errors name the store the caller gave.
    private static func reporting(_ error: any Error, at path: String, insteadOf copy: String) -> any Error {
        func fix(_ text: String) -> String { text.replacingOccurrences(of: copy, with: path) }
        switch error {
        case MigrationError.stepFailed(let storePath, let step, let reason):
            return MigrationError.stepFailed(path: fix(storePath), step: step, reason: fix(reason))
        case MigrationError.storeDoesNotMatchItsVersion(let storePath, let version, let differences):
            return MigrationError.storeDoesNotMatchItsVersion(path: fix(storePath), version: version, differences: differences)
        case MigrationError.migrationNeeded(let storePath, let storeVersion, let modelVersion, let reason):
            return MigrationError.migrationNeeded(path: fix(storePath), storeVersion: storeVersion, modelVersion: modelVersion, reason: reason)
        case StoreError.busy(let storePath): return StoreError.busy(path: fix(storePath))
        case StoreError.notAStore(let storePath, let reason): return StoreError.notAStore(path: fix(storePath), reason: reason)
        case StoreError.incompatibleModel(let storePath, let differences):
            return StoreError.incompatibleModel(path: fix(storePath), differences: differences)
        default: return error
        }
    }
}
