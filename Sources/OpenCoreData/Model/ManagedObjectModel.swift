import Foundation

/// A model: the entities a store holds, with their properties and relationships.
///
/// Build one in code with ``init(_:)`` or load an Xcode model with ``init(contentsOf:)``. Building it
/// checks everything that makes a model inconsistent (unknown destinations, mismatched inverses,
/// duplicate names, names the store could not tell apart, inheritance cycles) and throws a ``ModelError``
/// naming the culprit.
///
/// ```swift
/// let model = try ManagedObjectModel {
///     EntityDescription("Item") {
///         Attribute("name", .string, optional: false)
///         Attribute("createdAt", .date)
///     }
/// }
/// ```
public final class ManagedObjectModel: @unchecked Sendable {
    // @unchecked Sendable: entities are frozen in `init`; nothing mutates after (`versionName` and
    // `versionBundleURL` are set by the loading initializer, before the model is handed out) but the
    // fetch request templates, which are behind a lock.

    /// The entities, in the order given.
    public let entities: [EntityDescription]
    /// Entities by name.
    public let entitiesByName: [String: EntityDescription]
    /// The model's version identifiers (from an Xcode model, often empty).
    public let versionIdentifiers: [String]
    /// Each entity's Core Data version hash (32 bytes), computed once when the model is built; the
    /// store keeps these in its metadata to recognise the model it was written with.
    public let entityVersionHashesByName: [String: Data]
    /// The version's name when the model was loaded from a version of an Xcode model ("Library 2" for
    /// `Library 2.xcdatamodel`); nil for a model built in code.
    public internal(set) var versionName: String?
    /// The `.xcdatamodeld` bundle the model was loaded from, if any: where opening a store written by
    /// another version finds that version (docs/MIGRATION.md).
    public internal(set) var versionBundleURL: URL?
    /// For a model read from a compiled model (`.mom`, `.momd`, a store's `Z_MODELCACHE`): what its archive
    /// holds that was not read, one "Entity.property: key" (or "Entity: …", "model: …") entry each, sorted;
    /// empty when everything was read and for other models. docs/INTEROP.md lists what is read.
    public internal(set) var unreadCompiledModelKeys: [String] = []
    /// The named fetch request templates (the one part of a model that may change after it is built, until
    /// a coordinator uses it).
    let fetchRequestTemplateStore = FetchRequestTemplateStore()
    /// What saves need to know of the derived attributes; nil when the model has none.
    private(set) var derivationPlan: DerivationPlan?
    /// Entities in entity-number order. Our numbers run 1 to the entity count; a store's may have gaps
    /// (entities removed over model versions), so look an entity up by number with ``entity(number:)``.
    package let entitiesByNumber: [EntityDescription]
    /// `entitySlotsByNumber[n]` is the entity numbered `n` (nil where the numbering has a gap).
    private let entitySlotsByNumber: [EntityDescription?]
    /// The SQLite layout this model implies.
    package var schema: StoreSchema { schemaStorage! }
    private var schemaStorage: StoreSchema?

    /// Builds and checks a model from entity descriptions.
    ///
    /// Entity numbers (a row's `Z_ENT`) are ours unless `entityNumbers` gives them: a store written by Core
    /// Data, or over several model versions, may number its entities differently, and a model that reads and
    /// writes it must use the store's numbers (``entityNumbers(ofStoreAt:)`` reads them). They must number
    /// every entity once, from 1 and below 16000 (Core Data's own numbers); gaps are allowed.
    ///
    /// - Throws: ``ModelError`` naming the culprit: an invalid entity, property or index name, two names the
    ///   store could not tell apart (``ModelError/conflictingNames(first:second:storeName:)``), an unknown
    ///   parent, destination or inverse, an inheritance cycle, an invalid default value or constraint, a derivation a save cannot
    ///   compute (``ModelError/invalidDerivation(entity:attribute:reason:)``), or
    ///   ``ModelError/unusableEntityNumbers(reason:)`` for `entityNumbers` that miss an entity, name one the
    ///   model lacks, repeat a number or use one outside 1..<16000.
    public convenience init(entities: [EntityDescription], versionIdentifiers: [String] = [],
                            entityNumbers: [String: Int]? = nil) throws {
        guard !entities.isEmpty else { throw ModelError.emptyModel }
        try self.init(building: entities, versionIdentifiers: versionIdentifiers, entityNumbers: entityNumbers)
    }

