import Foundation
import OpenCoreData

/// Turns local history after the pushed mark into transactions to push (docs/SYNC.md, "Push").
///
/// Values are read from the objects as they are now, not as the history's transaction left them: history
/// keeps which properties changed, not their values. A later save's value can therefore travel with an
/// earlier transaction; the later transaction then carries it again, which applies as a no-op.
struct PushBuilder {
    /// What one push sends and what it needs written first.
    struct Batch {
        /// The transactions to send (those with nothing to send are left out).
        var transactions: [SyncTransaction]
        /// The last local transaction this batch covers: the pushed mark once the server acknowledges it.
        var through: PersistentHistoryToken
        /// Record IDs given to objects for the first time: written before sending, so that a push repeated
        /// after a crash names every object as the first attempt did.
        var bookkeeping: [SyncBookkeeping.Record]
        /// The rows of the records this batch deletes, marked deleted: written once the server acknowledged
        /// the batch (until then the local history says the delete is still to be sent).
        var deletions: [SyncBookkeeping.Record]
        /// Objects saved here after a delete of their record was applied (a context that had not merged it
        /// yet): to be deleted again, as a deleted record never comes back.
        var resurrected: Set<ManagedObjectID>
    }

    let context: ManagedObjectContext
    let local: SyncLocalStore
    let clientID: UUID
    let author: String

    private var recordIDs: [ManagedObjectID: UUID] = [:]
    private var bookkeeping: [UUID: SyncBookkeeping.Record] = [:]
    private var deletedRecords: Set<UUID> = []
    private var resurrected: Set<ManagedObjectID> = []
    /// Objects whose bookkeeping row was looked for already (found or not), so each is asked for once.
    private var lookedUp: Set<ManagedObjectID> = []
    /// The batch's inserted and updated objects, fetched in bulk (absent: deleted since).
    private var objects: [ManagedObjectID: ManagedObject] = [:]
    private var deletions: [SyncBookkeeping.Record] = []

    init(context: ManagedObjectContext, local: SyncLocalStore, clientID: UUID, author: String) {
        self.context = context
        self.local = local
        self.clientID = clientID
        self.author = author
    }

    /// The next batch after `mark`, at most `limit` local transactions; nil when nothing is pending.
    ///
    /// - Throws: ``StoreError`` and `ObjectGraphError` from reading history, objects and bookkeeping.
    mutating func nextBatch(after mark: PersistentHistoryToken?, limit: Int) throws -> Batch? {
        let request = PersistentHistoryChangeRequest.fetchHistory(after: mark)
        guard let result = try context.execute(request) as? PersistentHistoryResult else { return nil }
        let pending = result.transactions
        guard let lastPending = pending.last else { return nil }
        // The engine's own saves (applied pulls) are not sent back, except the deletes their delete rules
        // caused: a cascade run here of a delete made elsewhere can reach objects the deleting replica never
        // saw, and only this replica can tell the others.
        var covered: [PersistentHistoryTransaction] = []
        var through = lastPending.token
        for transaction in pending {
            let sendable = transaction.author != author ? transaction
                : transaction.keepingChanges { $0.changeType == .delete }
            if !(sendable.changes ?? []).isEmpty {
                if covered.count == limit { break }
                covered.append(sendable)
            }
            through = transaction.token
        }
        // Objects inserted by a local save not yet pushed: a reference to one that this batch has not sent
        // yet is preceded by its full state, so that the server never sees a reference to a record it does
        // not know.
        var unsent = Set(pending.filter { $0.author != author }.flatMap { $0.changes ?? [] }
            .filter { $0.changeType == .insert }.map(\.changedObjectID))
        try loadRecordIDs(for: covered.flatMap { ($0.changes ?? []).map(\.changedObjectID) })
        try loadObjects(covered.flatMap { ($0.changes ?? []).filter { $0.changeType != .delete }.map(\.changedObjectID) })
        var transactions: [SyncTransaction] = []
        for transaction in covered {
            var changes: [SyncRecordChange] = []
            for change in transaction.changes ?? [] {
                let id = change.changedObjectID
                switch change.changeType {
                case .delete:
                    // Never sent: nothing to delete there. Already marked: a pulled delete, known there.
                    guard let recordID = recordIDs[id], !deletedRecords.contains(recordID) else { continue }
                    changes.append(SyncRecordChange(recordID: recordID, entity: id.entity.name, kind: .delete))
                    deletions.append(.init(recordID: recordID, entity: id.entity.name, primaryKey: id.primaryKey, isDeleted: true))
                    deletedRecords.insert(recordID)
                    unsent.remove(id)
                case .insert, .update:
                    guard let object = objects[id] else { continue }   // deleted since
                    if let recordID = recordIDs[id], deletedRecords.contains(recordID) {
                        // Saved by a context that had not yet seen a pulled delete of it: the delete wins.
                        resurrected.insert(id)
                        continue
                    }
                    let keys = change.changeType == .insert ? nil : change.updatedProperties
                    try appendUpsert(of: object, keys: keys, to: &changes, unsent: &unsent)
                }
            }
            if !changes.isEmpty {
                transactions.append(SyncTransaction(id: "\(clientID.uuidString):\(transaction.transactionNumber)",
                                                    origin: clientID.uuidString, changes: changes))
            }
        }
        return Batch(transactions: transactions, through: through, bookkeeping: Array(bookkeeping.values),
                     deletions: deletions, resurrected: resurrected)
    }

