import Foundation

// Staged migration from tools: the same run an open does with StoreOptions.stagedMigrationManager.

extension StoreMigration {
    /// Migrates the store at `url` to `version` of `bundle` (nil: its current version) through the stages
    /// of `manager` (``StagedMigrationManager``), on a copy that replaces the store only when every stage
    /// succeeded; returns the inferred plans it ran, in order (empty when the store was already there).
    /// The store must not be open elsewhere meanwhile: a commit by another connection makes the
    /// migration refuse rather than overwrite it.
    ///
    /// - Throws: ``ModelError/versionNotFound(bundle:version:available:)`` for an unknown `version`,
    ///   ``MigrationError/invalidStage(stage:reason:)`` for a stage the bundle cannot place,
    ///   ``MigrationError/stageFailed(path:stage:reason:)`` when a handler throws,
    ///   ``MigrationError/storeChangedDuringMigration(path:)``, ``StoreError/busy(path:)`` when the store's
    ///   write lock stays taken, and what ``migrate(storeAt:to:version:progress:)`` throws. The store is
    ///   then byte for byte as it was.
    @discardableResult
    public static func migrate(storeAt url: URL, to bundle: ModelVersionBundle, version: String? = nil,
                               stagedMigrationManager manager: StagedMigrationManager,
                               busyTimeout: TimeInterval = 5) throws -> [MigrationPlan] {
        let target = try bundle.version(namedOrCurrent: version)
        return try StagedMigrationRunner.migrate(storeAt: url.path, bundle: bundle, target: target,
                                                 manager: manager, busyTimeout: busyTimeout)
    }
}
