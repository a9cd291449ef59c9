import Foundation

/// A named index over some of an entity's properties, created in the store.
public struct IndexDescription: Sendable, Hashable {
    /// The index's name in the store (letters, digits and underscores, not starting with a digit).
    public var name: String
    /// The indexed properties, in index order.
    public var propertyNames: [String]
    /// An index named `name` over `propertyNames`, in that order.
    public init(name: String, propertyNames: [String]) {
        self.name = name
        self.propertyNames = propertyNames
    }
}

/// An entity: a kind of object, with attributes and relationships, possibly inheriting from a parent.
///
/// ```swift
/// let item = EntityDescription(name: "Item", properties: [
///     AttributeDescription(name: "name", type: .string, isOptional: false),
///     AttributeDescription(name: "createdAt", type: .date),
/// ])
/// ```
public final class EntityDescription: @unchecked Sendable, CustomStringConvertible, Hashable {
    // @unchecked Sendable: configured before its model is built, read-only afterwards (`checkMutable`).
    // The same holds for the `@exclusivity(unchecked)` fields below: they are written only while the model is
    // built (its initializer, on one thread, before the model is handed out), then only read, so no two
    // accesses can overlap. They are read per object and per row (slots, storage, columns, the class), and
    // skipping the check saves a `swift_beginAccess`, about 80 instructions, on each read
    // (`load-batch-by-id`: 122.6 M → 109.5 M instructions with the objects', contexts' and results' fields).

    /// The entity's name, unique in its model.
    public var name: String { didSet { checkMutable() } }
    /// The class name from the model file (informational; see ``managedObjectClass``).
    public var managedObjectClassName: String? { didSet { checkMutable() } }
    /// The Swift class instantiated for objects of this entity.
    @exclusivity(unchecked) public var managedObjectClass: ManagedObject.Type = ManagedObject.self { didSet { checkMutable() } }
    /// Abstract entities have no objects of their own, only objects of their sub-entities.
    public var isAbstract = false { didSet { checkMutable() } }
    /// The name of the parent entity, resolved when the model is built.
    public var superentityName: String? { didSet { checkMutable() } }
    /// Enters the version hash, to force a new hash without a schema change.
    public var versionHashModifier: String? { didSet { checkMutable() } }
    /// The name this entity had in an earlier model version.
    public var renamingIdentifier: String? { didSet { checkMutable() } }
    /// Free-form information from the model file.
    public var userInfo: [String: String] = [:] { didSet { checkMutable() } }
    /// Groups of property names whose values must be unique together (each group one constraint).
    public var uniquenessConstraints: [[String]] = [] { didSet { checkMutable() } }
    /// Indexes created in the store.
    public var indexes: [IndexDescription] = [] { didSet { checkMutable() } }

    /// The fetched properties this entity declares itself; kept apart from ``properties`` as they have no
    /// storage (see ``FetchedPropertyDescription``).
    public private(set) var fetchedProperties: [FetchedPropertyDescription] = []

    /// Adds a fetched property; only before the model is built. (``addProperty(_:)``, the initializers and
    /// the builder put a ``FetchedPropertyDescription`` here too.)
    public func addFetchedProperty(_ property: FetchedPropertyDescription) {
        checkMutable()
        fetchedProperties.append(property)
    }

    /// The fetched property of that name, declared here or by an ancestor.
    public func fetchedProperty(named name: String) -> FetchedPropertyDescription? {
        fetchedProperties.first { $0.name == name } ?? superentity?.fetchedProperty(named: name)
    }

    /// The properties this entity declares itself (not inherited ones).
    @exclusivity(unchecked) public private(set) var properties: [PropertyDescription]

