import Foundation

/// Collects entities for ``ManagedObjectModel/init(versionIdentifiers:_:)``.
@resultBuilder
public enum ModelBuilder {
    /// One entity.
    public static func buildExpression(_ entity: EntityDescription) -> [EntityDescription] { [entity] }
    /// The entities of a block, in order.
    public static func buildBlock(_ parts: [EntityDescription]...) -> [EntityDescription] { parts.flatMap { $0 } }
    /// The entities of a `for` loop, in order.
    public static func buildArray(_ parts: [[EntityDescription]]) -> [EntityDescription] { parts.flatMap { $0 } }
    /// The entities of an `if` without `else` (none when it does not hold).
    public static func buildOptional(_ part: [EntityDescription]?) -> [EntityDescription] { part ?? [] }
    /// The entities of an `if`'s first branch.
    public static func buildEither(first: [EntityDescription]) -> [EntityDescription] { first }
    /// The entities of an `if`'s `else` branch.
    public static func buildEither(second: [EntityDescription]) -> [EntityDescription] { second }
}

/// Collects properties for ``EntityDescription/init(_:parent:abstract:class:_:)``.
@resultBuilder
public enum PropertyBuilder {
    /// One property, from a description or an ``Attribute``, ``ToOne`` or ``ToMany`` declaration.
    public static func buildExpression(_ property: some PropertyDeclaration) -> [PropertyDescription] {
        [property.makeProperty()]
    }
    /// The properties of a block, in order.
    public static func buildBlock(_ parts: [PropertyDescription]...) -> [PropertyDescription] {
        parts.flatMap { $0 }
    }
    /// The properties of a `for` loop, in order.
    public static func buildArray(_ parts: [[PropertyDescription]]) -> [PropertyDescription] { parts.flatMap { $0 } }
    /// The properties of an `if` without `else` (none when it does not hold).
    public static func buildOptional(_ part: [PropertyDescription]?) -> [PropertyDescription] { part ?? [] }
    /// The properties of an `if`'s first branch.
    public static func buildEither(first: [PropertyDescription]) -> [PropertyDescription] { first }
    /// The properties of an `if`'s `else` branch.
    public static func buildEither(second: [PropertyDescription]) -> [PropertyDescription] { second }
}

extension EntityDescription {
    /// Declares an entity with the builder syntax.
    ///
    /// ```swift
    /// EntityDescription("Item", class: Item.self) {
    ///     Attribute("name", .string, optional: false)
    ///     ToOne("list", "List", inverse: "items")
    /// }
    /// ```
    public convenience init(_ name: String, parent: String? = nil, abstract: Bool = false,
                            class objectClass: ManagedObject.Type = ManagedObject.self,
                            uniquenessConstraints: [[String]] = [], indexes: [IndexDescription] = [],
                            @PropertyBuilder _ properties: () -> [PropertyDescription] = { [] }) {
        self.init(name: name, properties: properties(), superentityName: parent, isAbstract: abstract)
        self.managedObjectClass = objectClass
        self.managedObjectClassName = objectClass == ManagedObject.self ? nil : String(describing: objectClass)
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
    }
}

/// Something the property builder accepts: a description, or one of the declarations below.
public protocol PropertyDeclaration {
    /// The property description the declaration stands for.
    func makeProperty() -> PropertyDescription
}

extension PropertyDescription: PropertyDeclaration {
    /// The description itself.
    public func makeProperty() -> PropertyDescription { self }
}

/// An attribute, for the builder syntax: `Attribute("name", .string, optional: false)`.
public struct Attribute: PropertyDeclaration {
    let attribute: AttributeDescription

    /// An attribute `name` of `type`; `default` is its default value, `transient` keeps it out of the store,
    /// and `configure` sets anything else on the description (validation rules, for example).
    public init(_ name: String, _ type: AttributeType, optional: Bool = true,
                default defaultValue: (any Sendable)? = nil, transient: Bool = false,
                configure: (AttributeDescription) -> Void = { _ in }) {
        attribute = AttributeDescription(name: name, type: type, isOptional: optional, defaultValue: defaultValue)
        attribute.isTransient = transient
        configure(attribute)
    }

    /// The attribute's description.
    public func makeProperty() -> PropertyDescription { attribute }
}

/// A to-one relationship, for the builder syntax: `ToOne("list", "List", inverse: "items")`.
public struct ToOne: PropertyDeclaration {
    let relationship: RelationshipDescription

    /// A to-one relationship `name` to entity `destination`, with its inverse's name, what deleting the
    /// object does to the related one, and whether it may be empty.
    public init(_ name: String, _ destination: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
                optional: Bool = true) {
        relationship = RelationshipDescription(name: name, destination: destination, toMany: false, inverse: inverse,
                                               deleteRule: deleteRule, isOptional: optional)
    }

    /// The relationship's description.
    public func makeProperty() -> PropertyDescription { relationship }
}

/// A to-many relationship, for the builder syntax: `ToMany("items", "Item", inverse: "list")`.
public struct ToMany: PropertyDeclaration {
    let relationship: RelationshipDescription

    /// A to-many relationship `name` to entity `destination`, with its inverse's name, what deleting the
    /// object does to the related ones, whether it keeps an order, and its minimum and maximum counts (0: no
    /// limit).
    public init(_ name: String, _ destination: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
                ordered: Bool = false, minCount: Int = 0, maxCount: Int = 0) {
        relationship = RelationshipDescription(name: name, destination: destination, toMany: true, inverse: inverse,
                                               deleteRule: deleteRule, isOrdered: ordered)
        relationship.minCount = minCount
        relationship.maxCount = maxCount
    }

    /// The relationship's description.
    public func makeProperty() -> PropertyDescription { relationship }
}
