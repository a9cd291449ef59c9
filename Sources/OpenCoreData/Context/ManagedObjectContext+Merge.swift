import Foundation

extension ManagedObjectContext {
    /// Pushes a child context's changes into its parent (the parent then holds them unsaved).
    func pushChanges(into parent: ManagedObjectContext) throws {
        let inserted = insertedInOrder, updated = updatedSet, deleted = deletedSet
        struct Transfer { var id: ManagedObjectID; var changes: SlotChanges; var transient: [Int: Any] }
        let insertedTransfers = inserted.map { Transfer(id: $0.objectID, changes: $0.changes, transient: $0.transientValues) }
        let updatedTransfers = updated.filter { !$0.isDeleted }.map { Transfer(id: $0.objectID, changes: $0.changes, transient: $0.transientValues) }
        let deletedIDs = deleted.map(\.objectID)
        try parent.performAndWait {
            for transfer in insertedTransfers {
                let object: ManagedObject
                if let existing = parent.registry[transfer.id] {
                    object = existing
                } else {
                    object = transfer.id.entity.managedObjectClass.init(entity: transfer.id.entity, id: transfer.id)
                    object.managedObjectContext = parent
                    object.flags.insert([.inserted, .registered])
                    parent.registry[transfer.id] = object
                    parent.noteInserted(object)
                    if parent.tracksChanges { parent.pendingChangeRecord.inserted.insert(object) }
                }
                object.changes.merge(transfer.changes) { _, new in new }
                object.transientValues.merge(transfer.transient) { _, new in new }
            }
            for transfer in updatedTransfers {
                let object = try parent.object(with: transfer.id)
                parent.willChange(object, slot: nil)
                object.changes.merge(transfer.changes) { _, new in new }
                object.transientValues.merge(transfer.transient) { _, new in new }
            }
            for id in deletedIDs {
                if let object = try? parent.object(with: id) { parent.delete(object) }
            }
            parent.processPendingChanges()
        }
        // The child's objects now match the parent: fold their changes into their committed state.
        for object in updated.union(inserted) where !object.isDeleted {
            object.flags.remove(.inserted)
            object.changes = [:]
            object.committedToMany = [:]
            object.row = try parent.performAndWait { try parent.currentRow(for: object.objectID) }
        }
        var saved = ContextDidSave()
        saved.insertedObjectIDs = Set(inserted.map(\.objectID))
        saved.updatedObjectIDs = Set(updated.map(\.objectID))
        saved.deletedObjectIDs = Set(deletedIDs)
        for object in deleted { unregister(object) }
        clearInserted()
        updatedSet = []
        deletedSet = []
        processPendingChanges()
        announceSave(saved, inserted: Set(inserted), updated: updated.subtracting(deleted), deleted: deleted)
        // Siblings that merge from this parent hear about it.
        parent.notifyChildrenOfSave(saved, from: self)
    }

    /// Brings a save made elsewhere into this context: updated objects are refreshed (keeping this
    /// context's own unsaved changes on top), deleted ones become deleted, inserted ones can be fetched.
    /// Objects this context does not hold cost nothing.
    public func mergeChanges(fromContextDidSave changes: ContextDidSave) {
        QueueCheck.use(of: self, "mergeChanges(fromContextDidSave:)")
        var change = ObjectsDidChange()
        change.mergedChanges = changes
        for id in changes.updatedObjectIDs {
            guard let object = registry[id] else { continue }
            object.committedToMany = [:]
            if object.isFault { continue }
            object.row = nil
            if object.changes.isEmpty {
                change.refreshed.insert(object)
            } else {
                try? fulfillFault(object)
                change.updated.insert(object)
            }
            if object.changes.isEmpty { try? fulfillFault(object) }
        }
        for id in changes.deletedObjectIDs {
            guard let object = registry[id] else { continue }
            insertedSet.remove(object)
            updatedSet.remove(object)
            deletedSet.remove(object)
            object.changes = [:]
            object.flags.insert(.deleted)
            unregister(object)
            change.deleted.insert(object)
        }
        // To-many contents of objects related to changed rows may have moved: drop cached sets.
        if !changes.insertedObjectIDs.isEmpty || !changes.deletedObjectIDs.isEmpty || !changes.updatedObjectIDs.isEmpty {
            for object in registry.values where !object.committedToMany.isEmpty { object.committedToMany = [:] }
        }
        for id in changes.insertedObjectIDs {
            if let object = try? self.object(with: id) { change.inserted.insert(object) }
        }
        notifyObservers(change)
    }

    /// Applies a save or batch request made outside any context (IDs or their URIs) to the given
    /// contexts, on each context's queue.
    public static func mergeChanges(fromRemoteContextSave changes: ContextDidSave, into contexts: [ManagedObjectContext]) {
        for context in contexts {
            context.performAndWait { context.mergeChanges(fromContextDidSave: changes) }
        }
    }

    func notifyChildrenOfSave(_ saved: ContextDidSave, from child: ManagedObjectContext?) {
        let children = childContexts.compactMap(\.context).filter { $0 !== child && $0.automaticallyMergesChangesFromParent }
        for sibling in children {
            sibling.perform { sibling.mergeChanges(fromContextDidSave: saved) }
        }
    }

    func updateAutomaticMergeRegistration() {
        if let parent {
            parent.registerChild(self)
            persistentStoreCoordinator?.unregisterAutomaticMerge(self)
        } else if automaticallyMergesChangesFromParent, let coordinator = persistentStoreCoordinator {
            coordinator.registerAutomaticMerge(self)
        } else {
            persistentStoreCoordinator?.unregisterAutomaticMerge(self)
        }
    }
}
