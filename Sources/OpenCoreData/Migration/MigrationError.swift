import Foundation

/// Why a store was not migrated. Every case names the culprit; a store that was not migrated is left
/// exactly as it was (docs/MIGRATION.md).
public enum MigrationError: Error, Equatable, CustomStringConvertible, LocalizedError, Sendable {
    /// The store was written by another version of the model and must be migrated before it can be
    /// opened, but the open did not allow it (`reason`: read-only, or automatic migration turned off).
    case migrationNeeded(path: String, storeVersion: String, modelVersion: String, reason: String)
    /// The store was written by a later version of the bundle than the model being opened.
    case storeIsNewer(path: String, storeVersion: String, modelVersion: String)
    /// No inferred mapping exists for a change (`property` nil: an entity-level change).
    case unsupportedChange(entity: String, property: String?, reason: String)
    /// An attribute's type changed in a way no inferred mapping converts.
    case unsupportedTypeChange(entity: String, attribute: String, from: AttributeType, to: AttributeType)
    /// A required attribute without a default value would be empty in `rowCount` rows.
    case missingRequiredValues(entity: String, attribute: String, rowCount: Int)
    /// A relationship that becomes to-one (or loses its many-to-many side) has `rowCount` objects holding
    /// several links: keeping one would lose the others.
    case severalLinks(entity: String, relationship: String, rowCount: Int)
    /// `rowCount` links of a relationship point at (or come from) objects that stay in the store but are
    /// no longer of the relationship's entities (an inheritance change moved them out).
    case linksWouldBeLost(entity: String, relationship: String, rowCount: Int)
    /// The store's tables are not those of the version its hashes name.
    case storeDoesNotMatchItsVersion(path: String, version: String, differences: [String])
    /// A statement failed while the migration ran; everything was rolled back.
    case stepFailed(path: String, step: String, reason: String)
    /// A mapping model file could not be read: not XML, a reference (`idrefs`) to no object, a mapping
    /// without a name, an expression that does not parse (`reason` names the object and attribute).
    case invalidMappingModel(path: String, reason: String)
    /// An entity mapping asks for something the migrator does not do (a custom migration policy class, a
    /// custom mapping type, a function of the migration manager it does not know): refused before anything
    /// is written, never skipped.
    case unsupportedMapping(entityMapping: String, reason: String)
    /// An entity mapping names a migration policy class (`entityMigrationPolicyClassName`) that no one
    /// registered (``MigrationManager/register(policy:forClassName:)``): refused before anything is written.
    case unregisteredMigrationPolicy(entityMapping: String, className: String)
    /// An entity mapping names an entity or property the source or destination model does not have.
    case mappingDoesNotFitModels(entityMapping: String, reason: String)
    /// A value expression failed on one source object (`object` is its URI).
    case mappingFailed(entityMapping: String, object: String, reason: String)

    // Staged migration (StagedMigrationManager).

    /// A stage of a ``StagedMigrationManager`` names a version the bundle does not have, or goes backwards.
    case invalidStage(stage: String, reason: String)
    /// A custom stage's handler threw (`reason`: its error); the store was left as it was.
    case stageFailed(path: String, stage: String, reason: String)
    /// Another connection committed to the store while it was being migrated on a copy, so the copy was
    /// not written back; the store holds that connection's change and is still at its old version.
    case storeChangedDuringMigration(path: String)

    /// The message naming the store, the versions or the entity and property at fault.
    public var description: String {
        switch self {
        case .migrationNeeded(let path, let storeVersion, let modelVersion, let reason):
            return "\(path) was written by model version '\(storeVersion)' and needs migrating to '\(modelVersion)', but \(reason)."
        case .storeIsNewer(let path, let storeVersion, let modelVersion):
            return "\(path) was written by model version '\(storeVersion)', which is later than '\(modelVersion)': a store is never migrated back."
        case .unsupportedChange(let entity, let property?, let reason):
            return "No inferred migration for '\(entity).\(property)': \(reason)."
        case .unsupportedChange(let entity, nil, let reason):
            return "No inferred migration for entity '\(entity)': \(reason)."
        case .unsupportedTypeChange(let entity, let attribute, let from, let to):
            return "No inferred migration for '\(entity).\(attribute)': its type changes from \(from.rawValue) to \(to.rawValue)."
        case .missingRequiredValues(let entity, let attribute, let rowCount):
            return "Attribute '\(entity).\(attribute)' is required and has no default value, but \(rowCount) row\(rowCount == 1 ? "" : "s") would have none."
        case .severalLinks(let entity, let relationship, let rowCount):
            return "Relationship '\(entity).\(relationship)' can hold only one object, but \(rowCount) object\(rowCount == 1 ? "" : "s") hold several."
        case .linksWouldBeLost(let entity, let relationship, let rowCount):
            return "Relationship '\(entity).\(relationship)' would lose \(rowCount) link\(rowCount == 1 ? "" : "s") to objects that are no longer of its entities."
        case .storeDoesNotMatchItsVersion(let path, let version, let differences):
            return "\(path) carries the hashes of version '\(version)' but not its tables: " + differences.joined(separator: "; ") + "."
        case .stepFailed(let path, let step, let reason):
            return "Migrating \(path) failed at '\(step)' (nothing was changed): \(reason)."
        case .invalidStage(let stage, let reason):
            return "Migration stage \(stage) cannot be used: \(reason)."
        case .stageFailed(let path, let stage, let reason):
            return "Migrating \(path) failed in \(stage) (nothing was changed): \(reason)."
        case .storeChangedDuringMigration(let path):
            return "\(path) was changed by another connection while it was being migrated; the migration was not written (run it again)."
        case .invalidMappingModel(let path, let reason):
            return "The mapping model \(path) cannot be read: \(reason)."
        case .unsupportedMapping(let entityMapping, let reason):
            return "Entity mapping '\(entityMapping)' is not supported: \(reason)."
        case .unregisteredMigrationPolicy(let entityMapping, let className):
            return "Entity mapping '\(entityMapping)' names the migration policy class '\(className)', which is not registered (MigrationManager.register(policy:forClassName:))."
        case .mappingDoesNotFitModels(let entityMapping, let reason):
            return "Entity mapping '\(entityMapping)' does not fit the models: \(reason)."
        case .mappingFailed(let entityMapping, let object, let reason):
            return "Entity mapping '\(entityMapping)' failed on \(object): \(reason)."
        }
    }

    /// The same text as ``description``, for `LocalizedError`.
    public var errorDescription: String? { description }
}
