import Foundation

/// A stage whose versions follow each other by inferred (lightweight) migration only (Core Data's
/// `NSLightweightMigrationStage`): a store at any of `versions` is migrated to the last of them that the
/// migration goes to, with the inferred mapping (docs/MIGRATION.md).
///
/// ```swift
/// let stage = LightweightMigrationStage(["Shop 2", "Shop 3"])
/// ```
public final class LightweightMigrationStage: MigrationStage, @unchecked Sendable {
    // @unchecked Sendable: as MigrationStage.

    /// The versions, by name or ``ModelVersion/hashDigest`` (Core Data lists version checksums here).
    public let versions: [String]

    /// A stage over `versions`, named or given by ``ModelVersion/hashDigest``.
    public init(_ versions: [String]) {
        self.versions = versions
    }

    override var defaultLabel: String { "lightweight stage [\(versions.joined(separator: ", "))]" }
}