    /// A model without entities (Core Data's `NSManagedObjectModel()`): what a coordinator needs to replace
    /// or destroy store files (``PersistentStoreCoordinator/destroyPersistentStore(at:ofType:options:)``)
    /// without knowing their model. It opens no store that holds anything.
    public convenience init() {
        // An empty list passes every check: a failure here is a mistake in this library.
        try! self.init(building: [], versionIdentifiers: [], entityNumbers: nil)
    }

    /// Builds and checks a model from `entities` (empty for ``init()``).
    private init(building entities: [EntityDescription], versionIdentifiers: [String], entityNumbers: [String: Int]?) throws {
        var byName: [String: EntityDescription] = [:]
        // Table names are the uppercased entity names, and SQLite ignores case: `Item` and `ITEM` (or
        // `Straße` and `STRASSE`) would share one table.
        var byTableName: [String: EntityDescription] = [:]
        for entity in entities {
            guard EntityDescription.isValidName(entity.name) else {
                throw ModelError.invalidName(entity: entity.name, property: nil)
            }
            if byName[entity.name] != nil { throw ModelError.duplicateEntity(entity.name) }
            let tableName = StoreSchema.tableName(forEntityNamed: entity.name)
            if let other = byTableName[tableName] {
                throw ModelError.conflictingNames(first: "entity '\(other.name)'", second: "entity '\(entity.name)'",
                                                  storeName: tableName)
            }
            byTableName[tableName] = entity
            if entity.isFrozen, entity.managedObjectModel != nil {
                preconditionFailure("EntityDescription '\(entity.name)' already belongs to another model")
            }
            byName[entity.name] = entity
        }
        self.entities = entities
        self.entitiesByName = byName
        self.versionIdentifiers = versionIdentifiers

        // Inheritance.
        for entity in entities {
            entity.subentities = []
            entity.superentity = nil
        }
        for entity in entities {
            guard let parentName = entity.superentityName else { continue }
            guard let parent = byName[parentName] else {
                throw ModelError.unknownParent(entity: entity.name, parent: parentName)
            }
            entity.superentity = parent
        }
        // Each entity's chain is walked up to an entity already known to reach a root, so the check is
        // linear in the number of entities however deep the inheritance.
        var reachesRoot: Set<ObjectIdentifier> = []
        for entity in entities {
            var chain: [ObjectIdentifier] = []
            var onChain: Set<ObjectIdentifier> = []
            var ancestor: EntityDescription? = entity
            while let current = ancestor, !reachesRoot.contains(ObjectIdentifier(current)) {
                if !onChain.insert(ObjectIdentifier(current)).inserted {
                    throw ModelError.inheritanceCycle(entity: entity.name)
                }
                chain.append(ObjectIdentifier(current))
                ancestor = current.superentity
            }
            reachesRoot.formUnion(chain)
        }
        for entity in entities {
            entity.superentity?.subentities.append(entity)
        }
        for entity in entities { entity.subentities.sort { $0.name < $1.name } }

        // Entity numbers: depth first over the inheritance forest, roots and siblings in name order.
        // An explicit stack rather than recursion: an inheritance chain can be as deep as the model is long.
        var numbered: [EntityDescription] = []
        var unvisited = Array(entities.filter({ $0.superentity == nil }).sorted(by: { $0.name < $1.name }).reversed())
        while let entity = unvisited.popLast() {
            numbered.append(entity)
            entity.entityNumber = numbered.count
            unvisited.append(contentsOf: entity.subentities.reversed())
        }
        // `numbered` stays in inheritance order (parents first), which the steps below need; with a store's
        // numbers, `entitiesByNumber` follows those instead.
        if let entityNumbers {
            try Self.checkStoreNumbering(entityNumbers, of: entities)
            for entity in numbered { entity.entityNumber = entityNumbers[entity.name]! }
            entitiesByNumber = numbered.sorted { $0.entityNumber < $1.entityNumber }
        } else {
            entitiesByNumber = numbered
        }
        var slots = [EntityDescription?](repeating: nil, count: (entitiesByNumber.last?.entityNumber ?? 0) + 1)
        for entity in entitiesByNumber { slots[entity.entityNumber] = entity }
        entitySlotsByNumber = slots

        // Properties, parents before children.
        for entity in numbered {
            try entity.resolveInheritedProperties()
        }
        for entity in numbered {
            entity.entityNumbersIncludingSubentities = [entity.entityNumber]
                + entity.allSubentities.map(\.entityNumber)
        }
        try Self.resolveRelationships(numbered, byName: byName)
        try Self.checkAttributesAndConstraints(numbered)
        try DerivationCheck.check(numbered)
        try Self.checkFetchedProperties(numbered, byName: byName)

        entityVersionHashesByName = Self.computeEntityVersionHashes(entities)
        // Classes named in a model file (`representedClassName`) bound to the program's classes.
        ManagedObjectClassRegistry.bindClasses(of: entities)
        for entity in entities {
            entity.managedObjectModel = self
            entity.freeze()
        }
        ManagedObjectClassRegistry.noteBindings(of: self)
        schemaStorage = try StoreSchema(model: self)
        for entity in numbered {
            let mapping = schema.mapping(for: entity)
            entity.storage = mapping.storage
            entity.attributeColumns = zip(entity.allProperties, mapping.storage).map { property, storage in
                guard case .attribute(_, let column) = storage, let attribute = property as? AttributeDescription else {
                    return nil
                }
                return StoredAttributeColumn(column: column, type: attribute.attributeType)
            }
            entity.tableName = mapping.tableName
            entity.rootEntityNumber = entity.rootEntity.entityNumber
            entity.tableColumnCount = schema.table(named: mapping.tableName)?.columns.count ?? 0
            entity.hasRelationships = !entity.relationshipsByName.isEmpty
            for (slot, property) in entity.allProperties.enumerated() {
                if let attribute = property as? AttributeDescription {
                    if attribute.hasValidationRules || !attribute.isOptional { entity.needsValidation = true }
                    guard let value = attribute.defaultValue else { continue }
                    if attribute.isTransient {
                        entity.transientDefaults[slot] = value
                    } else if let stored = try? ValueConversion.storeValue(value, for: attribute) {
                        entity.defaultChanges[slot] = .attribute(stored)
                    }
                } else if let relationship = property as? RelationshipDescription {
                    if !relationship.isOptional || relationship.minCount > 0 || relationship.maxCount > 0 && relationship.isToMany {
                        entity.needsValidation = true
                    }
                }
            }
        }
        derivationPlan = DerivationPlan(model: self)
    }

