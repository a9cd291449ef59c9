import Foundation
import OpenCoreData

/// Applies pulled transactions to the local store in one save (docs/SYNC.md, "Pull").
///
/// Applying a page twice changes nothing the first time did not (a crash between the save and the token's
/// write repeats the page): an upsert of a known record updates it, a delete of a deleted one does nothing,
/// and the record IDs of objects the page creates are written before the save.
struct PullApplier {
    let context: ManagedObjectContext
    let local: SyncLocalStore
    let policy: SyncMergePolicy
    private var pending: PendingLocalChanges
    /// Reads the pending local changes again (after a save of this page whose delete rules may have deleted
    /// more objects, which a later change of the page must find deleted).
    let readPending: () throws -> PendingLocalChanges
    private var deletedSinceSave = false

    private var rows: [UUID: SyncBookkeeping.Record] = [:]
    private var created: [UUID: ManagedObject] = [:]
    private var changedRows: [UUID: SyncBookkeeping.Record] = [:]

    /// - Throws: what `readPending` throws.
    init(context: ManagedObjectContext, local: SyncLocalStore, policy: SyncMergePolicy,
         readPending: @escaping () throws -> PendingLocalChanges) throws {
        self.context = context
        self.local = local
        self.policy = policy
        self.readPending = readPending
        pending = try readPending()
    }

    /// Applies `transactions` and saves.
    ///
    /// - Throws: ``SyncError/invalidServerChange(entity:key:recordID:reason:)`` for a change the local model
    ///   cannot take (nothing is saved then); `ObjectGraphError` and ``StoreError`` from the save.
    mutating func apply(_ transactions: [SyncTransaction]) throws {
        var mentioned: Set<UUID> = []
        for change in transactions.flatMap(\.changes) {
            mentioned.insert(change.recordID)
            for value in change.values.values {
                if case .reference(let id) = value { mentioned.insert(id) }
                if case .references(let ids) = value { mentioned.formUnion(ids) }
            }
        }
        for row in try local.store.syncRecords(forRecordIDs: Array(mentioned)) { rows[row.recordID] = row }
        for change in transactions.flatMap(\.changes) {
            // A delete's rules may reach objects this page created: those are saved first, so that the
            // history records their deletes and the next push sends them (see ``PushBuilder``).
            if change.kind == .delete, !created.isEmpty { try save() }
            if change.kind == .upsert, deletedSinceSave { try save() }
            try apply(change)
        }
        try save()
    }

    /// Writes the record IDs of the objects created since the last save, then saves.
    private mutating func save() throws {
        try context.obtainPermanentIDs(for: Array(created.values))
        for (recordID, object) in created {
            let row = SyncBookkeeping.Record(recordID: recordID, entity: object.entity.name,
                                             primaryKey: object.objectID.primaryKey, isDeleted: false)
            changedRows[recordID] = row
            rows[recordID] = row
        }
        if !changedRows.isEmpty { try local.store.writeSyncBookkeeping(records: Array(changedRows.values)) }
        if context.hasChanges { try context.save() }
        created = [:]
        changedRows = [:]
        if deletedSinceSave {
            pending = try readPending()
            deletedSinceSave = false
        }
    }

    private mutating func apply(_ change: SyncRecordChange) throws {
        guard let entity = context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[change.entity] else {
            throw SyncError.invalidServerChange(entity: change.entity, key: nil, recordID: change.recordID,
                                                reason: "the local model has no such entity")
        }
        switch change.kind {
        case .delete:
            if let object = try self.object(for: change.recordID) {
                context.delete(object)
                deletedSinceSave = true
            }
            created[change.recordID] = nil
            let row = rows[change.recordID]
            let marked = SyncBookkeeping.Record(recordID: change.recordID, entity: row?.entity ?? entity.name,
                                                primaryKey: row?.primaryKey ?? 0, isDeleted: true)
            rows[change.recordID] = marked
            changedRows[change.recordID] = marked
        case .upsert:
            if rows[change.recordID]?.isDeleted == true { return }   // a delete wins over any later upsert
            let object: ManagedObject
            if let known = try self.object(for: change.recordID) {
                object = known
            } else if let row = rows[change.recordID], let id = local.objectID(entity: row.entity, primaryKey: row.primaryKey),
                      pending.deleted.contains(id) {
                return   // deleted here and not yet pushed: the delete will win on the server too
            } else {
                guard !entity.isAbstract else {
                    throw SyncError.invalidServerChange(entity: entity.name, key: nil, recordID: change.recordID,
                                                        reason: "the entity is abstract")
                }
                object = try context.insertNewObject(forEntityName: entity.name)
                created[change.recordID] = object
            }
            for (key, value) in change.values.sorted(by: { $0.key < $1.key }) {
                if policy == .localChangesWin, pending.keepsLocal(key, of: object.objectID) { continue }
                try set(value, forKey: key, of: object, recordID: change.recordID)
            }
        }
    }

    private mutating func set(_ value: SyncValue, forKey key: String, of object: ManagedObject, recordID: UUID) throws {
        let entity = object.entity
        if let attribute = SyncedProperties.attributes(of: entity)[key] {
            let converted = try SyncValueConversion.modelValue(value, for: attribute, object: object.objectID, recordID: recordID)
            // An equal value is not set again: re-applying this client's own pushed change dirties nothing.
            if created[recordID] == nil, try SyncValueConversion.syncValue(try object.value(forKey: key), of: attribute) == value { return }
            try object.setValue(converted, forKey: key)
        } else if let relationship = SyncedProperties.relationships(of: entity)[key] {
            func refuse(_ reason: String) -> SyncError {
                .invalidServerChange(entity: entity.name, key: key, recordID: recordID, reason: reason)
            }
            switch (relationship.isToMany, value) {
            case (false, .null):
                try object.setValue(nil, forKey: key)
            case (false, .reference(let id)):
                // A destination deleted here is left out: the delete travels and wins everywhere.
                let destination = try self.object(for: id)
                if (try object.value(forKey: key) as? ManagedObject)?.objectID == destination?.objectID { return }
                try object.setValue(destination, forKey: key)
            case (true, .references(let ids)):
                var destinations: [ManagedObject] = []
                for id in ids { if let destination = try self.object(for: id) { destinations.append(destination) } }
                let current = try object.value(forKey: key)
                let currentIDs = ((current as? [ManagedObject]) ?? Array((current as? Set<ManagedObject>) ?? [])).map(\.objectID)
                if relationship.isOrdered ? currentIDs == destinations.map(\.objectID)
                                          : Set(currentIDs) == Set(destinations.map(\.objectID)) { return }
                if relationship.isOrdered {
                    try object.setValue(destinations, forKey: key)
                } else {
                    try object.setValue(Set(destinations), forKey: key)
                }
            default:
                throw refuse("a \(value.kindName) value for a \(relationship.isToMany ? "to-many" : "to-one") relationship")
            }
        } else {
            throw SyncError.invalidServerChange(entity: entity.name, key: key, recordID: recordID,
                                                reason: "no synced property of that name")
        }
    }

    /// The live object of `recordID` here: one this page created, or the one its row names (nil when it
    /// has none, or it was deleted).
    private mutating func object(for recordID: UUID) throws -> ManagedObject? {
        if let object = created[recordID] { return object }
        guard let row = rows[recordID], !row.isDeleted,
              let id = local.objectID(entity: row.entity, primaryKey: row.primaryKey) else { return nil }
        return try? context.existingObject(with: id)
    }
}
