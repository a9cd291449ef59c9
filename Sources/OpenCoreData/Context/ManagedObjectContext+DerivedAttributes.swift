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