    /// Builds a model with the result-builder syntax.
    ///
    /// - Throws: every ``ModelError`` that ``init(entities:versionIdentifiers:entityNumbers:)`` throws for the
    ///   entities built.
    public convenience init(versionIdentifiers: [String] = [],
                            @ModelBuilder _ content: () -> [EntityDescription]) throws {
        try self.init(entities: content(), versionIdentifiers: versionIdentifiers)
    }

    /// Checks that `numbers` give each of `entities` a number below Core Data's reserved ones, each once.
    private static func checkStoreNumbering(_ numbers: [String: Int], of entities: [EntityDescription]) throws {
        let names = Set(entities.map(\.name))
        if let missing = entities.map(\.name).sorted().first(where: { numbers[$0] == nil }) {
            throw ModelError.unusableEntityNumbers(reason: "entity '\(missing)' has no number")
        }
        if let unknown = numbers.keys.sorted().first(where: { !names.contains($0) }) {
            throw ModelError.unusableEntityNumbers(reason: "'\(unknown)' is numbered but is not an entity of the model")
        }
        var nameByNumber: [Int: String] = [:]
        // Gaps are allowed; numbers from 16000 up are Core Data's own (persistent history).
        let usable = 1..<HistoryTables.firstReservedEntityNumber
        for (name, number) in numbers.sorted(by: { $0.key < $1.key }) {
            guard usable.contains(number) else {
                throw ModelError.unusableEntityNumbers(reason: "entity '\(name)' has number \(number), outside \(usable.lowerBound)...\(usable.upperBound - 1)")
            }
            if let other = nameByNumber.updateValue(name, forKey: number) {
                throw ModelError.unusableEntityNumbers(reason: "entities '\(other)' and '\(name)' both have number \(number)")
            }
        }
    }

