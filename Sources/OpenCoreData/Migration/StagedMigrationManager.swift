import Foundation
import Synchronization

/// A migration in stages (Core Data's `NSStagedMigrationManager`): custom stages run code on the store
/// before and after an inferred migration between two versions, lightweight stages and the versions no
/// stage covers migrate by the inferred mapping alone. Give it to an open through
/// ``StoreOptions/stagedMigrationManager`` (or `setOption(_:forKey:)` with
/// ``StoreOptions/Key/stagedMigrationManager``), or run it with
/// ``StoreMigration/migrate(storeAt:to:version:stagedMigrationManager:busyTimeout:)``.
///
/// All stages run on a copy of the store; the copy replaces the original in one SQLite transaction only
/// when every stage succeeded, so a throwing handler or any failure leaves the store byte for byte as it
/// was (docs/MIGRATION.md). A PostgreSQL store runs the stages in the open's one transaction instead, and
/// refuses a custom stage with handlers (docs/POSTGRESQL.md, "Migration").
///
/// ```swift
/// let convert = CustomMigrationStage(migratingFrom: "Shop 2", to: "Shop 3")
/// convert.didMigrateHandler = { manager, _ in /* manager.container: the store at "Shop 3" */ }
/// let manager = StagedMigrationManager(stages: [convert, LightweightMigrationStage(["Shop 3", "Shop 4"])])
/// try description.setOption(manager, forKey: StoreOptions.Key.stagedMigrationManager)
/// ```
public final class StagedMigrationManager: Sendable, Hashable {
    /// The stages, in any order: they are placed by their versions.
    public let stages: [MigrationStage]
    private let openContainer = Mutex<PersistentContainer?>(nil)

    /// A manager running `stages`.
    public init(stages: [MigrationStage]) {
        self.stages = stages
    }

    /// While a handler runs: a container whose coordinator holds the store being migrated, opened with the
    /// model of the version the store is at (the stage's source version in `willMigrateHandler`, its
    /// destination in `didMigrateHandler`). Nil outside handlers; its store is closed when the handler
    /// returns.
    public var container: PersistentContainer? { openContainer.withLock { $0 } }

    package func setContainer(_ container: PersistentContainer?) {
        openContainer.withLock { $0 = container }
    }

    public static func == (left: StagedMigrationManager, right: StagedMigrationManager) -> Bool { left === right }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
