import Foundation
import OrderedCollections

/// One group of objects of a save sharing the values of one uniqueness constraint, with the stored row
/// that has them too, if any.
struct PendingConstraintConflict {
    /// The entity that declares the constraint; its rows and its sub-entities' rows share it.
    let declaringEntity: EntityDescription
    let keys: [String]
    let values: [StoreValue]
    /// The save's objects holding the values: new objects in insertion order, then changed ones by key.
    var objects: [ManagedObject]
    /// The stored row holding the values that is not one of `objects` and keeps them through the save.
    var storedRowID: ManagedObjectID?
}

extension ManagedObjectContext {
    // MARK: Finding conflicts

    /// Finds the save's uniqueness-constraint conflicts (among its new and changed objects, and against
    /// the store's rows) and resolves them by ``mergePolicy`` before anything is written, as Core Data
    /// does. The store's unique indexes still refuse a duplicate written meanwhile by another process.
    ///
    /// - Throws: ``ObjectGraphError/constraintConflict(_:)`` under ``MergePolicy/error``; what setting the
    ///   merged values throws; ``StoreError`` when the store cannot be read.
    func resolveConstraintConflicts(store: any StoreBackend) throws {
        let conflicts = try findConstraintConflicts(store: store)
        guard !conflicts.isEmpty else { return }
        if mergePolicy == .error {
            throw ObjectGraphError.constraintConflict(try conflicts.map { try describe($0) })
        }
        for conflict in conflicts { try resolve(conflict) }
    }

    func findConstraintConflicts(store: any StoreBackend) throws -> [PendingConstraintConflict] {
        guard let model = persistentStoreCoordinator?.managedObjectModel,
              model.entities.contains(where: { !$0.uniquenessConstraints.isEmpty }) else { return [] }
        var changed: [ManagedObject] = []
        for object in updatedSet where !object.isDeleted && !object.isInserted { changed.append(object) }
        changed.sort { $0.objectID.primaryKey < $1.objectID.primaryKey }
        let candidates = insertedInOrder.filter { $0.isInserted && !$0.isDeleted } + changed

        struct GroupKey: Hashable {
            let entity: ObjectIdentifier
            let constraint: Int
            /// Grouped as the store's unique index compares them, not by `String ==`.
            let values: [StoreEqualValue]
        }
        var groups: OrderedDictionary<GroupKey, PendingConstraintConflict> = [:]
        for object in candidates {
            for (declaring, position, keys) in Self.constraints(applyingTo: object.entity) {
                // A changed object joins only when its change touches the constraint's keys.
                if !object.isInserted,
                   !keys.contains(where: { object.entity.slotByName[$0].map { object.changes[$0] != nil } ?? false }) {
                    continue
                }
                guard let values = try constraintValues(of: object, keys: keys) else { continue }
                let key = GroupKey(entity: ObjectIdentifier(declaring), constraint: position, values: values.map(StoreEqualValue.init))
                groups[key, default: PendingConstraintConflict(declaringEntity: declaring, keys: keys, values: values,
                                                               objects: [], storedRowID: nil)].objects.append(object)
            }
        }
        var conflicts: [PendingConstraintConflict] = []
        for var group in groups.values {
            group.storedRowID = try storedRow(holding: group, store: store)
            if group.objects.count > 1 || group.storedRowID != nil { conflicts.append(group) }
        }
        return conflicts
    }

    /// Every constraint an entity's objects must keep: its own and its super-entities', each with the
    /// entity that declares it and its position there.
    static func constraints(applyingTo entity: EntityDescription)
        -> [(declaring: EntityDescription, position: Int, keys: [String])] {
        var result: [(EntityDescription, Int, [String])] = []
        var current: EntityDescription? = entity
        while let declaring = current {
            for (position, keys) in declaring.uniquenessConstraints.enumerated() { result.append((declaring, position, keys)) }
            current = declaring.superentity
        }
        return result
    }

    /// The values an object holds for a constraint's keys as the store writes them (a to-one as the related
    /// row's key); nil when one is null, since SQLite's unique indexes (and Core Data) let nulls repeat.
    private func constraintValues(of object: ManagedObject, keys: [String]) throws -> [StoreValue]? {
        var values: [StoreValue] = []
        values.reserveCapacity(keys.count)
        for key in keys {
            guard let slot = object.entity.slotByName[key] else { return nil }
            let value: StoreValue
            switch object.entity.storage[slot] {
            case .attribute: value = try object.primitiveAttribute(atSlot: slot)
            case .toOne: value = try object.relatedID(atSlot: slot)?.primaryKey.storeValue ?? .null
            default: return nil
            }
            if value.isNull { return nil }
            values.append(value)
        }
        return values
    }

    /// The stored row with a group's values that keeps them through this save: not one of the group, not
    /// deleted by it, not changed by it to other values.
    private func storedRow(holding group: PendingConstraintConflict, store: any StoreBackend) throws -> ManagedObjectID? {
        for id in try store.rowIDs(of: group.declaringEntity, holding: group.values, forKeys: group.keys) {
            if let object = registry[id] {
                if object.isDeleted || group.objects.contains(where: { $0 === object }) { continue }
                // Changed here to other values: the row will not keep these.
                if object.isUpdated, try constraintValues(of: object, keys: group.keys) != group.values { continue }
            }
            return id
        }
        return nil
    }