    /// The parent entity, set when the model is built. Weak: the model owns its entities, and strong links
    /// both ways would keep every model alive forever.
    public internal(set) var superentity: EntityDescription? {
        get { superentityLink?.entity }
        set { superentityLink = newValue?.link }
    }
    private weak var superentityLink: EntityLink?
    /// What back-references to this entity hold (see ``EntityLink``).
    let link = EntityLink()
    /// Direct sub-entities, in name order, set when the model is built.
    @exclusivity(unchecked) public internal(set) var subentities: [EntityDescription] = []
    /// The model this entity belongs to.
    public internal(set) weak var managedObjectModel: ManagedObjectModel?

    // Filled in when the model is built.
    /// Every property, inherited ones first, in declaration order.
    @exclusivity(unchecked) public private(set) var allProperties: [PropertyDescription] = []
    /// Every property by name, inherited ones included.
    @exclusivity(unchecked) public private(set) var propertiesByName: [String: PropertyDescription] = [:]
    /// Every attribute by name, inherited ones included.
    @exclusivity(unchecked) public private(set) var attributesByName: [String: AttributeDescription] = [:]
    /// Every relationship by name, inherited ones included.
    @exclusivity(unchecked) public private(set) var relationshipsByName: [String: RelationshipDescription] = [:]
    /// The entity number (`Z_ENT`) in the store.
    @exclusivity(unchecked) public internal(set) var entityNumber = 0
    /// Position of each property in ``allProperties``.
    @exclusivity(unchecked) package var slotByName: [String: Int] = [:]
    /// The names of ``allProperties``, in slot order (see `slot(forKey:)`).
    @exclusivity(unchecked) private(set) var slotNames: [String] = []
    /// This entity and all its descendants' entity numbers.
    @exclusivity(unchecked) package var entityNumbersIncludingSubentities: [Int] = []
    /// Where each property (by slot) lives in the store; set with the model's schema.
    @exclusivity(unchecked) package var storage: [StoreSchema.PropertyStorage] = []
    /// For each slot, where a stored attribute's value sits in the row, with its type (nil for other
    /// properties): what reading an attribute needs, without copying ``storage``'s strings.
    @exclusivity(unchecked) var attributeColumns: [StoredAttributeColumn?] = []
    /// The entity's table in the store; set with the model's schema.
    @exclusivity(unchecked) package var tableName = ""
    /// The root entity's number: entities sharing it share a table and its primary keys.
    @exclusivity(unchecked) var rootEntityNumber = 0
    /// How many columns that table has.
    @exclusivity(unchecked) var tableColumnCount = 0
    /// Default values of stored attributes, converted once: what a new object starts with.
    @exclusivity(unchecked) var defaultChanges = SlotChanges()
    /// Default values of transient attributes.
    @exclusivity(unchecked) var transientDefaults: [Int: Any] = [:]
    /// Whether any property is a relationship (saves skip relationship work for entities without).
    @exclusivity(unchecked) var hasRelationships = false
    /// Whether any property has a validation rule, a required value, or a count bound.
    @exclusivity(unchecked) var needsValidation = false

    @exclusivity(unchecked) var isFrozen = false

    /// Creates an entity with its own properties.
    public init(name: String, properties: [PropertyDescription] = [], superentityName: String? = nil,
                isAbstract: Bool = false) {
        self.name = name
        // Fetched properties have no storage: they are kept apart from the stored properties and their slots.
        self.properties = properties.filter { !($0 is FetchedPropertyDescription) }
        self.fetchedProperties = properties.compactMap { $0 as? FetchedPropertyDescription }
        self.superentityName = superentityName
        self.isAbstract = isAbstract
        link.entity = self
    }

    deinit {
        link.entity = nil
    }

    /// Adds a property this entity declares.
    public func addProperty(_ property: PropertyDescription) {
        checkMutable()
        if let fetched = property as? FetchedPropertyDescription { return fetchedProperties.append(fetched) }
        properties.append(property)
    }

    func checkMutable() {
        if isFrozen { preconditionFailure("EntityDescription '\(name)' changed after its model was built") }
    }