    /// Appends `object`'s upsert (the properties in `keys`, every synced one when nil), preceded by the full
    /// state of any unsent object it references.
    private mutating func appendUpsert(of object: ManagedObject, keys: Set<String>?, to changes: inout [SyncRecordChange],
                                       unsent: inout Set<ManagedObjectID>) throws {
        let entity = object.entity
        if keys == nil { unsent.remove(object.objectID) }
        var values: [String: SyncValue] = [:]
        for (name, attribute) in SyncedProperties.attributes(of: entity) where keys?.contains(name) ?? true {
            values[name] = try SyncValueConversion.syncValue(try object.value(forKey: name), of: attribute)
        }
        for (name, relationship) in SyncedProperties.relationships(of: entity) where keys?.contains(name) ?? true {
            let value = try object.value(forKey: name)
            var destinations: [ManagedObject]
            if relationship.isToMany {
                if let ordered = value as? [ManagedObject] { destinations = ordered }
                else if let set = value as? Set<ManagedObject> { destinations = Array(set) }
                else { destinations = [] }
            } else {
                destinations = (value as? ManagedObject).map { [$0] } ?? []
            }
            for destination in destinations where unsent.contains(destination.objectID) {
                try appendUpsert(of: destination, keys: nil, to: &changes, unsent: &unsent)
            }
            var ids = try destinations.map { try recordID(of: $0.objectID) }
            if relationship.isToMany {
                if !relationship.isOrdered { ids.sort { $0.uuidString < $1.uuidString } }
                values[name] = .references(ids)
            } else {
                values[name] = ids.first.map { .reference($0) } ?? .null
            }
        }
        guard keys == nil || !values.isEmpty else { return }   // only unsynced properties changed
        changes.append(SyncRecordChange(recordID: try recordID(of: object.objectID), entity: entity.name,
                                        kind: .upsert, values: values))
    }

    /// The record ID of `id`, given now if it has none.
    private mutating func recordID(of id: ManagedObjectID) throws -> UUID {
        if let known = recordIDs[id] { return known }
        try loadRecordIDs(for: [id])
        if let known = recordIDs[id] { return known }
        let new = UUID()
        recordIDs[id] = new
        bookkeeping[new] = .init(recordID: new, entity: id.entity.name, primaryKey: id.primaryKey, isDeleted: false)
        return new
    }

    /// Fetches `ids`' objects with their values, a few hundred per fetch: one query per entity and chunk
    /// instead of one fault per object (what sync-push-pull measures).
    private mutating func loadObjects(_ ids: [ManagedObjectID]) throws {
        let byEntity = Dictionary(grouping: Set(ids).filter { objects[$0] == nil }, by: { $0.entity.name })
        for (entity, members) in byEntity {
            for start in stride(from: 0, to: members.count, by: 500) {
                let request = FetchRequest<ManagedObject>(entityName: entity)
                request.predicate = try QueryPredicate(format: "SELF IN %@", Array(members[start..<min(start + 500, members.count)]))
                request.returnsObjectsAsFaults = false
                request.includesSubentities = false
                for object in try context.fetch(request) { objects[object.objectID] = object }
            }
        }
    }

    private mutating func loadRecordIDs(for ids: [ManagedObjectID]) throws {
        let missing = Array(Set(ids.filter { recordIDs[$0] == nil && !$0.isTemporaryID && !lookedUp.contains($0) }))
        lookedUp.formUnion(missing)
        guard !missing.isEmpty else { return }
        var byObject: [String: ManagedObjectID] = [:]
        for id in missing { byObject["\(id.entity.name)/\(id.primaryKey)"] = id }
        for row in try local.store.syncRecords(forObjects: missing.map { ($0.entity.name, $0.primaryKey) }) {
            guard let id = byObject["\(row.entity)/\(row.primaryKey)"] else { continue }
            recordIDs[id] = row.recordID
            if row.isDeleted { deletedRecords.insert(row.recordID) }
        }
    }
}
