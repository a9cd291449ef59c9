import Foundation
import OrderedCollections

/// Keeping both sides of every relationship in step, and delete rules.
extension ManagedObjectContext {
    func setToOne(_ object: ManagedObject, slot: Int, relationship: RelationshipDescription,
                  to target: ManagedObject?) throws {
        let oldID = try object.relatedID(atSlot: slot)
        willChange(object, slot: slot)
        object.changes[slot] = .toOne(target?.objectID)
        // A transient inverse is a plain value of its object, kept by whoever sets it: only a stored inverse
        // is kept in step here.
        guard oldID != target?.objectID, let inverse = relationship.storedInverse else { return }
        if let oldID, let old = try? self.object(with: oldID) {
            try detach(object.objectID, from: old, through: inverse)
        }
        if let target {
            if !inverse.isToMany, let previous = try target.relatedID(atSlot: slotOf(inverse, in: target)),
               previous != object.objectID, let partner = try? self.object(with: previous) {
                try setRawToOne(partner, relationship: relationship, to: nil)
            }
            try attach(object.objectID, to: target, through: inverse)
        }
    }

    func setToMany(_ object: ManagedObject, slot: Int, relationship: RelationshipDescription,
                   to targets: [ManagedObject]) throws {
        let old = try object.relatedIDs(atSlot: slot)
        let new = OrderedSet(targets.map(\.objectID))
        willChange(object, slot: slot)
        object.changes[slot] = .toMany(new)
        guard let inverse = relationship.storedInverse else { return }
        for id in old where !new.contains(id) {
            if let member = try? self.object(with: id) { try detach(object.objectID, from: member, through: inverse) }
        }
        for member in targets where !old.contains(member.objectID) {
            if !inverse.isToMany, let previousOwner = try member.relatedID(atSlot: slotOf(inverse, in: member)),
               previousOwner != object.objectID, let owner = try? self.object(with: previousOwner) {
                try removeRaw(member.objectID, from: owner, relationship: relationship)
            }
            try attach(object.objectID, to: member, through: inverse)
        }
    }

    /// Adds `id` to `object`'s side `relationship` (to-many) or points it there (to-one), without
    /// touching the other side.
    private func attach(_ id: ManagedObjectID, to object: ManagedObject, through relationship: RelationshipDescription) throws {
        if relationship.isToMany {
            let slot = slotOf(relationship, in: object)
            var ids = try object.relatedIDs(atSlot: slot)
            guard !ids.contains(id) else { return }
            ids.append(id)
            willChange(object, slot: slot)
            object.changes[slot] = .toMany(ids)
        } else {
            try setRawToOne(object, relationship: relationship, to: id)
        }
    }

    private func detach(_ id: ManagedObjectID, from object: ManagedObject, through relationship: RelationshipDescription) throws {
        if relationship.isToMany {
            try removeRaw(id, from: object, relationship: relationship)
        } else if try object.relatedID(atSlot: slotOf(relationship, in: object)) == id {
            try setRawToOne(object, relationship: relationship, to: nil)
        }
    }

    private func removeRaw(_ id: ManagedObjectID, from object: ManagedObject, relationship: RelationshipDescription) throws {
        let slot = slotOf(relationship, in: object)
        var ids = try object.relatedIDs(atSlot: slot)
        guard ids.remove(id) != nil else { return }
        willChange(object, slot: slot)
        object.changes[slot] = .toMany(ids)
    }

    private func setRawToOne(_ object: ManagedObject, relationship: RelationshipDescription, to id: ManagedObjectID?) throws {
        let slot = slotOf(relationship, in: object)
        willChange(object, slot: slot)
        object.changes[slot] = .toOne(id)
    }

    func slotOf(_ relationship: RelationshipDescription, in object: ManagedObject) -> Int {
        object.entity.slotByName[relationship.name]!
    }

    /// Runs delete rules for `object` on the graph in memory: cascades delete, nullify detaches.
    /// `deny` is checked at save.
    func applyDeleteRules(to object: ManagedObject) throws {
        for (slot, property) in object.entity.allProperties.enumerated() {
            guard let relationship = property as? RelationshipDescription, !relationship.isTransient else { continue }
            let related: [ManagedObjectID]
            if relationship.isToMany {
                related = Array(try object.relatedIDs(atSlot: slot))
            } else {
                related = (try object.relatedID(atSlot: slot)).map { [$0] } ?? []
            }
            switch relationship.deleteRule {
            case .cascade:
                for id in related {
                    if let member = try? self.object(with: id), !member.isDeleted { delete(member) }
                }
            case .nullify:
                guard let inverse = relationship.storedInverse else { continue }
                for id in related {
                    if let member = try? self.object(with: id), !member.isDeleted {
                        try detach(object.objectID, from: member, through: inverse)
                    }
                }
            case .deny, .noAction:
                continue
            }
        }
    }
}

extension ManagedObject {
    /// Adds an object to a to-many relationship (keeping the inverse in step).
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when `key` is not a to-many relationship of the
    ///   entity; ``ObjectGraphError/objectNotFound(_:)`` when this object has left its context or its row is
    ///   gone; what ``ManagedObject/setValue(_:forKey:)`` throws for `object`
    ///   (``ObjectGraphError/typeMismatch(entity:key:expected:actual:)``,
    ///   ``ObjectGraphError/invalidRelationshipTarget(entity:key:reason:)``); ``StoreError`` when the current
    ///   members cannot be read.
    public func add(_ object: ManagedObject, toKey key: String) throws {
        QueueCheck.access(to: self, key: key, writing: true)
        guard let slot = entity.slotByName[key], let relationship = entity.relationshipsByName[key],
              relationship.isToMany else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        let context = try context()
        var members = try relatedIDs(atSlot: slot).map { try context.object(with: $0) }
        guard !members.contains(object) else { return }
        members.append(object)
        try setValue(members, atSlot: slot)
    }

    /// Removes an object from a to-many relationship (keeping the inverse in step).
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when `key` is not a to-many relationship of the
    ///   entity; ``ObjectGraphError/objectNotFound(_:)`` when this object has left its context or its row is
    ///   gone; ``StoreError`` when the current members cannot be read.
    public func remove(_ object: ManagedObject, fromKey key: String) throws {
        QueueCheck.access(to: self, key: key, writing: true)
        guard let slot = entity.slotByName[key], let relationship = entity.relationshipsByName[key],
              relationship.isToMany else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        let context = try context()
        let members = try relatedIDs(atSlot: slot).filter { $0 != object.objectID }.map { try context.object(with: $0) }
        try setValue(members, atSlot: slot)
    }
}
