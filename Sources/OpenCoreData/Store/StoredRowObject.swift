import Foundation

/// One stored row seen through ``KeyValueCoding`` with the values a managed object of its entity would
/// present (attributes decoded as ``ValueConversion/swiftValue(_:for:)`` and ``TransformableValue`` decode them
/// for objects, related rows for relationships), so the in-memory evaluator can answer a predicate or sort the
/// store's SQL cannot (``ResidualQuery``). Related rows are read from the store through ``RelatedStoredRows``,
/// once per request.
final class StoredRowObject: KeyValueCoding {
    let entity: EntityDescription
    let row: RowValues
    let objectID: ManagedObjectID
    private let related: RelatedStoredRows

    init(row: RowValues, entity fallback: EntityDescription, related: RelatedStoredRows) {
        let primaryKey = Int64.fromStoreValue(row[0]) ?? 0
        let number = row.count > 1 ? Int.fromStoreValue(row[1]) : nil
        let entity = number.flatMap { related.model.entity(number: $0) } ?? fallback
        self.entity = entity
        self.row = row
        self.related = related
        objectID = ManagedObjectID(entity: entity, primaryKey: primaryKey, store: related.store.identity)
    }

    /// The property's value as ``ManagedObject/value(forKey:)`` gives it: a to-one as the related row's
    /// object, a to-many as an array of them (in the relationship's order when it is ordered).
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` for a key that is not a property of the entity;
    ///   ``ObjectGraphError/fetchedPropertyOnStoredRows(entity:key:)`` for a fetched property (never evaluated in the app);
    ///   ``StoreError`` (or the store's own error) when related rows cannot be read; for a Transformable attribute,
    ///   what ``TransformableValue`` throws for bytes that do not decode.
    func value(forKey key: String) throws -> Any? {
        guard let slot = entity.slot(forKey: key) else {
            if entity.fetchedProperty(named: key) != nil {
                throw ObjectGraphError.fetchedPropertyOnStoredRows(entity: entity.name, key: key)
            }
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        let property = entity.allProperties[slot]
        switch entity.storage[slot] {
        case .attribute(_, let column):
            let attribute = property as! AttributeDescription
            if attribute.attributeType == .transformable {
                return try TransformableValue.value(row[column], for: attribute, of: objectID)
            }
            return ValueConversion.swiftValue(row[column], for: attribute.attributeType)
        case .toOne:
            guard let id = relatedID(atSlot: slot) else { return nil }
            // The first time a to-one is reached, the targets of every row of the batch are read at once.
            try related.prefetchToOne(entity: entity, slot: slot)
            return try related.object(id)
        case .toManyByForeignKey, .toManyByJoinTable:
            let relationship = property as! RelationshipDescription
            // The first time a to-many is reached, the members of every row of the batch are read at once.
            try related.prefetchToMany(entity: entity, slot: slot, relationship: relationship, storage: entity.storage[slot])
            return try related.objects(of: objectID, relationship: relationship, storage: entity.storage[slot])
        case .transient:
            if let composite = property as? CompositeAttributeDescription {
                return try compositeValue(composite.elements, under: [composite.name])
            }
            return (property as? AttributeDescription)?.defaultValue
        }
    }

    /// The ID a to-one relationship's column holds (with the destination's sub-entity when the row names it).
    func relatedID(atSlot slot: Int) -> ManagedObjectID? {
        guard case .toOne(_, let column, _, let entityColumn) = entity.storage[slot],
              case .int64(let key) = row[column].storage,
              let relationship = entity.allProperties[slot] as? RelationshipDescription,
              var destination = relationship.destinationEntity else { return nil }
        if let entityColumn, case .int64(let number) = row[entityColumn].storage,
           let sub = related.model.entity(number: Int(number)) {
            destination = sub
        }
        return ManagedObjectID(entity: destination, primaryKey: key, store: related.store.identity)
    }

    /// A composite's elements as a dictionary, as ``CompositeValue`` reads them from an object.
    private func compositeValue(_ elements: [AttributeDescription], under path: [String]) throws -> [String: Any]? {
        var result: [String: Any] = [:]
        for element in elements {
            let elementPath = path + [element.name]
            if let nested = element as? CompositeAttributeDescription {
                if let value = try compositeValue(nested.elements, under: elementPath) { result[element.name] = value }
            } else if let value = try self.value(forKey: elementPath.joined(separator: ".")) {
                result[element.name] = value
            }
        }
        return result.isEmpty ? nil : result
    }
}

/// The rows a request's in-memory evaluation reaches through relationships, read from the store on first use
/// and kept for the rest of the request (a request reads each related row once). Inside a read transaction
/// (a results controller's load) they are read through it, from the same snapshot and on the same connection.
final class RelatedStoredRows {
    let store: any StoreBackend
    let model: ManagedObjectModel
    private let snapshot: (any StoreSnapshotReads)?
    private var objects: [ManagedObjectID: StoredRowObject] = [:]
    private var missing: Set<ManagedObjectID> = []
    private var toMany: [ManagedObjectID: [String: [StoredRowObject]]] = [:]
    /// The rows being evaluated, whose to-one targets are read together.
    private var batch: [StoredRowObject] = []
    /// The to-one relationships (entity, slot) whose targets have been read for the batch.
    private var prefetched: Set<[Int]> = []

    init(store: any StoreBackend, model: ManagedObjectModel, snapshot: (any StoreSnapshotReads)? = nil) {
        self.store = store
        self.model = model
        self.snapshot = snapshot
    }

    /// Objects for the rows being evaluated (not kept by ID: each is reached once), remembered so their to-one
    /// targets can be read together.
    func batchObjects(_ rows: [RowValues], entity: EntityDescription) -> [StoredRowObject] {
        batch = rows.map { StoredRowObject(row: $0, entity: entity, related: self) }
        return batch
    }

    /// Reads, in one batch of rows per table, the targets of the to-one at `slot` of every batch row of `entity`.
    ///
    /// - Throws: the store's read errors.
    func prefetchToOne(entity: EntityDescription, slot: Int) throws {
        guard prefetched.insert([entity.entityNumber, slot]).inserted else { return }
        var ids: [ManagedObjectID] = []
        var seen = Set<ManagedObjectID>()
        for owner in batch where owner.entity === entity {
            if let id = owner.relatedID(atSlot: slot), objects[id] == nil, !missing.contains(id), seen.insert(id).inserted {
                ids.append(id)
            }
        }
        try load(ids)
    }

    /// Reads, in slices of owners, the members of the to-many at `slot` of every batch row of `entity` (through a
    /// read transaction: one statement per slice instead of one per owner).
    ///
    /// - Throws: the store's read errors.
    func prefetchToMany(entity: EntityDescription, slot: Int, relationship: RelationshipDescription,
                        storage: StoreSchema.PropertyStorage) throws {
        guard let snapshot, let destination = relationship.destinationEntity,
              prefetched.insert([entity.entityNumber, slot]).inserted else { return }
        let owners = batch.filter { $0.entity === entity && toMany[$0.objectID]?[relationship.name] == nil }.map(\.objectID)
        var members: [Int64: [ManagedObjectID]] = [:]
        var start = 0
        while start < owners.count {
            let slice = owners[start..<min(start + 500, owners.count)]
            start += slice.count
            guard let sql = membersSQL(relationship: relationship, storage: storage, ownerCount: slice.count) else { return }
            try snapshot.stepRows(of: SortKeyQuery(sql: sql, arguments: slice.map(\.primaryKey.storeValue)), cancellation: nil) { row in
                let id = ManagedObjectID(entity: model.entity(number: Int(row.integer(at: 0))) ?? destination,
                                         primaryKey: row.integer(at: 1), store: store.identity)
                members[row.integer(at: 2), default: []].append(id)
            }
        }
        var seen = Set<ManagedObjectID>()
        try load(members.values.joined().filter { objects[$0] == nil && !missing.contains($0) && seen.insert($0).inserted })
        for owner in owners {
            toMany[owner, default: [:]][relationship.name] = (members[owner.primaryKey] ?? []).compactMap { objects[$0] }
        }
    }

    /// The members of a to-many for several owners: entity number, key and owner's key, in each owner's order
    /// (as ``StoreSchema/relatedIDsSQL(relationship:storage:)`` gives them for one). Names come from the schema.
    private func membersSQL(relationship: RelationshipDescription, storage: StoreSchema.PropertyStorage,
                            ownerCount: Int) -> String? {
        guard let destination = relationship.destinationEntity else { return nil }
        let numbers = destination.entityNumbersIncludingSubentities
        let filter = model.schema.mapping(for: destination).sharesTable
            ? " AND d.Z_ENT IN (\(numbers.map(String.init).joined(separator: ",")))" : ""
        let owners = Array(repeating: "?", count: ownerCount).joined(separator: ", ")
        switch storage {
        case .toManyByForeignKey(let table, let column, let orderColumn):
            return "SELECT d.Z_ENT, d.Z_PK, d.\(column) FROM \(table) d WHERE d.\(column) IN (\(owners))\(filter) ORDER BY d.\(column), "
                + (orderColumn.map { "d.\($0), " } ?? "") + "d.Z_PK"
        case .toManyByJoinTable(let join):
            return "SELECT d.Z_ENT, d.Z_PK, j.\(join.sourceColumn) FROM \(join.name) j JOIN \(destination.tableName) d ON d.Z_PK = j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) IN (\(owners))\(filter) ORDER BY j.\(join.sourceColumn), "
                + (join.orderColumn.map { "j.\($0), " } ?? "") + "d.Z_PK"
        default:
            return nil
        }
    }

    /// The object `row` shows, kept so relationships reaching it find the same one.
    func object(for row: RowValues, entity: EntityDescription) -> StoredRowObject {
        let object = StoredRowObject(row: row, entity: entity, related: self)
        objects[object.objectID] = object
        return object
    }

    /// The stored row of `id`, or nil when it is gone.
    ///
    /// - Throws: the store's read errors.
    func object(_ id: ManagedObjectID) throws -> StoredRowObject? {
        if let known = objects[id] { return known }
        if missing.contains(id) { return nil }
        try load([id])
        return objects[id]
    }

    /// The objects a to-many relationship of `owner` holds, read in one batch of rows.
    ///
    /// - Throws: the store's read errors.
    func objects(of owner: ManagedObjectID, relationship: RelationshipDescription,
                 storage: StoreSchema.PropertyStorage) throws -> [StoredRowObject] {
        if let known = toMany[owner]?[relationship.name] { return known }
        let ids = try relatedIDs(of: owner, relationship: relationship, storage: storage)
        try load(ids.filter { objects[$0] == nil && !missing.contains($0) })
        let result = ids.compactMap { objects[$0] }
        toMany[owner, default: [:]][relationship.name] = result
        return result
    }

    private func load(_ ids: [ManagedObjectID]) throws {
        guard !ids.isEmpty else { return }
        var wanted: [String: [Int64: ManagedObjectID]] = [:]
        for id in ids { wanted[id.entity.tableName, default: [:]][id.primaryKey] = id }
        for row in try rows(for: ids) {
            let key = Int64.fromStoreValue(row[0]) ?? 0
            let number = row.count > 1 ? Int.fromStoreValue(row[1]) : nil
            guard let rowEntity = number.flatMap({ model.entity(number: $0) }),
                  let id = wanted[rowEntity.tableName]?[key] else { continue }
            objects[id] = object(for: row, entity: id.entity)
        }
        for id in ids where objects[id] == nil { missing.insert(id) }
    }

    /// The rows of `ids`, from the store or from the snapshot (per table, in slices of bound keys).
    private func rows(for ids: [ManagedObjectID]) throws -> [RowValues] {
        guard let snapshot else { return try store.rows(for: ids) }
        var keysByTable: [String: [Int64]] = [:]
        for id in ids { keysByTable[id.entity.tableName, default: []].append(id.primaryKey) }
        var rows: [RowValues] = []
        for (tableName, keys) in keysByTable {
            guard let table = model.schema.table(named: tableName) else { continue }
            let columns = table.columns.map(\.name).joined(separator: ", ")
            var start = 0
            while start < keys.count {
                let slice = keys[start..<min(start + 500, keys.count)]
                start += slice.count
                // Names come from the schema; the keys are bound.
                let sql = "SELECT \(columns) FROM \(tableName) WHERE Z_PK IN ("
                    + Array(repeating: "?", count: slice.count).joined(separator: ", ") + ")"
                try snapshot.stepRows(of: SortKeyQuery(sql: sql, arguments: slice.map(\.storeValue)), cancellation: nil) { row in
                    rows.append(RowValues(values: (0..<table.columns.count).map { row.value(at: Int32($0)) }))
                }
            }
        }
        return rows
    }

    /// The IDs a to-many relationship of `owner` holds, from the store or from the snapshot.
    private func relatedIDs(of owner: ManagedObjectID, relationship: RelationshipDescription,
                            storage: StoreSchema.PropertyStorage) throws -> [ManagedObjectID] {
        guard let snapshot else { return try store.relatedIDs(of: owner, relationship: relationship, storage: storage) }
        guard let destination = relationship.destinationEntity,
              let sql = model.schema.relatedIDsSQL(relationship: relationship, storage: storage) else { return [] }
        var ids: [ManagedObjectID] = []
        try snapshot.stepRows(of: SortKeyQuery(sql: sql, arguments: [owner.primaryKey.storeValue]), cancellation: nil) { row in
            let number = Int(row.integer(at: 0))
            ids.append(ManagedObjectID(entity: model.entity(number: number) ?? destination, primaryKey: row.integer(at: 1),
                                       store: store.identity))
        }
        return ids
    }
}
