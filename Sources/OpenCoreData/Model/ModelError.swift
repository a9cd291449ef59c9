import Foundation

/// Why a model was refused. Each case names the entity and, where there is one, the property.
public enum ModelError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The model has no entities.
    case emptyModel
    /// Two entities share this name.
    case duplicateEntity(String)
    /// A name that is not a letter followed by letters, digits and underscores: the entity's own (`property`
    /// nil) or one of its properties'.
    case invalidName(entity: String, property: String?)
    /// An entity declares a property twice, or again after a parent entity declared it.
    case duplicateProperty(entity: String, property: String)
    /// An entity names a parent entity the model does not have.
    case unknownParent(entity: String, parent: String)
    /// An entity is its own ancestor.
    case inheritanceCycle(entity: String)
    /// A relationship points at an entity the model does not have.
    case unknownDestination(entity: String, relationship: String, destination: String)
    /// A relationship names an inverse its destination entity does not have.
    case unknownInverse(entity: String, relationship: String, inverse: String)
    /// A relationship and its inverse do not point back at each other; `reason` says how.
    case mismatchedInverse(entity: String, relationship: String, reason: String)
    /// A relationship that cannot be built as described (an ordered to-one, a minimum count above the
    /// maximum, a missing destination or unknown delete rule in a model file); `reason` says which.
    case invalidRelationship(entity: String, relationship: String, reason: String)
    /// An attribute's default value does not fit its type, or its validation pattern does not compile.
    case invalidDefaultValue(entity: String, attribute: String, reason: String)
    /// A derived attribute whose derivation expression does not parse, or reads something a save cannot
    /// compute (see ``AttributeDescription/derivationExpression``); `reason` says what.
    case invalidDerivation(entity: String, attribute: String, reason: String)
    /// A fetched property that cannot run: an entity the model lacks, a predicate that does not parse.
    case invalidFetchedProperty(entity: String, property: String, reason: String)
    /// A composite attribute the store cannot keep (no elements, a default value of its own, an element of
    /// a type a composite cannot hold, a repeated element, or a model file naming an unknown composite).
    case invalidComposite(entity: String, attribute: String, reason: String)
    /// An attribute type the library does not know, in a model file.
    case unknownType(entity: String, property: String, type: String)
    /// A uniqueness constraint names a key that is not one of the entity's attributes or to-one relationships.
    case unknownConstraintKey(entity: String, key: String)
    /// An index names a key that is not one of the entity's persistent properties.
    case unknownIndexKey(entity: String, index: String, key: String)
    /// An index name that is not a plain identifier (letters, digits, underscores, not starting with a digit).
    case invalidIndexName(entity: String, index: String)
    /// Two parts of the model (entities, relationships, indexes) would get one name in the store, or a
    /// name Core Data keeps for itself; `first` and `second` describe both, `storeName` is the name.
    case conflictingNames(first: String, second: String, storeName: String)
    /// A model file that cannot be read or is not a valid model; `reason` says where and why.
    case malformedModelFile(path: String, reason: String)
    /// A `.xcdatamodel` folder in Xcode 3's binary form (an `elements` keyed archive of Xcode's own editing
    /// classes beside `layout`, no `contents` file) holding something the reader does not map: `construct`
    /// names it (a superentity, indexes, a class or key outside the known layout; docs/INTEROP.md). The
    /// message says how to convert the model.
    case xcode3BinaryModel(folder: String, construct: String)
    /// No `<name>.xcdatamodeld` or `<name>.xcdatamodel` in the places searched.
    case modelNotFound(name: String, searched: [String])
    /// A `.xcdatamodeld` bundle has no version of that name (`available` lists the ones it has).
    case versionNotFound(bundle: String, version: String, available: [String])
    /// Entity numbers given for a model (a store's, from its `Z_PRIMARYKEY`) that do not number each entity
    /// once, 1 to the entity count; `reason` names the entity.
    case unusableEntityNumbers(reason: String)
    /// A fetch request template (``ManagedObjectModel/setFetchRequestTemplate(_:forName:)``, a model file's
    /// `<fetchRequest>` or `NSFetchRequestTemplates`) that cannot be kept: no name, an entity the model does
    /// not have, a predicate that does not parse or is not read, a setting out of range; `reason` says which.
    case invalidFetchRequestTemplate(name: String, reason: String)
    /// ``ManagedObjectModel/fetchRequestFromTemplate(withName:substitutionVariables:)`` was given no value for a
    /// `$variable` the template's predicate uses.
    case missingTemplateVariable(template: String, variable: String)

    /// The message naming the entity and property at fault.
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
        case .invalidDerivation(let entity, let attribute, let reason):
            return "Derived attribute '\(entity).\(attribute)': \(reason)."
        case .invalidFetchedProperty(let entity, let property, let reason):
            return "Fetched property '\(entity).\(property)': \(reason)."
        case .invalidComposite(let entity, let attribute, let reason):
            return "Composite attribute '\(entity).\(attribute)' is invalid: \(reason)."
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
        case .xcode3BinaryModel(let folder, let construct):
            return "The model at \(folder) is in Xcode 3's binary format (an 'elements' archive, no 'contents' file) "
                + "and holds \(construct), which the reader of that format does not map. Open it in Xcode 4.1 or "
                + "later and save it in the current (XML) format, or compile it with Xcode's momc into a .mom, which "
                + "ManagedObjectModel(compiledModelAt:) reads."
        case .modelNotFound(let name, let searched):
            return "No model named '\(name)' (\(name).xcdatamodeld or \(name).xcdatamodel) in \(searched.joined(separator: ", "))."
        case .versionNotFound(let bundle, let version, let available):
            let known = available.isEmpty ? "it is not a .xcdatamodeld bundle" : "it has " + available.map { "'\($0)'" }.joined(separator: ", ")
            return "The model \(bundle) has no version '\(version)': \(known)."
        case .unusableEntityNumbers(let reason):
            return "The entity numbers cannot number this model: \(reason)."
        case .invalidFetchRequestTemplate(let name, let reason):
            return "Fetch request template '\(name)': \(reason)."
        case .missingTemplateVariable(let template, let variable):
            return "Fetch request template '\(template)' uses $\(variable), and no value was given for it."
        }
    }

    /// The same text as ``description``, for `LocalizedError`.
    public var errorDescription: String? { description }
}
