import Foundation
import OrderedCollections

extension ManagedObjectContext {
    /// Writes every unsaved change: to the store in one SQLite transaction, or into the parent context
    /// for a child context. Validation failures are reported together; optimistic-locking conflicts go
    /// through ``mergePolicy``, and so do uniqueness-constraint conflicts (among the saved objects and
    /// against stored rows), which are settled before anything is written. On failure nothing is written
    /// and the context keeps its changes (and whatever the merge policy already merged).
    ///
    /// Each object written hears ``ManagedObject/willSave()`` first and ``ManagedObject/didSave()`` after.
    ///
    /// - Throws: ``ObjectGraphError/validationFailed(_:)`` for failed validation rules (an error a
    ///   validation hook threw is thrown as it was when it is the only failure);
    ///   ``ObjectGraphError/mergeConflict(_:)``; ``ObjectGraphError/constraintConflict(_:)`` under
    ///   ``MergePolicy/error``; ``ObjectGraphError/noPersistentStore``; ``StoreError``;
    ///   ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` or
    ///   ``ObjectGraphError/valueOutOfRange(entity:key:value:)`` when a derived attribute's computed value
    ///   does not fit its type.
    public func save() throws {
        QueueCheck.use(of: self, "save()")
        guard hasChanges else { return }
        for object in insertedInOrder + Array(updatedSet) + Array(deletedSet) { object.willSave() }
        // Uniqueness conflicts are settled against the store the changes go to, before anything is written.
        if parent == nil, let coordinator = persistentStoreCoordinator {
            try resolveConstraintConflicts(store: try coordinator.primaryBackend())
        }
        var saving = insertedInOrder + Array(updatedSet) + Array(deletedSet)
        // After willSave and the constraint merges, which may edit what a derivation reads (docs/FEATURES.md,
        // "Derived attributes").
        saving += try recomputeDerivedAttributes(saving: saving)
        // Copies of the sets (shared until the context changes its own) for the did-save notification.
        let savedObjects = (inserted: insertedSet, updated: updatedSet, deleted: deletedSet)
        if validatesOnSave { try validatePendingChanges() }
        if let parent {
            try pushChanges(into: parent)
            for object in saving { object.didSave() }
            return
        }
        guard let coordinator = persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let store = try coordinator.primaryBackend()
        // Keys are handed out in insertion order, so rows go into each table in key order and new objects'
        // keys follow the order they were made in.
        let insertOrder = insertedInOrder
        try obtainPermanentIDs(for: insertOrder)
        let changes: StoreChangeSet
        do {
            // Conflicts are resolved by the merge policy inside the save's own transaction (see
            // `SQLiteStore.apply`): the policy sees the rows as they are under the write lock.
            let resolver: (([StoreConflict]) throws -> StoreChangeSet)? = mergePolicy == .error ? nil : { conflicts in
                try self.resolve(conflicts)
                return try self.makeChangeSet(store: store, insertOrder: insertOrder)
            }
            let history = store.recordsHistory ? historyChanges(insertOrder: insertOrder) : []
            changes = try HistoryAuthorship.$current.withValue(self.historyAuthorship) {
                try store.apply(makeChangeSet(store: store, insertOrder: insertOrder), history: history,
                                resolvingConflicts: resolver)
            }
        } catch let conflicts as StoreConflicts {
            throw ObjectGraphError.mergeConflict(conflicts.conflicts.map { describe($0) })
        } catch StoreError.uniqueConstraintFailed(let path, let columns, let message) {
            let failures = uniquenessFailures(columns: columns.joined(separator: ", "), message: message)
            // A constraint no object of this save can be named for is the store's own error.
            if !failures.isEmpty { throw ObjectGraphError.validationFailed(failures) }
            throw StoreError.uniqueConstraintFailed(path: path, columns: columns, message: message)
        }
        let saved = didSave(coordinator: coordinator, insertOrder: insertOrder, changes: changes)
        for object in saving { object.didSave() }
        processPendingChanges()
        announceSave(saved, inserted: savedObjects.inserted, updated: savedObjects.updated, deleted: savedObjects.deleted)
        coordinator.broadcast(saved, from: self)
        notifyChildrenOfSave(saved, from: nil)
    }