    /// The entity with this number in the store, if any.
    package func entity(number: Int) -> EntityDescription? {
        number >= 1 && number < entitySlotsByNumber.count ? entitySlotsByNumber[number] : nil
    }

    private static func resolveRelationships(_ entities: [EntityDescription],
                                             byName: [String: EntityDescription]) throws {
        for entity in entities {
            for case let relationship as RelationshipDescription in entity.properties {
                guard let destination = byName[relationship.destinationEntityName] else {
                    throw ModelError.unknownDestination(entity: entity.name, relationship: relationship.name,
                                                        destination: relationship.destinationEntityName)
                }
                relationship.destinationEntity = destination
                if !relationship.isToMany && relationship.isOrdered {
                    throw ModelError.invalidRelationship(entity: entity.name, relationship: relationship.name,
                                                         reason: "a to-one relationship cannot be ordered")
                }
                if relationship.minCount < 0 || relationship.maxCount < 0
                    || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount) {
                    throw ModelError.invalidRelationship(entity: entity.name, relationship: relationship.name,
                                                         reason: "its minimum count exceeds its maximum count")
                }
            }
        }
        for entity in entities {
            for case let relationship as RelationshipDescription in entity.properties {
                guard let inverseName = relationship.inverseName else {
                    relationship.inverseRelationship = nil
                    continue
                }
                let destination = relationship.destinationEntity!
                guard let inverse = destination.relationshipsByName[inverseName] else {
                    throw ModelError.unknownInverse(entity: entity.name, relationship: relationship.name,
                                                    inverse: inverseName)
                }
                if let back = inverse.inverseName, back != relationship.name {
                    throw ModelError.mismatchedInverse(
                        entity: entity.name, relationship: relationship.name,
                        reason: "'\(destination.name).\(inverseName)' names '\(back)' as its inverse")
                }
                guard entity.isKind(of: inverse.destinationEntity) || inverse.destinationEntity.isKind(of: entity)
                else {
                    throw ModelError.mismatchedInverse(
                        entity: entity.name, relationship: relationship.name,
                        reason: "'\(destination.name).\(inverseName)' points at '\(inverse.destinationEntityName)'")
                }
                // One side transient and the other stored is allowed, as Core Data allows it (real models
                // have it): the store keeps the stored side as one without an inverse (`storedInverse`).
                relationship.inverseRelationship = inverse
            }
        }
    }

    private static func checkAttributesAndConstraints(_ entities: [EntityDescription]) throws {
        for entity in entities {
            for case let attribute as AttributeDescription in entity.properties {
                if let value = attribute.defaultValue {
                    do {
                        _ = try ValueConversion.storeValue(value, for: attribute)
                    } catch let error as ObjectGraphError {
                        throw ModelError.invalidDefaultValue(entity: entity.name, attribute: attribute.name,
                                                             reason: error.description)
                    }
                }
                if let pattern = attribute.regularExpression,
                   (try? NSRegularExpression(pattern: pattern)) == nil {
                    throw ModelError.invalidDefaultValue(entity: entity.name, attribute: attribute.name,
                                                         reason: "regular expression '\(pattern)' does not compile")
                }
            }
            for constraint in entity.uniquenessConstraints {
                for key in constraint {
                    let property = entity.propertiesByName[key]
                    let usable = (property as? AttributeDescription).map { !$0.isTransient }
                        ?? (property as? RelationshipDescription).map { !$0.isToMany && !$0.isTransient }
                        ?? false
                    if !usable { throw ModelError.unknownConstraintKey(entity: entity.name, key: key) }
                }
            }
            for index in entity.indexes {
                guard SQLIdentifier.isPlainName(index.name) else {
                    throw ModelError.invalidIndexName(entity: entity.name, index: index.name)
                }
                for key in index.propertyNames {
                    guard let property = entity.propertiesByName[key], !property.isTransient,
                          !((property as? RelationshipDescription)?.isToMany ?? false) else {
                        throw ModelError.unknownIndexKey(entity: entity.name, index: index.name, key: key)
                    }
                }
            }
        }
    }
}
