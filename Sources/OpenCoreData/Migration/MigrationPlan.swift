import Foundation

/// How to take a store from one model version to the next: the versions and the steps, planned before
/// anything is written (docs/MIGRATION.md).
///
/// ```swift
/// let plans = try StoreMigration.plan(storeAt: url, to: try ModelVersionBundle(contentsOf: bundleURL))
/// for plan in plans { print(plan) }
/// ```
public struct MigrationPlan: Sendable, Equatable, CustomStringConvertible {
    /// The version the store is at before this plan.
    public let sourceVersion: String
    /// The version the store is at after it.
    public let targetVersion: String
    /// The steps, in the order they run.
    public let steps: [SchemaStep]
    /// The entity version hashes of the source and target versions: the runner checks the store still
    /// carries the source's before it runs anything (another process may have migrated it meanwhile).
    package let sourceHashes: [String: Data]
    package let targetHashes: [String: Data]
    /// The objects this plan gives new keys (rows of several old tables joined in one new table), for the
    /// history's old changes (``MigrationHistory``).
    var keyMoves: [KeyMove] = []
    /// For each source entity the target keeps under its name: where each of its property slots goes
    /// (slots of properties the target drops are absent), so the history's updated-property bitmaps
    /// (``MigrationHistory``) name the same properties after the plan.
    var slotMoves: [String: [Int: Int]] = [:]

    /// The objects of `sourceEntities` (the source entities an old table stores) get their old key plus
    /// `offset`, SQL read on the store before the plan runs.
    struct KeyMove: Sendable, Equatable {
        var sourceEntities: [String]
        var offset: MigrationStatement
    }

    /// Each step on its own line, its SQL indented below it.
    public var description: String {
        var lines = ["\(sourceVersion) → \(targetVersion): \(steps.count) steps"]
        for (number, step) in steps.enumerated() {
            lines.append("  \(number + 1). \(step)")
            lines += step.sql.map { "       \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}