    /// Gives new objects their permanent IDs now (reserving primary keys in the store), so their IDs can
    /// be handed to other contexts before the save.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore`` when the context has no coordinator or store;
    ///   ``StoreError/primaryKeysExhausted(path:entity:maximum:)`` when an entity has no keys left;
    ///   ``StoreError`` when the store cannot be written (busy, read-only). On failure no object's ID changes.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        QueueCheck.use(of: self, "obtainPermanentIDs(for:)")
        let pending = objects.filter { $0.objectID.isTemporaryID && $0.managedObjectContext === self }
        guard !pending.isEmpty else { return }
        guard let coordinator = persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let store = try coordinator.primaryBackend()
        // One block of keys per root entity (its table), handed out in the objects' order. Saves touch
        // few entities, so a short list searched by identity beats hashing every object.
        var roots: [(root: EntityDescription, count: Int, next: Int64)] = []
        var rootIndex: [Int] = []
        rootIndex.reserveCapacity(pending.count)
        var lastEntity: EntityDescription?
        var lastIndex = 0
        for object in pending {
            if object.entity !== lastEntity {
                let root = object.entity.rootEntity
                if let found = roots.firstIndex(where: { $0.root === root }) {
                    lastIndex = found
                } else {
                    roots.append((root, 0, 0))
                    lastIndex = roots.count - 1
                }
                lastEntity = object.entity
            }
            roots[lastIndex].count += 1
            rootIndex.append(lastIndex)
        }
        let firstKeys = try store.reservePrimaryKeys(roots.map { ($0.root, $0.count) })
        for index in roots.indices { roots[index].next = firstKeys[index] }
        // The old → new mapping is built only for those who need it: objects whose relationship changes
        // may name the old IDs, change observers, a parent holding the same objects.
        let modelHasRelationships = coordinator.managedObjectModel.entities.contains { $0.hasRelationships }
        let needsRewrite = modelHasRelationships
            && registry.values.contains { $0.entity.hasRelationships && !$0.changes.isEmpty }
        let needsMapping = needsRewrite || tracksRenames || parent != nil
        var mapping: [ManagedObjectID: ManagedObjectID] = [:]
        if needsMapping { mapping.reserveCapacity(pending.count) }
        // A context holding only these new objects (a bulk insert) gets a registry built afresh at its final
        // size: one insertion per object instead of a removal and an insertion in the old table.
        let rebuild = registry.count == pending.count && pending.allSatisfy { $0.flags.contains(.registered) }
        var rebuilt = ObjectRegistry()
        if rebuild { rebuilt.reserveCapacity(pending.count) }
        for (position, object) in pending.enumerated() {
            // The same object listed twice is named once.
            guard object.objectID.isTemporaryID else { continue }
            let index = rootIndex[position]
            let primaryKey = roots[index].next
            // Wrapping: after a block's last key (which may be Int64.max) the next one is never used.
            roots[index].next = primaryKey &+ 1
            let old = object.objectID
            let new = ManagedObjectID(entity: object.entity, primaryKey: primaryKey, store: store.identity)
            object.objectID = new
            if rebuild {
                rebuilt[new] = object
            } else {
                registry.removeValue(forKey: old)
                registry[new] = object
            }
            if needsMapping { mapping[old] = new }
        }
        if rebuild {
            // Fewer distinct objects than entries (the list had repeats): keep the entries not renamed.
            if rebuilt.count != registry.count {
                for object in registry.values where rebuilt[object.objectID] == nil { rebuilt[object.objectID] = object }
            }
            registry = rebuilt
        }
        guard needsMapping else { return }
        if tracksRenames { pendingChangeRecord.renamed.merge(mapping) { _, new in new } }
        if needsRewrite { rewriteReferences(mapping) }
        if let parent {
            // A parent holds the same new objects under the old IDs.
            parent.performAndWait { parent.renameObjects(mapping) }
        }
    }

    /// Moves objects to new IDs and rewrites every reference to the old IDs held in this context.
    func renameObjects(_ renamed: [ManagedObjectID: ManagedObjectID]) {
        guard !renamed.isEmpty else { return }
        if tracksRenames { pendingChangeRecord.renamed.merge(renamed) { _, new in new } }
        for (old, new) in renamed {
            if let object = registry.removeValue(forKey: old) {
                object.objectID = new
                registry[new] = object
            }
        }
        rewriteReferences(renamed)
    }

    private func rewriteReferences(_ renamed: [ManagedObjectID: ManagedObjectID]) {
        // References to the old IDs live only in relationship changes.
        for object in registry.values where object.entity.hasRelationships && !object.changes.isEmpty {
            for (slot, change) in object.changes {
                switch change {
                case .toOne(let id?):
                    if let new = renamed[id] { object.changes[slot] = .toOne(new) }
                case .toMany(let ids):
                    if ids.contains(where: { renamed[$0] != nil }) {
                        object.changes[slot] = .toMany(OrderedSet(ids.map { renamed[$0] ?? $0 }))
                    }
                default: break
                }
            }
        }
    }

    // MARK: Validation

    func validatePendingChanges() throws {
        var failures: [ValidationFailure] = []
        for object in insertedSet where !object.isDeleted { failures += validate(object) }
        for object in updatedSet where !object.isDeleted && !object.isInserted { failures += validate(object) }
        for object in deletedSet {
            do { try object.validateForDelete() } catch {
                failures.append(ValidationFailure(thrownBy: object, key: "", error: error))
            }
            for (slot, property) in object.entity.allProperties.enumerated() {
                guard let relationship = property as? RelationshipDescription, relationship.deleteRule == .deny else { continue }
                let related: [ManagedObjectID] = relationship.isToMany
                    ? Array((try? object.relatedIDs(atSlot: slot)) ?? [])
                    : ((try? object.relatedID(atSlot: slot)).flatMap { $0 }.map { [$0] } ?? [])
                let alive = related.filter { registry[$0]?.isDeleted != true }
                if !alive.isEmpty {
                    failures.append(ValidationFailure(objectID: object.objectID, entity: object.entity.name,
                                                      key: relationship.name, rule: .deleteDenied,
                                                      message: "delete denied: \(alive.count) related object(s) remain"))
                }
            }
        }
        // A hook's error alone reaches the caller as it was thrown.
        if failures.count == 1, let thrown = failures[0].underlyingError { throw thrown }
        if !failures.isEmpty { throw ObjectGraphError.validationFailed(failures) }
    }

    /// The rules `object` breaks; `asNewObject` checks a saved object as the insert it was (every value,
    /// `validateForInsert`), for a migration that saved its objects before validating them.
    func validate(_ object: ManagedObject, asNewObject: Bool = false) -> [ValidationFailure] {
        var failures: [ValidationFailure] = []
        func fail(_ key: String, _ rule: ValidationFailure.Rule, _ message: String) {
            failures.append(ValidationFailure(objectID: object.objectID, entity: object.entity.name, key: key,
                                              rule: rule, message: message))
        }
        // Entities with nothing to check (no required values, rules or count bounds) skip the property walk.
        let properties = object.entity.needsValidation ? object.entity.allProperties : []
        for (slot, property) in properties.enumerated() where !property.isTransient {
            if let attribute = property as? AttributeDescription {
                if let composite = attribute as? CompositeAttributeDescription {
                    // Its elements are checked in their own slots; here only that a required one is there.
                    if !composite.isOptional, (try? CompositeValue.read(composite, of: object)) == nil {
                        fail(attribute.name, .missingRequiredValue, "a value is required")
                    }
                    continue
                }
                if attribute.isOptional && !attribute.hasValidationRules { continue }
                guard let value = try? object.primitiveAttribute(atSlot: slot) else {
                    fail(attribute.name, .custom, "its row cannot be read")
                    continue
                }
                if value.isNull {
                    if !attribute.isOptional { fail(attribute.name, .missingRequiredValue, "a value is required") }
                    continue
                }
                failures += AttributeValidation.check(value, attribute: attribute, object: object)
            } else if let relationship = property as? RelationshipDescription {
                if relationship.isOptional && relationship.minCount == 0 && relationship.maxCount == 0 { continue }
                if relationship.isToMany {
                    let count = (try? object.relatedIDs(atSlot: slot).count) ?? 0
                    if count == 0 && !relationship.isOptional {
                        fail(relationship.name, .tooFewObjects, "at least one object is required")
                    } else if relationship.minCount > 0 && count < relationship.minCount && (count > 0 || !relationship.isOptional) {
                        fail(relationship.name, .tooFewObjects, "holds \(count) object(s), at least \(relationship.minCount) required")
                    }
                    if relationship.maxCount > 0 && count > relationship.maxCount {
                        fail(relationship.name, .tooManyObjects, "holds \(count) object(s), at most \(relationship.maxCount) allowed")
                    }
                } else if !relationship.isOptional, ((try? object.relatedID(atSlot: slot)) ?? nil) == nil {
                    fail(relationship.name, .missingRequiredValue, "a related object is required")
                }
            }
        }
        // The subclass's hooks (a plain ManagedObject has none to run): each changed value (a new object's
        // are all changed), then the object as a whole.
        guard type(of: object) != ManagedObject.self else { return failures }
        let keys = asNewObject ? object.entity.allProperties.filter { !$0.isTransient }.map(\.name) : object.changedKeys.sorted()
        for key in keys {
            do { try object.validateValue(try object.value(forKey: key), forKey: key) } catch {
                failures.append(ValidationFailure(thrownBy: object, key: key, error: error))
            }
        }
        do {
            if object.isInserted || asNewObject { try object.validateForInsert() } else { try object.validateForUpdate() }
        } catch {
            failures.append(ValidationFailure(thrownBy: object, key: "", error: error))
        }
        return failures
    }

    /// The save's objects whose uniqueness constraint covers `columns` (`TABLE.COLUMN`, as the store named
    /// the index that refused the write), mapped back to the constraint's keys.
    private func uniquenessFailures(columns: String, message: String) -> [ValidationFailure] {
        var failures: [ValidationFailure] = []
        for object in insertedSet.union(updatedSet) {
            for constraint in object.entity.uniquenessConstraints {
                let constraintColumns = constraint.map { "\(object.entity.tableName).Z\($0.uppercased())" }
                if constraintColumns.allSatisfy({ columns.contains($0) }) {
                    failures.append(ValidationFailure(objectID: object.objectID, entity: object.entity.name,
                                                      key: constraint.joined(separator: ","), rule: .uniquenessViolation,
                                                      message: "another object has the same \(constraint.joined(separator: ", "))"))
                    break
                }
            }
        }
        if failures.isEmpty, let object = insertedSet.first ?? updatedSet.first {
            failures.append(ValidationFailure(objectID: object.objectID, entity: object.entity.name, key: columns,
                                              rule: .uniquenessViolation, message: message))
        }
        return failures
    }

    // MARK: Building the change set

    func makeChangeSet(store: any StoreBackend, insertOrder: [ManagedObject]) throws -> StoreChangeSet {
        var changes = StoreChangeSet()
        changes.inserts.reserveCapacity(insertOrder.count)
        for object in insertOrder where object.isInserted {
            var row = RowValues(repeating: .null, count: object.entity.tableColumnCount)
            row[0] = object.objectID.primaryKey.storeValue
            row[1] = object.entity.entityNumber.storeValue
            row[2] = 1.storeValue
            try fill(&row, from: object, into: &changes)
            changes.inserts.append(.init(id: object.objectID, table: object.entity.tableName, row: row))
        }
        // Updates in key order: neighbouring rows share b-tree pages. Keys are read once, not per comparison.
        var updated: [(key: Int64, object: ManagedObject)] = []
        updated.reserveCapacity(updatedSet.count)
        for object in updatedSet where !object.isDeleted { updated.append((object.objectID.primaryKey, object)) }
        updated.sort { $0.key < $1.key }
        changes.updates.reserveCapacity(updated.count)
        for (_, object) in updated {
            if object.isFault { try fulfillFault(object) }
            var values: [(column: Int, value: StoreValue)] = []
            values.reserveCapacity(object.changes.count)
            for (slot, change) in object.changes {
                switch (change, object.entity.storage[slot]) {
                case (.attribute(let value), .attribute(_, let column)):
                    values.append((column, value))
                case (.toOne(let target), .toOne(_, let column, _, let entityColumn)):
                    values.append((column, target.map { $0.primaryKey.storeValue } ?? .null))
                    if let entityColumn {
                        values.append((entityColumn, target.map { $0.entity.entityNumber.storeValue } ?? .null))
                    }
                case (.toMany, _):
                    try recordToMany(slot: slot, change: change, of: object, into: &changes)
                default: break
                }
            }
            values.sort { $0.column < $1.column }
            changes.updates.append(.init(id: object.objectID, table: object.entity.tableName,
                                         expectedVersion: object.version, values: values,
                                         force: object.flags.contains(.forceWrite)))
        }
        for object in deletedSet {
            changes.deletes.append(.init(id: object.objectID, table: object.entity.tableName,
                                         expectedVersion: object.version))
            for storage in object.entity.storage {
                switch storage {
                case .toManyByJoinTable(let join):
                    changes.joinClears.append((join.name, join.sourceColumn, object.objectID.primaryKey))
                case .toManyByForeignKey(let table, let column, _):
                    // The inverse's own column is nulled by the inverse's change; a hidden key is not.
                    changes.foreignKeyClears.append((table, column, object.objectID.primaryKey))
                default: break
                }
            }
        }
        return changes
    }

    /// Writes an object's attribute and to-one changes into its row, and records its to-many changes as
    /// join rows and foreign keys elsewhere.
    private func fill(_ row: inout RowValues, from object: ManagedObject, into changes: inout StoreChangeSet) throws {
        object.applyChanges(to: &row)
        guard object.entity.hasRelationships else { return }
        for (slot, change) in object.changes {
            switch change {
            case .toMany:
                try recordToMany(slot: slot, change: change, of: object, into: &changes)
            default:
                break
            }
        }
    }

    /// Records a to-many change as join rows and foreign keys on other rows.
    private func recordToMany(slot: Int, change: SlotValue, of object: ManagedObject,
                              into changes: inout StoreChangeSet) throws {
        guard case .toMany(let ids) = change else { return }
        switch object.entity.storage[slot] {
            case .toManyByJoinTable(let join):
                let committed: OrderedSet<ManagedObjectID> = object.isInserted ? [] : try (object.committedToMany[slot] ?? loadToMany(of: object, slot: slot))
                for id in ids where !committed.contains(id) {
                    changes.joinInserts.insert(.init(table: join.name, sourceColumn: join.sourceColumn,
                                                     destinationColumn: join.destinationColumn,
                                                     source: object.objectID.primaryKey, destination: id.primaryKey))
                }
                for id in committed where !ids.contains(id) {
                    changes.joinDeletes.insert(.init(table: join.name, sourceColumn: join.sourceColumn,
                                                     destinationColumn: join.destinationColumn,
                                                     source: object.objectID.primaryKey, destination: id.primaryKey))
                }
                if let orderColumn = join.orderColumn {
                    // Every position is rewritten: a move changes no join row, only the order. Gaps between
                    // positions, as for ordered foreign keys.
                    for (position, id) in ids.enumerated() {
                        changes.joinOrderUpdates.append(.init(table: join.name, orderColumn: orderColumn,
                                                              sourceColumn: join.sourceColumn, destinationColumn: join.destinationColumn,
                                                              source: object.objectID.primaryKey, destination: id.primaryKey,
                                                              position: Int64((position + 1) * 1024)))
                    }
                }
            case .toManyByForeignKey(let table, let column, let orderColumn):
                let relationship = object.entity.allProperties[slot] as! RelationshipDescription
                if relationship.storedInverse == nil {
                    let committed: OrderedSet<ManagedObjectID> = object.isInserted ? [] : try (object.committedToMany[slot] ?? loadToMany(of: object, slot: slot))
                    for id in ids where !committed.contains(id) {
                        changes.foreignKeyUpdates.append(.init(table: table, column: column, primaryKey: id.primaryKey,
                                                               value: object.objectID.primaryKey.storeValue))
                    }
                    for id in committed where !ids.contains(id) {
                        changes.foreignKeyUpdates.append(.init(table: table, column: column, primaryKey: id.primaryKey,
                                                               value: .null))
                    }
                }
                if let orderColumn {
                    // Gaps between positions leave room for later insertions.
                    for (position, id) in ids.enumerated() {
                        changes.foreignKeyUpdates.append(.init(table: table, column: orderColumn, primaryKey: id.primaryKey,
                                                               value: ((position + 1) * 1024).storeValue))
                    }
                }
            default:
                break
        }
    }

    // MARK: Conflicts

    private func describe(_ conflict: StoreConflict) -> MergeConflict {
        let object = registry[conflict.id]
        var storeValues: [String: String] = [:]
        var objectValues: [String: String] = [:]
        if let object {
            for (slot, property) in object.entity.allProperties.enumerated() {
                if case .attribute(_, let column) = object.entity.storage[slot] {
                    if let row = conflict.currentRow { storeValues[property.name] = "\(row[column])" }
                    if let value = try? object.primitiveAttribute(atSlot: slot) { objectValues[property.name] = "\(value)" }
                }
            }
        }
        return MergeConflict(objectID: conflict.id, expectedVersion: conflict.expectedVersion,
                             storeVersion: conflict.currentRow?.version ?? 0,
                             storeValues: storeValues, objectValues: objectValues)
    }

    /// Applies the merge policy to conflicting objects so that the next attempt can succeed.
    private func resolve(_ conflicts: [StoreConflict]) throws {
        for conflict in conflicts {
            guard let object = registry[conflict.id] else { continue }
            guard let current = conflict.currentRow else {
                // Deleted in the store: nothing to merge into; our change of it is dropped.
                if mergePolicy == .overwrite || mergePolicy == .mergeByPropertyObjectTrump {
                    throw ObjectGraphError.mergeConflict([describe(conflict)])
                }
                updatedSet.remove(object)
                deletedSet.remove(object)
                object.changes = [:]
                object.flags.remove(.deleted)
                unregister(object)
                continue
            }
            let previous = object.row
            switch mergePolicy {
            case .error:
                throw ObjectGraphError.mergeConflict([describe(conflict)])
            case .rollback:
                object.changes = [:]
                object.committedToMany = [:]
                object.row = current
                updatedSet.remove(object)
                if object.isDeleted { object.flags.remove(.deleted); deletedSet.remove(object) }
            case .mergeByPropertyObjectTrump:
                object.row = current
            case .overwrite:
                object.row = current
                object.flags.insert(.forceWrite)
                // Every attribute of ours is written, not only the changed ones.
                if let previous {
                    for (slot, storage) in object.entity.storage.enumerated() where object.changes[slot] == nil {
                        if case .attribute(_, let column) = storage { object.changes[slot] = .attribute(previous[column]) }
                    }
                }
            case .mergeByPropertyStoreTrump:
                for (slot, storage) in object.entity.storage.enumerated() {
                    guard object.changes[slot] != nil, let previous else { continue }
                    switch storage {
                    case .attribute(_, let column), .toOne(_, let column, _, _):
                        if previous[column] != current[column] { object.changes.removeValue(forKey: slot) }
                    default: break
                    }
                }
                object.row = current
            }
        }
    }

    // MARK: After the save

    /// Folds the saved changes into the objects' committed state and reports what was saved.
    /// The save's inserts and updates as the store's history records them (deletes it sees for itself).
    private func historyChanges(insertOrder: [ManagedObject]) -> [HistoryEntry.Change] {
        var changes: [HistoryEntry.Change] = []
        for object in insertOrder where object.isInserted {
            changes.append(HistoryEntry.Change(type: .insert, entityNumber: object.entity.entityNumber,
                                               primaryKey: object.objectID.primaryKey))
        }
        for object in updatedSet where !object.isDeleted {
            var slots: [Int] = []
            for (slot, _) in object.changes { slots.append(slot) }
            changes.append(HistoryEntry.Change(type: .update, entityNumber: object.entity.entityNumber,
                                               primaryKey: object.objectID.primaryKey, updatedSlots: slots.sorted()))
        }
        return changes
    }

    /// The author and name the store's history records for this context's commits.
    var historyAuthorship: HistoryAuthorship { HistoryAuthorship(author: transactionAuthor, contextName: name) }

    private func didSave(coordinator: PersistentStoreCoordinator, insertOrder: [ManagedObject],
                         changes: StoreChangeSet) -> ContextDidSave {
        var saved = ContextDidSave()
        saved.insertedObjectIDs.reserveCapacity(insertedSet.count)
        saved.updatedObjectIDs.reserveCapacity(updatedSet.count)
        // The inserted rows were built in `insertOrder` (skipping objects no longer inserted).
        var rows = changes.inserts.makeIterator()
        for object in insertOrder where object.isInserted {
            guard let insert = rows.next() else { break }
            if object.entity.hasRelationships {
                for (slot, change) in object.changes {
                    if case .toMany(let ids) = change { object.committedToMany[slot] = ids }
                }
            }
            object.changes = [:]
            object.row = insert.row
            object.flags.remove(.inserted)
            saved.insertedObjectIDs.insert(object.objectID)
        }
        // Objects changed in the same slots share one key set (sets are copy-on-write), recorded as a run.
        var lastKeys: (entity: EntityDescription, slots: SlotChanges, keys: Set<String>)?
        for object in updatedSet where !object.isDeleted {
            guard var row = object.row else { continue }
            object.row = nil  // so the mutation below does not copy the row
            if let last = lastKeys, last.entity === object.entity, last.slots.hasSameSlots(as: object.changes) {
                saved.changedKeyGroups.append(object.objectID, keys: last.keys, sameAsPrevious: true)
            } else {
                let keys = object.changedKeys
                lastKeys = (object.entity, object.changes, keys)
                saved.changedKeyGroups.append(object.objectID, keys: keys, sameAsPrevious: false)
            }
            row[2] = (row.version + 1).storeValue
            commit(object, into: &row)
            object.flags.remove(.forceWrite)
            saved.updatedObjectIDs.insert(object.objectID)
        }
        for object in deletedSet {
            saved.deletedObjectIDs.insert(object.objectID)
            unregister(object)
        }
        if !saved.deletedObjectIDs.isEmpty { coordinator.rowCache.remove(saved.deletedObjectIDs) }
        if !saved.updatedObjectIDs.isEmpty { coordinator.rowCache.remove(saved.updatedObjectIDs) }
        clearInserted()
        updatedSet = []
        deletedSet = []
        return saved
    }

    private func commit(_ object: ManagedObject, into row: inout RowValues) {
        object.applyChanges(to: &row)
        if object.entity.hasRelationships {
            for (slot, change) in object.changes {
                if case .toMany(let ids) = change { object.committedToMany[slot] = ids }
            }
        }
        object.changes = [:]
        object.row = row
    }
}
