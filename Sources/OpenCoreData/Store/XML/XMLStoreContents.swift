import Foundation

/// An XML store's objects checked against a model: each object's entity, its attributes as row values and
/// its relationships as the positions of the objects they refer to. What the store loads into its tables.
struct XMLStoreContents {
    /// One object of the file.
    struct Object {
        /// The `id` the file gives it (`z102`).
        var fileID: String
        var entity: EntityDescription
        /// Attribute values by slot (`entity.allProperties`); attributes the file leaves out are absent.
        var values: [Int: StoreValue] = [:]
        /// Relationship targets by slot, as positions in ``XMLStoreContents/objects``, in the file's order.
        var targets: [Int: [Int]] = [:]
    }

    var objects: [Object] = []

    /// No objects: a new store.
    init() {}

    /// Checks every object of `document` against `model`. Names are matched without regard to case, as
    /// Core Data writes entity names in capitals and property names in lower case.
    ///
    /// - Throws: ``XMLStoreError/invalidObject(path:objectID:key:reason:)`` naming the object and key: an
    ///   unknown entity or key, an abstract entity, a value type that is not the model's or a value that
    ///   does not parse, a reference to an object the file lacks or of an entity the relationship does not
    ///   lead to, several objects in a to-one relationship; ``XMLStoreError/modelMismatch(path:reason:)``
    ///   when two of the model's names differ only in case.
    init(document: XMLStoreDocument, model: ManagedObjectModel, path: String) throws {
        let entities = try Self.byFoldedName(model.entities.map { ($0.name, $0) }, path: path, what: "entities")
        var positionByID: [String: Int] = [:]
        var resolved: [(XMLStoreDocument.Object, EntityDescription)] = []
        for object in document.objects {
            guard let entity = entities[object.type.lowercased()] else {
                throw XMLStoreError.invalidObject(path: path, objectID: object.id, key: nil,
                                                  reason: "its entity '\(object.type)' is not in the model")
            }
            guard !entity.isAbstract else {
                throw XMLStoreError.invalidObject(path: path, objectID: object.id, key: nil,
                                                  reason: "its entity '\(entity.name)' is abstract")
            }
            positionByID[object.id] = resolved.count
            resolved.append((object, entity))
        }
        var propertiesByEntity: [ObjectIdentifier: [String: (slot: Int, property: PropertyDescription)]] = [:]
        for (object, entity) in resolved {
            func invalid(_ key: String?, _ reason: String) -> XMLStoreError {
                .invalidObject(path: path, objectID: object.id, key: key, reason: reason)
            }
            let properties: [String: (slot: Int, property: PropertyDescription)]
            if let known = propertiesByEntity[ObjectIdentifier(entity)] {
                properties = known
            } else {
                properties = try Self.byFoldedName(entity.allProperties.enumerated().map { ($1.name, ($0, $1)) },
                                                   path: path, what: "properties of \(entity.name)")
                propertiesByEntity[ObjectIdentifier(entity)] = properties
            }
            var checked = Object(fileID: object.id, entity: entity)
            for attribute in object.attributes {
                guard let (slot, property) = properties[attribute.name.lowercased()],
                      let description = property as? AttributeDescription else {
                    throw invalid(attribute.name, "\(entity.name) has no attribute of that name")
                }
                guard let spelling = attribute.type, let type = XMLStoreValueType(rawValue: spelling) else {
                    throw invalid(attribute.name, "the value type '\(attribute.type ?? "")' is not one Core Data's XML store has")
                }
                guard type.attributeType == description.attributeType else {
                    throw invalid(attribute.name, "the file holds a \(type.rawValue), the model's attribute is \(description.attributeType.rawValue)")
                }
                switch type.storeValue(of: attribute.text, for: description) {
                case .success(let value): checked.values[slot] = value
                case .failure(let refusal): throw invalid(attribute.name, refusal.reason)
                }
            }
            for relationship in object.relationships {
                guard let (slot, property) = properties[relationship.name.lowercased()],
                      let description = property as? RelationshipDescription,
                      let destination = description.destinationEntity else {
                    throw invalid(relationship.name, "\(entity.name) has no relationship of that name")
                }
                if let kind = relationship.type {
                    guard let toMany = XMLStoreRelationshipKind.isToMany(kind) else {
                        throw invalid(relationship.name, "the relationship type '\(kind)' is not one Core Data's XML store has")
                    }
                    guard toMany == description.isToMany else {
                        throw invalid(relationship.name, "the file holds a \(toMany ? "to-many" : "to-one") relationship, the model's is \(description.isToMany ? "to-many" : "to-one")")
                    }
                }
                guard description.isToMany || relationship.idrefs.count <= 1 else {
                    throw invalid(relationship.name, "a to-one relationship refers to \(relationship.idrefs.count) objects")
                }
                var targets: [Int] = []
                var seen: Set<Int> = []
                for id in relationship.idrefs {
                    guard let position = positionByID[id] else {
                        throw invalid(relationship.name, "it refers to '\(id)', which is no object of the file")
                    }
                    let target = resolved[position].1
                    guard target.isKind(of: destination) else {
                        throw invalid(relationship.name, "it refers to '\(id)', a \(target.name), not a \(destination.name)")
                    }
                    guard seen.insert(position).inserted else {
                        throw invalid(relationship.name, "it refers to '\(id)' twice")
                    }
                    targets.append(position)
                }
                checked.targets[slot] = targets
            }
            objects.append(checked)
        }
    }

    /// Names folded to lower case, refusing two that fold to one.
    private static func byFoldedName<T>(_ named: [(String, T)], path: String, what: String) throws -> [String: T] {
        var result: [String: T] = [:]
        var spelling: [String: String] = [:]
        for (name, value) in named {
            let folded = name.lowercased()
            if let other = spelling[folded] {
                throw XMLStoreError.modelMismatch(path: path, reason: "the \(what) '\(other)' and '\(name)' differ only in case, which an XML store cannot tell apart")
            }
            spelling[folded] = name
            result[folded] = value
        }
        return result
    }
}

/// The relationship types of Core Data's XML store: `1/1` (to-one) and `0/0` (to-many) are read from real
/// files; `1/0` and `0/1` are accepted by their first number (inferred, docs/INTEROP.md).
enum XMLStoreRelationshipKind {
    /// Whether the spelling is a to-many relationship; nil for a spelling the XML store does not have.
    static func isToMany(_ spelling: String) -> Bool? {
        switch spelling {
        case "1/1", "1/0": false
        case "0/0", "0/1": true
        default: nil
        }
    }

    /// The spelling Core Data writes.
    static func spelling(toMany: Bool) -> String { toMany ? "0/0" : "1/1" }
}
