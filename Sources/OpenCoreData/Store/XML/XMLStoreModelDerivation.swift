import Foundation

/// The model an XML store's own objects describe, for opening it without the app's model (as Core Data's
/// XML store needs none to be read): an entity per object type, each attribute with the type its values
/// carry, each relationship with its destination and to-many-ness, and inverses where the file shows both
/// sides. Entity names take their spelling from the metadata's version hashes where one matches (the file
/// writes them in capitals); property names stay as the file writes them (in lower case).
enum XMLStoreModelDerivation {
    private struct DerivedAttribute { var name: String; var type: XMLStoreValueType; var firstObject: String }
    private struct DerivedRelationship {
        var name: String
        var destination: String
        var toMany: Bool
        var firstObject: String
        /// (source id, target id) of every link the file holds.
        var links: Set<[String]> = []
        var inverse: String?
    }
    private struct DerivedEntity {
        var name: String
        var attributes: [String: DerivedAttribute] = [:]
        var relationships: [String: DerivedRelationship] = [:]
        var order: [String] = []
    }

    /// - Throws: ``XMLStoreError/invalidObject(path:objectID:key:reason:)`` naming the object and key for an
    ///   unknown value or relationship type, a key whose type differs between objects or that is both an
    ///   attribute and a relationship, a reference to no object or to an object of another entity than the
    ///   relationship's other references, a destination entity no object or version hash has;
    ///   ``XMLStoreError/modelMismatch(path:reason:)`` when the names make no valid model or there is none.
    static func model(of document: XMLStoreDocument, path: String) throws -> ManagedObjectModel {
        var spellings: [String: String] = [:]
        if case .dictionary(let hashes)? = document.info.metadata[StoreMetadata.Key.versionHashes] {
            for name in hashes.keys { spellings[name.lowercased()] = name }
        }
        var entities: [String: DerivedEntity] = [:]
        var entityOrder: [String] = []
        for name in spellings.keys.sorted() {
            entities[name] = DerivedEntity(name: spellings[name] ?? name)
            entityOrder.append(name)
        }
        var typeByID: [String: String] = [:]
        for object in document.objects {
            let folded = object.type.lowercased()
            typeByID[object.id] = folded
            if entities[folded] == nil {
                entities[folded] = DerivedEntity(name: spellings[folded] ?? object.type)
                entityOrder.append(folded)
            }
        }
        for object in document.objects {
            func invalid(_ key: String, _ reason: String) -> XMLStoreError {
                .invalidObject(path: path, objectID: object.id, key: key, reason: reason)
            }
            let folded = object.type.lowercased()
            guard var entity = entities[folded] else { continue }
            for attribute in object.attributes {
                let key = attribute.name.lowercased()
                guard let spelling = attribute.type, let type = XMLStoreValueType(rawValue: spelling) else {
                    throw invalid(attribute.name, "the value type '\(attribute.type ?? "")' is not one Core Data's XML store has")
                }
                if let earlier = entity.attributes[key] {
                    guard earlier.type == type else {
                        throw invalid(attribute.name, "a \(type.rawValue) here, a \(earlier.type.rawValue) in object '\(earlier.firstObject)'")
                    }
                } else {
                    guard entity.relationships[key] == nil else { throw invalid(attribute.name, "an attribute here, a relationship in another object") }
                    entity.attributes[key] = DerivedAttribute(name: attribute.name, type: type, firstObject: object.id)
                    entity.order.append(key)
                }
            }
            for relationship in object.relationships {
                let key = relationship.name.lowercased()
                guard let kind = relationship.type, let toMany = XMLStoreRelationshipKind.isToMany(kind) else {
                    throw invalid(relationship.name, "the relationship type '\(relationship.type ?? "")' is not one Core Data's XML store has")
                }
                var targetTypes: Set<String> = []
                for id in relationship.idrefs {
                    guard let type = typeByID[id] else { throw invalid(relationship.name, "it refers to '\(id)', which is no object of the file") }
                    targetTypes.insert(type)
                }
                guard let destination = relationship.destination?.lowercased() ?? targetTypes.first else {
                    throw invalid(relationship.name, "it names no destination entity and refers to no object")
                }
                guard entities[destination] != nil else {
                    throw invalid(relationship.name, "its destination entity '\(relationship.destination ?? destination)' does not exist in the file")
                }
                // Without the model there are no sub-entities: every target is of the destination entity.
                if let stray = targetTypes.first(where: { $0 != destination }) {
                    throw invalid(relationship.name, "it refers to a \(entities[stray]?.name ?? stray), not a \(entities[destination]?.name ?? destination)")
                }
                if let earlier = entity.relationships[key] {
                    guard earlier.destination == destination, earlier.toMany == toMany else {
                        throw invalid(relationship.name, "its destination or to-many-ness differs from object '\(earlier.firstObject)'")
                    }
                } else {
                    guard entity.attributes[key] == nil else { throw invalid(relationship.name, "a relationship here, an attribute in another object") }
                    entity.relationships[key] = DerivedRelationship(name: relationship.name, destination: destination,
                                                                    toMany: toMany, firstObject: object.id)
                    entity.order.append(key)
                }
                for id in relationship.idrefs { entity.relationships[key]?.links.insert([object.id, id]) }
            }
            entities[folded] = entity
        }
        matchInverses(&entities)
        let descriptions = entityOrder.compactMap { entities[$0] }.map { entity in
            EntityDescription(name: entity.name, properties: entity.order.compactMap { key -> PropertyDescription? in
                if let attribute = entity.attributes[key] {
                    return AttributeDescription(name: attribute.name, type: attribute.type.attributeType)
                }
                guard let relationship = entity.relationships[key] else { return nil }
                return RelationshipDescription(name: relationship.name, destination: entities[relationship.destination]?.name ?? relationship.destination,
                                               toMany: relationship.toMany, inverse: relationship.inverse)
            })
        }
        guard !descriptions.isEmpty else {
            throw XMLStoreError.modelMismatch(path: path, reason: "the file has no objects and its metadata names no entity")
        }
        do {
            return try ManagedObjectModel(entities: descriptions)
        } catch {
            throw XMLStoreError.modelMismatch(path: path, reason: "its objects make no valid model: \(error)")
        }
    }

    /// Pairs two relationships as inverses when each is the other's only candidate: a relationship of the
    /// destination leading back whose links are exactly this one's, reversed.
    private static func matchInverses(_ entities: inout [String: DerivedEntity]) {
        typealias Side = (entity: String, key: String)
        func candidates(of side: Side) -> [Side] {
            guard let relationship = entities[side.entity]?.relationships[side.key],
                  let destination = entities[relationship.destination] else { return [] }
            let reversed = Set(relationship.links.map { [$0[1], $0[0]] })
            return destination.relationships.filter { key, other in
                other.destination == side.entity && other.links == reversed
            }.map { (relationship.destination, $0.key) }
        }
        for entityKey in entities.keys.sorted() {
            for key in entities[entityKey]?.relationships.keys.sorted() ?? [] {
                let side: Side = (entityKey, key)
                let found = candidates(of: side)
                guard found.count == 1, let other = found.first else { continue }
                let back = candidates(of: other)
                guard back.count == 1, back[0].entity == entityKey, back[0].key == key,
                      let otherName = entities[other.entity]?.relationships[other.key]?.name else { continue }
                entities[entityKey]?.relationships[key]?.inverse = otherName
            }
        }
    }
}
