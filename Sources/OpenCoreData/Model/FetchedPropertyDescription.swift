import Foundation

/// A fetched property (Core Data's `NSFetchedPropertyDescription`): a named fetch run for an object when
/// the property is read, giving an array of objects. Not stored: no column, no part of the version hash.
///
/// The predicate may name the object read from as `$FETCH_SOURCE` (also `$FETCH_SOURCE.key.path`) and the
/// description as `$FETCHED_PROPERTY` (`$FETCHED_PROPERTY.userInfo.key` reads the property's `userInfo`).
/// ``ManagedObject/value(forKey:)`` runs the fetch on first read and keeps the result's IDs until
/// ``ManagedObjectContext/refresh(_:mergeChanges:)`` (docs/FEATURES.md, "Fetched properties").
///
/// ```swift
/// let model = try ManagedObjectModel {
///     EntityDescription("Person") {
///         Attribute("city", .string)
///         FetchedPropertyDescription(name: "neighbours", entityName: "Person",
///                                    predicate: try QueryPredicate(format: "city == $FETCH_SOURCE.city"))
///     }
/// }
/// ```
public final class FetchedPropertyDescription: PropertyDescription, @unchecked Sendable {
    /// The entity the fetch reads (sub-entities included).
    public var entityName: String { didSet { checkMutable() } }
    /// The fetch's predicate, before `$FETCH_SOURCE` and `$FETCHED_PROPERTY` are put in; nil fetches all.
    public var predicate: QueryPredicate? { didSet { checkMutable() } }
    /// The order of the results; empty leaves the store's order.
    public var sortDescriptors: [QuerySortDescriptor] = [] { didSet { checkMutable() } }

    /// Creates a fetched property reading `entityName` objects that match `predicate`.
    public init(name: String, entityName: String, predicate: QueryPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
        super.init(name: name)
    }

    /// The fetch request this property runs for `source`, its variables replaced.
    ///
    /// - Throws: ``QueryLanguageError`` when a `$FETCH_SOURCE` key path cannot be read from `source` or its
    ///   value cannot be held by a predicate, or `$FETCHED_PROPERTY` is followed by something other than
    ///   `userInfo.key` or `name`; what reading `source` throws (``ObjectGraphError``, ``StoreError``).
    public func fetchRequest(for source: ManagedObject) throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: entityName)
        request.sortDescriptors = sortDescriptors
        guard let predicate else { return request }
        var substitution = try QuerySubstitution(variables: ["FETCH_SOURCE": source])
        substitution.variableKeyPaths["FETCH_SOURCE"] = { components in
            let value = try QueryEvaluator.walk(source, components[...])
            guard let converted = QueryValue.convert(value) else {
                throw QueryLanguageError.semantic(
                    "$FETCH_SOURCE.\(components.joined(separator: ".")) is a \(type(of: value)), which a predicate cannot hold")
            }
            return converted
        }
        let userInfo = self.userInfo, name = self.name
        substitution.variableKeyPaths["FETCHED_PROPERTY"] = { components in
            if components.count == 2 && components[0] == "userInfo" { return userInfo[components[1]].map(QueryValue.string) ?? .null }
            if components == ["name"] { return .string(name) }
            throw QueryLanguageError.semantic(
                "$FETCHED_PROPERTY.\(components.joined(separator: ".")): only userInfo.key and name can be read")
        }
        request.predicate = try substitution.substitute(predicate, bound: [])
        return request
    }
}

extension ManagedObjectModel {
    /// Checks each entity's fetched properties: names unique among the entity's properties, a destination
    /// entity the model has.
    static func checkFetchedProperties(_ entities: [EntityDescription], byName: [String: EntityDescription]) throws {
        for entity in entities {
            var seen = Set<String>()
            for fetched in entity.fetchedProperties {
                func refuse(_ reason: String) -> ModelError {
                    .invalidFetchedProperty(entity: entity.name, property: fetched.name, reason: reason)
                }
                guard EntityDescription.isValidName(fetched.name) else {
                    throw ModelError.invalidName(entity: entity.name, property: fetched.name)
                }
                if entity.propertiesByName[fetched.name] != nil || !seen.insert(fetched.name).inserted
                    || (entity.superentity?.fetchedProperty(named: fetched.name) != nil) {
                    throw ModelError.duplicateProperty(entity: entity.name, property: fetched.name)
                }
                if byName[fetched.entityName] == nil {
                    throw refuse("it fetches entity '\(fetched.entityName)', which the model does not have")
                }
                fetched.entity = entity
            }
        }
    }
}
