import Foundation

/// Why a model was refused. Each case names the entity and, where there is one, the property.
public enum ModelError: Error, Equatable, CustomStringConvertible, LocalizedError {
    case emptyModel
    case duplicateEntity(String)
    case invalidName(entity: String, property: String?)
    case duplicateProperty(entity: String, property: String)
    case unknownParent(entity: String, parent: String)
    case inheritanceCycle(entity: String)
    case unknownDestination(entity: String, relationship: String, destination: String)
    case unknownInverse(entity: String, relationship: String, inverse: String)
    case mismatchedInverse(entity: String, relationship: String, reason: String)
    case invalidRelationship(entity: String, relationship: String, reason: String)
    case invalidDefaultValue(entity: String, attribute: String, reason: String)
    case unknownType(entity: String, property: String, type: String)
    case unknownConstraintKey(entity: String, key: String)
    case unknownIndexKey(entity: String, index: String, key: String)
    /// An index name that is not a plain identifier (letters, digits, underscores, not starting with a digit).
    case invalidIndexName(entity: String, index: String)
    /// Two parts of the model (entities, relationships, indexes) would get one name in the store, or a
    /// name Core Data keeps for itself; `first` and `second` describe both, `storeName` is the name.
    case conflictingNames(first: String, second: String, storeName: String)
    case malformedModelFile(path: String, reason: String)
    /// No `<name>.xcdatamodeld` or `<name>.xcdatamodel` in the places searched.
    case modelNotFound(name: String, searched: [String])
    /// A `.xcdatamodeld` bundle has no version of that name (`available` lists the ones it has).
    case versionNotFound(bundle: String, version: String, available: [String])
    /// Entity numbers given for a model (a store's, from its `Z_PRIMARYKEY`) that do not number each entity
    /// once, 1 to the entity count; `reason` names the entity.
    case unusableEntityNumbers(reason: String)

    public var description: String {
        switch self {
        case .emptyModel: return "The model has no entities."
        case .duplicateEntity(let name): return "The model declares entity '\(name)' more than once."
        case .invalidName(let entity, let property?):
            return "Entity '\(entity)': '\(property)' is not a valid property name (a letter, then letters, digits and underscores)."
        case .invalidName(let entity, nil):
            return "'\(entity)' is not a valid entity name (a letter, then letters, digits and underscores)."
        case .duplicateProperty(let entity, let property):
            return "Entity '\(entity)' declares property '\(property)' more than once (or again after a parent)."
        case .unknownParent(let entity, let parent):
            return "Entity '\(entity)' names parent entity '\(parent)', which the model does not have."
        case .inheritanceCycle(let entity): return "Entity '\(entity)' is its own ancestor."
        case .unknownDestination(let entity, let relationship, let destination):
            return "Relationship '\(entity).\(relationship)' points at entity '\(destination)', which the model does not have."
        case .unknownInverse(let entity, let relationship, let inverse):
            return "Relationship '\(entity).\(relationship)' names inverse '\(inverse)', which its destination does not have."
        case .mismatchedInverse(let entity, let relationship, let reason):
            return "Relationship '\(entity).\(relationship)' has a mismatched inverse: \(reason)."
        case .invalidRelationship(let entity, let relationship, let reason):
            return "Relationship '\(entity).\(relationship)': \(reason)."
        case .invalidDefaultValue(let entity, let attribute, let reason):
            return "Attribute '\(entity).\(attribute)' has an invalid default value: \(reason)."
        case .unknownType(let entity, let property, let type):
            return "Attribute '\(entity).\(property)' has unknown type '\(type)'."
        case .unknownConstraintKey(let entity, let key):
            return "Entity '\(entity)' has a uniqueness constraint on '\(key)', which is not one of its attributes or to-one relationships."
        case .unknownIndexKey(let entity, let index, let key):
            return "Entity '\(entity)' index '\(index)' names '\(key)', which is not one of its persistent properties."
        case .invalidIndexName(let entity, let index):
            return "Entity '\(entity)': '\(index)' is not a valid index name (letters, digits and underscores, not starting with a digit)."
        case .conflictingNames(let first, let second, let storeName):
            return "\(first) and \(second) would both be named '\(storeName)' in the store (SQLite ignores case in names)."
        case .malformedModelFile(let path, let reason):
            return "The model file at \(path) cannot be read: \(reason)."
        case .modelNotFound(let name, let searched):
            return "No model named '\(name)' (\(name).xcdatamodeld or \(name).xcdatamodel) in \(searched.joined(separator: ", "))."
        case .versionNotFound(let bundle, let version, let available):
            let known = available.isEmpty ? "it is not a .xcdatamodeld bundle" : "it has " + available.map { "'\($0)'" }.joined(separator: ", ")
            return "The model \(bundle) has no version '\(version)': \(known)."
        case .unusableEntityNumbers(let reason):
            return "The entity numbers cannot number this model: \(reason)."
        }
    }

    public var errorDescription: String? { description }
}
