import Foundation
import Synchronization
import OpenCoreData
import OpenCoreDataPostgreSQL
import OpenCoreDataSync

/// The sync server's state, kept with this library in a store of its own model: an SQLite file, or a
/// PostgreSQL database several server instances share. Per zone (one per user): the zone's token, the log of
/// applied transactions (what pulls return), and each record's merged state (the server's copy).
///
/// No SQL is written here: the store's uniqueness constraints keep a transaction ID applied once per zone and
/// a record ID in one zone, and optimistic locking on the zone's row keeps two instances from handing out one
/// token twice (the loser retries).
final class SyncServerStore: @unchecked Sendable {
    /// The app's model, which pushes are checked against.
    let appModel: ManagedObjectModel
    /// The app model's fingerprint; a push made with another is refused.
    let fingerprint: String
    let coordinator: PersistentStoreCoordinator
    private let validator: SyncPushValidator
    /// Serializes this instance's pushes (other instances are kept apart by the zone row's version).
    private let pushing = Mutex<Void>(())
    /// How many times a push whose zone another instance moved meanwhile is tried again.
    private static let attempts = 8

    /// Opens (creating where missing) the state at `location`: a file path or a `postgresql://` URL.
    ///
    /// - Throws: ``StoreError`` when the store cannot be opened, or holds another layout.
    init(location: String, appModel: ManagedObjectModel, watch: Bool = true) throws {
        self.appModel = appModel
        fingerprint = SyncModelFingerprint.of(appModel)
        validator = SyncPushValidator(model: appModel)
        coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        if location.hasPrefix("postgresql://") || location.hasPrefix("postgres://") {
            // PostgreSQL announces commits to other instances through its history's change feed, so the
            // state keeps history there (docs/POSTGRESQL.md); SQLite's watch needs none.
            try coordinator.addPersistentStore(configuration: PostgreSQLStoreConfiguration(url: location),
                                               options: StoreOptions(persistentHistoryTracking: watch, remoteChangeNotifications: watch))
        } else {
            try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: location),
                                               options: StoreOptions(remoteChangeNotifications: watch))
        }
    }

    /// The state's own model.
    static func model() throws -> ManagedObjectModel {
        let zone = EntityDescription("SyncZone") {
            Attribute("name", .string, optional: false)
            Attribute("token", .integer64, optional: false, default: Int64(0))
        }
        zone.uniquenessConstraints = [["name"]]
        let logged = EntityDescription("SyncLoggedTransaction") {
            Attribute("zone", .string, optional: false)
            Attribute("transactionID", .string, optional: false)
            Attribute("origin", .string, optional: false)
            Attribute("token", .integer64, optional: false)
            Attribute("changes", .binaryData, optional: false)
        }
        logged.uniquenessConstraints = [["zone", "transactionID"]]
        let record = EntityDescription("SyncRecord") {
            Attribute("recordID", .string, optional: false)
            Attribute("zone", .string, optional: false)
            Attribute("entity", .string, optional: false)
            Attribute("values", .binaryData, optional: false)
            Attribute("deleted", .boolean, optional: false, default: false)
        }
        record.uniquenessConstraints = [["recordID"]]
        return try ManagedObjectModel(entities: [zone, logged, record])
    }

    private func context() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    private func fetch(_ entity: String, _ format: String, _ arguments: [Any], sortedBy key: String? = nil,
                       limit: Int = 0, in context: ManagedObjectContext) throws -> [ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = try QueryPredicate(format: format, argumentArray: arguments)
        if let key { request.sortDescriptors = [QuerySortDescriptor(key: key, ascending: true)] }
        request.fetchLimit = limit
        return try context.fetch(request)
    }

    /// Applies a push to `zone`, all or nothing.
    ///
    /// - Throws: ``SyncRefusal`` for another model (409), a change the model refuses (422), a record of
    ///   another zone (403); ``StoreError`` and `ObjectGraphError` when the store fails.
    func push(_ request: SyncPushRequest, zone: String) throws -> SyncPushResponse {
        guard request.model == fingerprint else { throw SyncRefusal.modelMismatch(server: fingerprint, client: request.model) }
        return try pushing.withLock { _ in
            var attempt = 0
            while true {
                attempt += 1
                do {
                    return try apply(request, zone: zone)
                } catch ObjectGraphError.validationFailed(let failures) where attempt < Self.attempts
                            && failures.contains(where: { $0.rule == .uniquenessViolation }) {
                    continue   // another instance made the zone or logged the same transaction meanwhile
                } catch let error as ObjectGraphError where attempt < Self.attempts && Self.isConflict(error) {
                    continue   // another instance moved the zone's token meanwhile
                }
            }
        }
    }

    private static func isConflict(_ error: ObjectGraphError) -> Bool {
        if case .mergeConflict = error { return true }
        return false
    }

    private func apply(_ request: SyncPushRequest, zone: String) throws -> SyncPushResponse {
        let context = context()
        let zoneObject = try fetch("SyncZone", "name == %@", [zone], in: context).first
            ?? { let new = try context.insertNewObject(forEntityName: "SyncZone"); try new.setValue(zone, forKey: "name"); return new }()
        var token = try zoneObject.value(forKey: "token") as? Int64 ?? 0
        let ids = request.transactions.map(\.id)
        var applied = Set(try fetch("SyncLoggedTransaction", "zone == %@ AND transactionID IN %@", [zone, ids], in: context)
            .compactMap { try $0.value(forKey: "transactionID") as? String })

        // Every record the push names, as stored.
        var mentioned: Set<String> = []
        for change in request.transactions.flatMap(\.changes) {
            mentioned.insert(change.recordID.uuidString)
            for value in change.values.values {
                if case .reference(let id) = value { mentioned.insert(id.uuidString) }
                if case .references(let ids) = value { mentioned.formUnion(ids.map(\.uuidString)) }
            }
        }
        var stored: [UUID: ManagedObject] = [:]
        var states: [UUID: SyncRecordState] = [:]
        for object in try fetch("SyncRecord", "recordID IN %@", [Array(mentioned)], in: context) {
            guard let text = try object.value(forKey: "recordID") as? String, let id = UUID(uuidString: text) else { continue }
            guard try object.value(forKey: "zone") as? String == zone else { throw SyncRefusal.foreignRecord(id) }
            stored[id] = object
            states[id] = try Self.state(of: object, id: id)
        }

        // One encoder for the push: a push of 10,000 changes stores 10,000 records.
        let encoder = JSONEncoder()
        var touched: Set<UUID> = []
        for transaction in request.transactions where !applied.contains(transaction.id) {
            applied.insert(transaction.id)
            guard !transaction.id.isEmpty, transaction.id.count <= 200, transaction.origin.count <= 200 else {
                throw SyncRefusal.badRequest("a transaction ID or origin is empty or longer than 200 characters")
            }
            for change in transaction.changes {
                try validator.check(change) { id in states[id].map { ($0.entity, $0.deleted) } }
                var state = states[change.recordID] ?? SyncRecordState(recordID: change.recordID, entity: change.entity, values: [:], deleted: false)
                switch change.kind {
                case .delete:
                    state.values = [:]
                    state.deleted = true
                case .upsert:
                    guard !state.deleted else { continue }   // a deleted record never comes back
                    state.values.merge(change.values) { _, new in new }
                }
                states[change.recordID] = state
                touched.insert(change.recordID)
            }
            token += 1
            let logged = try context.insertNewObject(forEntityName: "SyncLoggedTransaction")
            try logged.setValue(zone, forKey: "zone")
            try logged.setValue(transaction.id, forKey: "transactionID")
            try logged.setValue(transaction.origin, forKey: "origin")
            try logged.setValue(token, forKey: "token")
            try logged.setValue(try encoder.encode(transaction.changes), forKey: "changes")
        }
        // Sorted by their text, made once per record (not once per comparison).
        for (_, id) in touched.map({ ($0.uuidString, $0) }).sorted(by: { $0.0 < $1.0 }) {
            guard let state = states[id] else { continue }
            if !state.deleted, let missing = validator.missingRequiredValue(entity: state.entity, values: state.values) {
                throw SyncRefusal.invalidChange("\(state.entity).\(missing.key) of record \(id): \(missing.reason)")
            }
            let object = try stored[id] ?? {
                let new = try context.insertNewObject(forEntityName: "SyncRecord")
                try new.setValue(id.uuidString, forKey: "recordID")
                try new.setValue(zone, forKey: "zone")
                try new.setValue(state.entity, forKey: "entity")
                return new
            }()
            try object.setValue(try encoder.encode(state.values), forKey: "values")
            try object.setValue(state.deleted, forKey: "deleted")
        }
        try zoneObject.setValue(token, forKey: "token")
        if context.hasChanges { try context.save() }
        return SyncPushResponse(acknowledged: ids, serverToken: token)
    }

    /// The zone's transactions after `token`, at most `limit`, oldest first.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read, or a logged transaction no longer decodes.
    func pull(zone: String, after token: Int64, limit: Int) throws -> SyncPullResponse {
        try JSONDecoder().decode(SyncPullResponse.self, from: pullBody(zone: zone, after: token, limit: limit))
    }

    /// The same page as ``pull(zone:after:limit:)``, as the JSON of a `SyncPullResponse`, with each logged
    /// transaction's changes copied in as they were stored (the server wrote them as JSON when it applied the
    /// push): decoding them only to encode them again took a third of a pull's time on the server.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; `EncodingError` for a text no JSON can hold.
    func pullBody(zone: String, after token: Int64, limit: Int) throws -> Data {
        let context = context()
        let rows = try fetch("SyncLoggedTransaction", "zone == %@ AND token > %@", [zone, token], sortedBy: "token",
                             limit: limit + 1, in: context)
        let encoder = JSONEncoder()
        var body = Data("{\"transactions\":[".utf8)
        var last = token
        for (index, row) in rows.prefix(limit).enumerated() {
            let serverToken = try row.value(forKey: "token") as? Int64 ?? 0
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: Data("{\"id\":".utf8))
            body.append(try encoder.encode(try row.value(forKey: "transactionID") as? String ?? ""))
            body.append(contentsOf: Data(",\"origin\":".utf8))
            body.append(try encoder.encode(try row.value(forKey: "origin") as? String ?? ""))
            body.append(contentsOf: Data(",\"serverToken\":\(serverToken),\"changes\":".utf8))
            let changes = try row.value(forKey: "changes") as? Data ?? Data()
            body.append(changes.isEmpty ? Data("[]".utf8) : changes)
            body.append(UInt8(ascii: "}"))
            last = serverToken
        }
        body.append(contentsOf: Data("],\"serverToken\":\(last),\"hasMore\":\(rows.count > limit)}".utf8))
        return body
    }

    /// Every record of the zone, as the server holds it, by record ID.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    func records(zone: String) throws -> [SyncRecordState] {
        try fetch("SyncRecord", "zone == %@", [zone], sortedBy: "recordID", in: context()).compactMap { object in
            guard let text = try object.value(forKey: "recordID") as? String, let id = UUID(uuidString: text) else { return nil }
            return try Self.state(of: object, id: id)
        }
    }

    /// The zone's token (0 for a zone nothing was pushed to).
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    func token(zone: String) throws -> Int64 {
        try fetch("SyncZone", "name == %@", [zone], in: context()).first?.value(forKey: "token") as? Int64 ?? 0
    }

    private static func state(of object: ManagedObject, id: UUID) throws -> SyncRecordState {
        SyncRecordState(recordID: id, entity: try object.value(forKey: "entity") as? String ?? "",
                        values: try JSONDecoder().decode([String: SyncValue].self, from: try object.value(forKey: "values") as? Data ?? Data()),
                        deleted: try object.value(forKey: "deleted") as? Bool ?? false)
    }

    /// Closes the store (a PostgreSQL store's connections).
    func close() {
        for store in coordinator.persistentStores { coordinator.remove(store) }
    }
}
