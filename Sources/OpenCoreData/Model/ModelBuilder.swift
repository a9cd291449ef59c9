import Foundation

/// Collects entities for ``ManagedObjectModel/init(versionIdentifiers:_:)``.
@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ entity: EntityDescription) -> [EntityDescription] { [entity] }
    public static func buildBlock(_ parts: [EntityDescription]...) -> [EntityDescription] { parts.flatMap { $0 } }
    public static func buildArray(_ parts: [[EntityDescription]]) -> [EntityDescription] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityDescription]?) -> [EntityDescription] { part ?? [] }
    public static func buildEither(first: [EntityDescription]) -> [EntityDescription] { first }
    public static func buildEither(second: [EntityDescription]) -> [EntityDescription] { second }
}

/// Collects properties for ``EntityDescription/init(_:parent:abstract:class:_:)``.
@resultBuilder
public enum PropertyBuilder {
    public static func buildExpression(_ property: some PropertyDeclaration) -> [PropertyDescription] {
        [property.makeProperty()]
    }
    public static func buildBlock(_ parts: [PropertyDescription]...) -> [PropertyDescription] {
        parts.flatMap { $0 }
    }
    public static func buildArray(_ parts: [[PropertyDescription]]) -> [PropertyDescription] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [PropertyDescription]?) -> [PropertyDescription] { part ?? [] }
    public static func buildEither(first: [PropertyDescription]) -> [PropertyDescription] { first }
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
    func makeProperty() -> PropertyDescription
}

extension PropertyDescription: PropertyDeclaration {
    public func makeProperty() -> PropertyDescription { self }
}

/// An attribute, for the builder syntax: `Attribute("name", .string, optional: false)`.
public struct Attribute: PropertyDeclaration {
    let attribute: AttributeDescription

    public init(_ name: String, _ type: AttributeType, optional: Bool = true,
                default defaultValue: (any Sendable)? = nil, transient: Bool = false,
                configure: (AttributeDescription) -> Void = { _ in }) {
        attribute = AttributeDescription(name: name, type: type, isOptional: optional, defaultValue: defaultValue)
        attribute.isTransient = transient
        configure(attribute)
    }

    public func makeProperty() -> PropertyDescription { attribute }
}

/// A to-one relationship, for the builder syntax: `ToOne("list", "List", inverse: "items")`.
public struct ToOne: PropertyDeclaration {
    let relationship: RelationshipDescription

    public init(_ name: String, _ destination: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
                optional: Bool = true) {
        relationship = RelationshipDescription(name: name, destination: destination, toMany: false, inverse: inverse,
                                               deleteRule: deleteRule, isOptional: optional)
    }

    public func makeProperty() -> PropertyDescription { relationship }
}

/// A to-many relationship, for the builder syntax: `ToMany("items", "Item", inverse: "list")`.
public struct ToMany: PropertyDeclaration {
    let relationship: RelationshipDescription

    public init(_ name: String, _ destination: String, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
                ordered: Bool = false, minCount: Int = 0, maxCount: Int = 0) {
        relationship = RelationshipDescription(name: name, destination: destination, toMany: true, inverse: inverse,
                                               deleteRule: deleteRule, isOrdered: ordered)
        relationship.minCount = minCount
        relationship.maxCount = maxCount
    }

    public func makeProperty() -> PropertyDescription { relationship }
}
