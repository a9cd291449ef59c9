import Foundation

/// One stage of a ``StagedMigrationManager`` (Core Data's `NSMigrationStage`): either a
/// ``LightweightMigrationStage`` or a ``CustomMigrationStage``. Versions are named as in the model's
/// `.xcdatamodeld` bundle ("Shop 2"), or by their ``ModelVersion/hashDigest``.
public class MigrationStage: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: configured before the migration starts, only read while it runs.

    /// A name for the stage, used in errors and logs; the stage's versions when not set.
    public var label: String?

    init() {}

    /// The label, else a description of the stage's versions.
    public var description: String { label ?? defaultLabel }

    var defaultLabel: String { "stage" }
}
