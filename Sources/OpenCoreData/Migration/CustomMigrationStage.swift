import Foundation

/// A stage that runs code around an inferred migration from one version to a later one (Core Data's
/// `NSCustomMigrationStage`): ``willMigrateHandler`` on the store at the source version, then the inferred
/// plan from source to destination, then ``didMigrateHandler`` on the store at the destination version.
/// The handlers reach the store through ``StagedMigrationManager/container``. This is how a change no
/// inferred mapping makes (a type change, values computed from others) is split into lightweight steps and
/// code (docs/MIGRATION.md).
///
/// ```swift
/// let stage = CustomMigrationStage(migratingFrom: "Shop 2", to: "Shop 3")
/// stage.didMigrateHandler = { manager, _ in
///     let context = try #require(manager.container).newBackgroundContext()
///     try context.performAndWait { /* fetch, convert, */ try context.save() }
/// }
/// ```
public final class CustomMigrationStage: MigrationStage, @unchecked Sendable {
    // @unchecked Sendable: as MigrationStage; the handlers are set before the migration starts.

    /// What a handler receives: the manager (for its container) and the stage it runs for. Throwing aborts
    /// the whole migration, which leaves the store as it was.
    public typealias Handler = @Sendable (StagedMigrationManager, CustomMigrationStage) throws -> Void

    /// The version the store is at before the stage, by name or ``ModelVersion/hashDigest``.
    public let currentModel: String
    /// The version the store is at after it, later in the bundle than ``currentModel``.
    public let nextModel: String
    /// Runs on the store at ``currentModel`` before the inferred plan.
    public var willMigrateHandler: Handler?
    /// Runs on the store at ``nextModel`` after the inferred plan.
    public var didMigrateHandler: Handler?

    /// A stage from version `currentModel` to the later version `nextModel` (names or hash digests).
    public init(migratingFrom currentModel: String, to nextModel: String) {
        self.currentModel = currentModel
        self.nextModel = nextModel
    }

    override var defaultLabel: String { "custom stage '\(currentModel)' → '\(nextModel)'" }
}
