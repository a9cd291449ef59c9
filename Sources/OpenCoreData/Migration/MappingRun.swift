import Foundation

/// What one run of a mapping model did that outlives it: the checked mapping, and which destination object
/// each source object became (what ``MappingMigrationHistory`` needs to carry the history over).
package struct MappingRun {
    let plan: MappingPlan
    let associations: MappingAssociations
    let sourceModel: ManagedObjectModel
    let destinationModel: ManagedObjectModel

    /// The context name of the migration's history transaction: "source version → destination version".
    var versions: String { "\(sourceModel.versionName ?? "?") → \(destinationModel.versionName ?? "?")" }
}
