import Foundation

/// What an ``EntityMapping`` does (Core Data's `NSEntityMappingType`).
public enum EntityMappingType: String, Sendable, Hashable, CaseIterable {
    /// An entity with no source: nothing is made from the source store.
    case add
    /// An entity with no destination: its objects are not carried over.
    case remove
    /// The entity is the same in both versions: objects are made from the source's, property by property.
    case copy
    /// The entity changed: objects are made from the source's through the property mappings' expressions.
    case transform
    /// Objects are made by a migration policy class of the application's: refused
    /// (``MigrationError/unsupportedMapping(entityMapping:reason:)``).
    case custom

    /// The type a mapping model file names (`mappingtypename`: `Copy`, `Add`, `Remove`, `Transform`,
    /// `Custom`, or Core Data's constant names such as `NSCopyEntityMappingType`); nil for `Undefined`.
    init?(fileName: String) {
        var name = fileName.lowercased()
        if name.hasPrefix("ns"), name.hasSuffix("entitymappingtype") {
            name = String(name.dropFirst(2).dropLast("entitymappingtype".count))
        }
        guard let type = EntityMappingType(rawValue: name) else { return nil }
        self = type
    }
}

/// How the objects of one source entity become objects of one destination entity (Core Data's
/// `NSEntityMapping`).
///
/// ```swift
/// var mapping = EntityMapping(name: "CarToVehicle", mappingType: .transform,
///                             sourceEntityName: "Car", destinationEntityName: "Vehicle")
/// mapping.attributeMappings = [PropertyMapping(name: "plate", valueExpression: try MappingExpression(format: "$source.registration"))]
/// ```
public struct EntityMapping: Sendable, Hashable, CustomStringConvertible {
    /// The name relationship mappings refer to it by (`destinationInstancesForEntityMappingNamed:`).
    public var name: String
    /// What the mapping does.
    public var mappingType: EntityMappingType
    /// The source entity (nil for ``EntityMappingType/add``).
    public var sourceEntityName: String?
    /// The destination entity (nil for ``EntityMappingType/remove``).
    public var destinationEntityName: String?
    /// Which source objects the mapping reads (nil: every object of ``sourceEntityName``).
    public var sourceExpression: MappingSourceFetch?
    /// How each destination attribute is filled; attributes not listed keep their default values.
    public var attributeMappings: [PropertyMapping]
    /// How each destination relationship is filled, after every object was made.
    public var relationshipMappings: [PropertyMapping]
    /// A migration policy class of the application's (`NSEntityMigrationPolicy` subclass). Only nil and
    /// `NSEntityMigrationPolicy` itself are supported; any other is refused by name.
    public var entityMigrationPolicyClassName: String?
    /// The version hash of the source entity the mapping was made for (a compiled `.cdm` records it); when
    /// set, a source model whose entity hashes otherwise is refused
    /// (``MigrationError/mappingDoesNotFitModels(entityMapping:reason:)``).
    public var sourceEntityVersionHash: Data?
    /// The version hash of the destination entity the mapping was made for; checked as the source's is.
    public var destinationEntityVersionHash: Data?
    /// The application's own values (Core Data's `userInfo`), for its migration policy to read.
    public var userInfo: [String: String] = [:]

    /// A mapping with no property mappings and no policy.
    public init(name: String, mappingType: EntityMappingType, sourceEntityName: String?, destinationEntityName: String?,
                sourceExpression: MappingSourceFetch? = nil, attributeMappings: [PropertyMapping] = [],
                relationshipMappings: [PropertyMapping] = [], entityMigrationPolicyClassName: String? = nil) {
        self.name = name
        self.mappingType = mappingType
        self.sourceEntityName = sourceEntityName
        self.destinationEntityName = destinationEntityName
        self.sourceExpression = sourceExpression
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.entityMigrationPolicyClassName = entityMigrationPolicyClassName
    }

    /// One line: name, type, entities, filter, then each property mapping (`ocd migrate` prints it).
    public var description: String {
        var line = "\(name): \(mappingType.rawValue) \(sourceEntityName ?? "-") → \(destinationEntityName ?? "-")"
        if let predicate = sourceExpression?.predicate { line += " where \(predicate.predicateFormat)" }
        if let policy = entityMigrationPolicyClassName { line += " policy \(policy)" }
        let properties = (attributeMappings + relationshipMappings).map { "\($0.name) = \($0.valueExpression?.format ?? "default")" }
        if !properties.isEmpty { line += "; " + properties.joined(separator: "; ") }
        return line
    }
}
