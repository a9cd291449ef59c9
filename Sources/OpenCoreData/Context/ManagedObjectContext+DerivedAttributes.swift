import Foundation

extension ManagedObjectContext {
    /// Recomputes the derived attributes of every object a save could have made stale, before the save writes
    /// anything: the saved objects themselves, and the objects whose derivations read a saved object through
    /// a relationship (an author's `books.@count` when a book is inserted, deleted or moved; a book's
    /// `author.name` when the author is renamed). Those are found through the inverse of each relationship a
    /// derivation reads, which the model requires (``DerivationCheck``).
    ///
    /// Core Data computes the same values in SQL inside the save; here they are computed in Swift from the
    /// context's view of the graph (unsaved changes included) and written like any changed attribute, so the
    /// row, the context and other contexts (through the save's merge) agree once the save returns.
    ///
    /// - Parameter saving: the objects the save already writes (and that have heard `willSave()`).
    /// - Returns: the objects this made changed that were not among them; they hear `willSave()` here.
    /// - Throws: what evaluating a derivation throws (``ObjectGraphError/objectNotFound(_:)`` or
    ///   ``StoreError`` when a related fault cannot be filled), and
    ///   ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` or
    ///   ``ObjectGraphError/valueOutOfRange(entity:key:value:)`` when a computed value does not fit its attribute.
    func recomputeDerivedAttributes(saving: [ManagedObject]) throws -> [ManagedObject] {
        guard let plan = saving.first?.entity.managedObjectModel?.derivationPlan else { return [] }

        var targets: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        func consider(_ object: ManagedObject) {
            guard !object.isDeleted, plan.derivedSlots[ObjectIdentifier(object.entity)] != nil,
                  seen.insert(ObjectIdentifier(object)).inserted else { return }
            targets.append(object)
        }
        for object in saving {
            consider(object)
            // The objects on the other side of each relationship some derivation reads back through. Both
            // ends of an edit are saved objects themselves (inverses are kept in step), so the current
            // members suffice here; what is traced is an attribute edit on the related side.
            for (slot, property) in object.entity.allProperties.enumerated()
            where plan.tracedRelationships.contains(ObjectIdentifier(property)) {
                let relationship = property as! RelationshipDescription
                if relationship.isToMany {
                    for id in try object.relatedIDs(atSlot: slot) { consider(try self.object(with: id)) }
                } else if let id = try object.relatedID(atSlot: slot) {
                    consider(try self.object(with: id))
                }
            }
        }

        let alreadySaving = Set(saving.map(ObjectIdentifier.init))
        var newlyChanged: [ManagedObject] = []
        for object in targets {
            var changed = false
            for (slot, attribute) in plan.derivedSlots[ObjectIdentifier(object.entity)]! {
                let computed = try attribute.derivationExpression!.evaluate(with: object)
                let stored = try ValueConversion.storeValue(DerivationPlan.storable(computed, for: attribute),
                                                            for: attribute)
                if try object.primitiveAttribute(atSlot: slot) == stored { continue }
                willChange(object, slot: slot)
                object.changes[slot] = .attribute(stored)
                changed = true
            }
            if changed && !alreadySaving.contains(ObjectIdentifier(object)) { newlyChanged.append(object) }
        }
        for object in newlyChanged { object.willSave() }
        return newlyChanged
    }
}

/// What a save needs to know of a model's derived attributes, worked out once per model.
final class DerivationPlan: @unchecked Sendable {
    // @unchecked Sendable: immutable once made (by its model's initializer).

    /// Per entity (inherited derived attributes included): the slot and description of each derived attribute.
    let derivedSlots: [ObjectIdentifier: [(slot: Int, attribute: AttributeDescription)]]
    /// The inverses of the relationships derivations read: a saved object reached through one of these
    /// tells which objects to recompute.
    let tracedRelationships: Set<ObjectIdentifier>

    /// The plan for a model built from frozen entities; nil when no entity has a derived attribute.
    convenience init?(model: ManagedObjectModel) {
        self.init(entities: model.entities)
        if derivedSlots.isEmpty { return nil }
    }

    private init(entities: [EntityDescription]) {
        var slots: [ObjectIdentifier: [(slot: Int, attribute: AttributeDescription)]] = [:]
        var traced = Set<ObjectIdentifier>()
        for entity in entities {
            for (slot, property) in entity.allProperties.enumerated() {
                guard let attribute = property as? AttributeDescription, let expression = attribute.derivationExpression
                else { continue }
                slots[ObjectIdentifier(entity), default: []].append((slot, attribute))
                for relationship in DerivationCheck.relationships(readBy: expression, of: entity) {
                    if let inverse = relationship.inverseRelationship { traced.insert(ObjectIdentifier(inverse)) }
                }
            }
        }
        derivedSlots = slots
        tracedRelationships = traced
    }

    /// A computed value in the form the attribute's type takes: aggregates give `Int` or `Double` or `Decimal`
    /// where the attribute may be another width or kind of number.
    static func storable(_ value: Any?, for attribute: AttributeDescription) -> Any? {
        guard let value else { return nil }
        switch attribute.attributeType {
        case .integer16, .integer32, .integer64:
            if let number = value as? Double, number.isFinite, number.rounded() == number { return Int64(number) }
            if let number = value as? Decimal { return Int64(truncating: number as NSDecimalNumber) }
            if let number = value as? Int { return Int64(number) }
            return value
        case .double, .float:
            if let number = value as? Int { return Double(number) }
            if let number = value as? Int64 { return Double(number) }
            if let number = value as? Decimal { return NSDecimalNumber(decimal: number).doubleValue }
            return value
        case .decimal:
            if let number = value as? Int { return Decimal(number) }
            if let number = value as? Double { return Decimal(number) }
            return value
        default:
            return value
        }
    }
}