    /// The root of this entity's inheritance tree: the entity whose table holds its rows.
    public var rootEntity: EntityDescription {
        var entity = self
        while let parent = entity.superentity { entity = parent }
        return entity
    }

    /// Whether `self` is `other` or descends from it.
    public func isKind(of other: EntityDescription) -> Bool {
        var entity: EntityDescription? = self
        while let current = entity {
            if current === other { return true }
            entity = current.superentity
        }
        return false
    }

    /// All descendants, depth first.
    public var allSubentities: [EntityDescription] {
        // Depth first, each child before its own subentities; an explicit stack, as a chain can be as deep
        // as the model is long (and recursion with array concatenation was cubic in that depth).
        var result: [EntityDescription] = []
        var unvisited = Array(subentities.reversed())
        while let entity = unvisited.popLast() {
            result.append(entity)
            unvisited.append(contentsOf: entity.subentities.reversed())
        }
        return result
    }

    /// `EntityDescription(<name>)`, for logs and debugging.
    public var description: String { "EntityDescription(\(name))" }

    /// Whether both are the same instance: an entity is equal only to itself.
    public static func == (lhs: EntityDescription, rhs: EntityDescription) -> Bool { lhs === rhs }
    /// Hashes the instance's identity, in step with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: Building

    /// Computes the inherited property tables; called by the model, parents before children.
    func resolveInheritedProperties() throws {
        var all = superentity?.allProperties ?? []
        var seen = Set(all.map(\.name))
        for property in properties {
            guard !seen.contains(property.name) else {
                throw ModelError.duplicateProperty(entity: name, property: property.name)
            }
            guard Self.isValidName(property.name) else {
                throw ModelError.invalidName(entity: name, property: property.name)
            }
            seen.insert(property.name)
            property.entity = self
            all.append(property)
            // A composite's elements are stored as attributes of their own, right after it, named by their
            // key paths (`magnitude.richter`), which no declared property can clash with.
            if (property as? AttributeDescription)?.attributeType == .composite, !(property is CompositeAttributeDescription) {
                throw ModelError.invalidComposite(entity: name, attribute: property.name,
                                                  reason: "declare it as a CompositeAttributeDescription with its elements")
            }
            if let composite = property as? CompositeAttributeDescription {
                try composite.makeStoredElements(entity: name)
                for element in composite.storedElements {
                    element.entity = self
                    all.append(element)
                }
            }
        }
        allProperties = all
        slotNames = all.map(\.name)
        propertiesByName = [:]
        attributesByName = [:]
        relationshipsByName = [:]
        slotByName = [:]
        for (slot, property) in all.enumerated() {
            propertiesByName[property.name] = property
            slotByName[property.name] = slot
            if let attribute = property as? AttributeDescription { attributesByName[property.name] = attribute }
            if let relationship = property as? RelationshipDescription {
                relationshipsByName[property.name] = relationship
            }
        }
    }

    /// Up to this many properties, `slot(forKey:)` compares names instead of hashing the key.
    static let linearSlotSearchLimit = 8

    /// The slot of the property named `key`, or nil. Narrow entities compare names one by one, which for the
    /// short names properties have is cheaper than hashing the key; wider ones use `slotByName`.
    @inline(__always)
    func slot(forKey key: String) -> Int? {
        guard slotNames.count <= Self.linearSlotSearchLimit else { return slotByName[key] }
        for index in slotNames.indices where slotNames[index] == key { return index }
        return nil
    }

    func freeze() {
        isFrozen = true
        for property in properties {
            property.isFrozen = true
            for element in (property as? CompositeAttributeDescription)?.storedElements ?? [] { element.isFrozen = true }
        }
        for property in fetchedProperties { property.isFrozen = true }
    }

    /// Whether `name` may name an entity or property (see ``SQLIdentifier/isModelName(_:)``).
    static func isValidName(_ name: String) -> Bool { SQLIdentifier.isModelName(name) }
}