    // MARK: Reporting

    private func describe(_ conflict: PendingConstraintConflict) throws -> ConstraintConflict {
        var values: [String: String] = [:]
        for (key, value) in zip(conflict.keys, conflict.values) { values[key] = "\(value)" }
        let database = try conflict.storedRowID.map { try object(with: $0) }
        return ConstraintConflict(
            entity: conflict.declaringEntity.name, constraint: conflict.keys, constraintValues: values,
            databaseObject: database,
            databaseSnapshot: try database.map { try Self.snapshot(committedValuesOf: $0) },
            conflictingObjects: conflict.objects,
            conflictingSnapshots: try conflict.objects.map { $0.isInserted ? [:] : try Self.snapshot(committedValuesOf: $0) })
    }

    /// An object's committed attribute and to-one values by key, as text (the related row's ID for a to-one).
    private static func snapshot(committedValuesOf object: ManagedObject) throws -> [String: String] {
        var snapshot: [String: String] = [:]
        let row = try object.row ?? object.fulfilledRow()
        for (slot, property) in object.entity.allProperties.enumerated() {
            switch object.entity.storage[slot] {
            case .attribute(_, let column), .toOne(_, let column, _, _): snapshot[property.name] = "\(row[column])"
            default: break
            }
        }
        return snapshot
    }

    // MARK: Resolving

    /// Folds a group into one object, which the save then writes: the stored row's object when there is
    /// one (its ID survives), else the group's first object that already has a row, else its first new
    /// object. The others are merged into it by the policy's rule and deleted; a new one left over keeps
    /// the survivor's values, so references to it still read what was saved.
    private func resolve(_ conflict: PendingConstraintConflict) throws {
        let survivor: ManagedObject
        var losers = conflict.objects
        if let id = conflict.storedRowID {
            survivor = try object(with: id)
            if survivor.isFault { try fulfillFault(survivor) }
        } else {
            let index = losers.firstIndex { !$0.isInserted } ?? 0
            survivor = losers.remove(at: index)
        }
        // Another group may have removed an object already.
        losers.removeAll { $0.isDeleted || $0.managedObjectContext !== self }
        guard !survivor.isDeleted else { return }
        for loser in losers {
            let wasInserted = loser.isInserted
            switch mergePolicy {
            case .error:
                return
            case .rollback:
                // The conflicting changes are thrown away: a new object goes, a changed one is read afresh.
                if !loser.isInserted {
                    refresh(loser, mergeChanges: false)
                    continue
                }
            case .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite:
                try merge(loser, into: survivor)
            }
            delete(loser)
            if wasInserted { try copyAttributes(of: survivor, into: loser) }
        }
    }

    /// Merges one conflicting object's values into the survivor by the merge policy: under object trump its
    /// changed values win, under store trump they fill only what the survivor leaves empty, under overwrite
    /// every one of its values is written. Its to-many relationships' objects are added to the survivor's
    /// under each policy, so nothing related is lost with it.
    private func merge(_ loser: ManagedObject, into survivor: ManagedObject) throws {
        for (slot, property) in loser.entity.allProperties.enumerated() where !property.isTransient {
            guard let target = survivor.entity.slotByName[property.name],
                  type(of: survivor.entity.allProperties[target]) == type(of: property) else { continue }
            // A new object's changes are the values it was given (its defaults included).
            let changed = loser.changes[slot] != nil
            switch loser.entity.storage[slot] {
            case .attribute, .toOne:
                let value = try loser.value(atSlot: slot)
                switch mergePolicy {
                case .mergeByPropertyObjectTrump:
                    guard changed else { continue }
                case .mergeByPropertyStoreTrump:
                    guard changed, try survivor.value(atSlot: target) == nil else { continue }
                default:
                    break
                }
                try survivor.setValue(value, atSlot: target)
            case .toManyByForeignKey, .toManyByJoinTable:
                let related = try loser.relatedIDs(atSlot: slot)
                guard !related.isEmpty else { continue }
                let current = try survivor.relatedIDs(atSlot: target)
                let union = current.union(related)
                guard union.count != current.count else { continue }
                try survivor.setValue(atSlot: target, relatedTo: Array(union))
            case .transient:
                break
            }
        }
    }

    /// Gives a deleted new object the survivor's stored values, so a caller holding it reads the saved ones.
    private func copyAttributes(of survivor: ManagedObject, into loser: ManagedObject) throws {
        for (slot, property) in loser.entity.allProperties.enumerated() {
            guard case .attribute = loser.entity.storage[slot], let target = survivor.entity.slotByName[property.name],
                  case .attribute = survivor.entity.storage[target] else { continue }
            loser.changes[slot] = .attribute(try survivor.primitiveAttribute(atSlot: target))
        }
    }
}

extension ManagedObject {
    /// Sets a to-many relationship to the objects with these IDs (in this order when it is ordered).
    func setValue(atSlot slot: Int, relatedTo ids: [ManagedObjectID]) throws {
        let context = try self.context()
        let objects = try ids.map { try context.object(with: $0) }
        let relationship = entity.allProperties[slot] as! RelationshipDescription
        try setValue(relationship.isOrdered ? objects as Any : Set(objects) as Any, atSlot: slot)
    }
}
