import Foundation
import GRDB
import GRDBSQLite

extension ManagedObjectContext {
    /// Core Data's spelling where the fetch is assigned to an array (`let items: [Item] = try
    /// context.fetch(request)`, or returned as one). Chosen only where an array is asked for; elsewhere
    /// the other `fetch(_:)` returns a ``FetchResults``.
    ///
    /// Every object is made at once: a `fetchBatchSize` saves no memory here. Keep the ``FetchResults``
    /// (drop the `[Item]` annotation) for a batched fetch.
    ///
    /// - Throws: what the ``FetchResults`` form throws.
    @_disfavoredOverload
    public func fetch<T>(_ request: FetchRequest<T>) throws -> [T] {
        let results: FetchResults<T> = try fetch(request)
        return Array(results)
    }

    /// Runs a fetch request and returns its results (objects, IDs, dictionaries or a count as one
    /// `NSNumber`-like `Int`), registering fetched objects in this context.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore`` when the context has no coordinator or store;
    ///   ``ObjectGraphError/unknownEntity(_:)`` when the model has no entity ``FetchRequest/entityName``;
    ///   ``ObjectGraphError/invalidRequest(_:)`` for a negative limit, offset or batch size, a `T` the result
    ///   type does not give, or unusable `propertiesToFetch`/`propertiesToGroupBy`;
    ///   ``ObjectGraphError/resultTypeMismatch(entity:objectClass:resultType:)`` when the entity's objects are
    ///   not `T`; ``ObjectGraphError/unknownKey(entity:key:)`` for a `relationshipKeyPathsForPrefetching` or
    ///   `propertiesToFetch` key the entity lacks; ``QueryLanguageError`` when the predicate or a sort key does
    ///   not compile to SQL (a key the entity lacks, among others) or fails while evaluated against unsaved
    ///   objects; ``StoreError`` when the store cannot be read.
    public func fetch<T>(_ request: FetchRequest<T>) throws -> FetchResults<T> {
        let plan = try FetchPlan(request: request, context: self)
        switch request.resultType {
        case .managedObject:
            try Self.checkObjectClass(of: plan.entity, includesSubentities: request.includesSubentities, as: T.self)
            if request.fetchBatchSize > 0 && !plan.hasPendingChanges && parent == nil
                && !coordinatorSchema(plan).sharesTable
                && (T.self == ManagedObject.self || plan.entity.managedObjectClass is T.Type) {
                // One entity in its table: only the keys are read and kept.
                let keys = try plan.storeQuery.readPrimaryKeys()
                let batched = BatchedObjects(primaryKeys: keys, entity: plan.entity, store: plan.store.identity,
                                             batchSize: request.fetchBatchSize, context: self)
                batched.prefetchKeyPaths = request.relationshipKeyPathsForPrefetching
                return FetchResults(batched: batched)
            }
            if request.fetchBatchSize > 0 && !plan.hasPendingChanges {
                let ids = try plan.fetchIDs()
                guard T.self == ManagedObject.self || ids.isEmpty || ids[0].entity.managedObjectClass is T.Type else {
                    throw ObjectGraphError.invalidRequest("objects of \(request.entityName) are not \(T.self)")
                }
                let batched = BatchedObjects(ids: ids, batchSize: request.fetchBatchSize, context: self)
                batched.prefetchKeyPaths = request.relationshipKeyPathsForPrefetching
                return FetchResults(batched: batched)
            }
            let objects = try plan.fetchObjects()
            if !request.relationshipKeyPathsForPrefetching.isEmpty {
                try prefetch(request.relationshipKeyPathsForPrefetching, for: objects)
            }
            return FetchResults(try Self.typed(objects, as: T.self))
        case .managedObjectID:
            guard T.self == ManagedObjectID.self else {
                throw ObjectGraphError.invalidRequest("an object-ID fetch returns ManagedObjectID, not \(T.self)")
            }
            return FetchResults(try plan.fetchIDs() as! [T])
        case .dictionary:
            guard T.self == [String: Any].self || T.self == Any.self else {
                throw ObjectGraphError.invalidRequest("a dictionary fetch returns [String: Any], not \(T.self)")
            }
            return FetchResults(try plan.fetchDictionaries().map { $0 as! T })
        case .count:
            let count = try plan.count()
            guard let typed = count as? T ?? (NSNumber(value: count) as Any) as? T else {
                throw ObjectGraphError.invalidRequest("a count fetch returns Int, not \(T.self)")
            }
            return FetchResults([typed])
        }
    }

    /// The number of objects a request would return, without reading them.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``, ``ObjectGraphError/unknownEntity(_:)``,
    ///   ``ObjectGraphError/invalidRequest(_:)`` and ``QueryLanguageError`` as `fetch(_:)` does for the
    ///   request; ``StoreError`` when the store cannot be read.
    public func count<T>(for request: FetchRequest<T>) throws -> Int {
        try FetchPlan(request: request, context: self).count()
    }

    private func coordinatorSchema<T>(_ plan: FetchPlan<T>) -> StoreSchema.EntityMapping {
        plan.coordinator.managedObjectModel.schema.mapping(for: plan.entity)
    }

    /// Reads the objects at relationship key paths of `objects` in bulk: the related faults of each step
    /// are filled with one `Z_PK IN (…)` query per 500, and to-many contents are read per object.
    func prefetch(_ keyPaths: [String], for objects: [ManagedObject]) throws {
        for keyPath in keyPaths {
            var current = objects
            for key in keyPath.split(separator: ".").map(String.init) {
                var related: [ManagedObjectID] = []
                for object in current where !object.isDeleted {
                    guard let slot = object.entity.slotByName[key],
                          object.entity.allProperties[slot] is RelationshipDescription else {
                        throw ObjectGraphError.unknownKey(entity: object.entity.name, key: key)
                    }
                    switch object.entity.storage[slot] {
                    case .toOne:
                        if let id = try object.relatedID(atSlot: slot) { related.append(id) }
                    default:
                        related.append(contentsOf: try object.relatedIDs(atSlot: slot))
                    }
                }
                var seen = Set<ManagedObjectID>()
                let unique = related.filter { seen.insert($0).inserted }
                let faults = unique.filter { registry[$0]?.isFault ?? true }
                for start in stride(from: 0, to: faults.count, by: 500) {
                    _ = try materializeBatch(Array(faults[start..<min(start + 500, faults.count)]))
                }
                current = try unique.map { try object(with: $0) }
            }
        }
    }

    /// The objects as the request's result type. This generic code is not specialized for the caller's
    /// type, so a cast per object costs a metadata lookup and a dynamic cast (a twentieth of fetching a
    /// million objects): for `ManagedObject` the array is reinterpreted as it is; for a class, each object's
    /// class is checked once per change of class and the array reinterpreted; anything else is cast per object.
    /// Refuses, before anything is read, a typed fetch of an entity (or a sub-entity the results can
    /// include) whose objects are not of the result class, so an empty table and a full one answer alike.
    ///
    /// - Throws: ``ObjectGraphError/resultTypeMismatch(entity:objectClass:resultType:)`` naming the entity.
    static func checkObjectClass<T>(of entity: EntityDescription, includesSubentities: Bool, as type: T.Type) throws {
        // Protocol and `Any` results are checked object by object (`typed`): a metatype test cannot say.
        guard T.self != ManagedObject.self, T.self is AnyClass else { return }
        for current in [entity] + (includesSubentities ? entity.allSubentities : [])
        where !(current.managedObjectClass is T.Type) {
            throw ObjectGraphError.resultTypeMismatch(entity: current.name, objectClass: "\(current.managedObjectClass)",
                                                      resultType: "\(T.self)")
        }
    }

    static func typed<T>(_ objects: [ManagedObject], as type: T.Type) throws -> [T] {
        if T.self == ManagedObject.self { return unsafeBitCast(objects, to: [T].self) }
        func notOfType(_ object: ManagedObject) -> ObjectGraphError {
            ObjectGraphError.invalidRequest("\(object.entity.name) objects are not \(T.self)")
        }
        guard T.self is AnyClass else {
            return try objects.map { object in
                guard let typed = object as? T else { throw notOfType(object) }
                return typed
            }
        }
        // A class: its instances are single references, laid out as the array's elements already are.
        var checked: ObjectIdentifier?
        for object in objects {
            let objectClass = ObjectIdentifier(Swift.type(of: object))
            if objectClass == checked { continue }
            guard object is T else { throw notOfType(object) }
            checked = objectClass
        }
        return unsafeBitCast(objects, to: [T].self)
    }

    /// Reads a batch of objects by ID (one `Z_PK IN (…)` query), registering them.
    func materializeBatch(_ ids: [ManagedObjectID]) throws -> [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(ids.count)
        try materializeBatch(ids) { _, object in objects.append(object) }
        return objects
    }

    /// Reads a batch of objects by ID (one `Z_PK IN (…)` query), registering them, and hands each to `body`
    /// with its position in `ids`, in order.
    func materializeBatch(_ ids: [ManagedObjectID], into body: (Int, consuming ManagedObject) -> Void) throws {
        if parent == nil, let coordinator = persistentStoreCoordinator,
           ids.allSatisfy({ registry[$0] == nil }) {
            // The common case (a fresh batch): read the rows, then make the objects with them.
            let rows = try coordinator.rows(for: ids)
            // SQLite returns `Z_PK IN (…)` rows in key order, which is the IDs' order for results sorted
            // by key: match them walking both. IDs out of that order (a random batch) are found by binary
            // search among the key-ordered rows; a key index is built only if the rows are not in order.
            var next = 0
            var rowsAreOrdered: Bool?
            var byKey: [Int64: Int]?
            for position in ids.indices {
                let key = ids[position].primaryKey
                var found: Int?
                if next < rows.count, rows[next].primaryKey == key {
                    found = next
                    next += 1
                } else {
                    if rowsAreOrdered == nil {
                        rowsAreOrdered = zip(rows, rows.dropFirst()).allSatisfy { $0.primaryKey < $1.primaryKey }
                    }
                    if rowsAreOrdered == true {
                        var low = 0, high = rows.count
                        while low < high {
                            let middle = (low + high) / 2
                            if rows[middle].primaryKey < key { low = middle + 1 } else { high = middle }
                        }
                        if low < rows.count, rows[low].primaryKey == key { found = low }
                    } else {
                        if byKey == nil {
                            var index: [Int64: Int] = Dictionary(minimumCapacity: rows.count)
                            for offset in rows.indices { index[rows[offset].primaryKey] = offset }
                            byKey = index
                        }
                        found = byKey?[key]
                    }
                }
                let object = register(row: found.map { rows[$0] }, id: ids[position])
                if found != nil { object.awakeFromFetch() }
                body(position, consume object)
            }
            return
        }
        let objects = try ids.map { try object(with: $0) }
        try fillFaults(among: objects)
        for (position, object) in objects.enumerated() { body(position, object) }
    }

    /// A new object for a saved row's key that no registered object has (the caller knows), registered in
    /// its table's pages (`table` from ``ObjectRegistry/table(rootEntityNumber:storeIndex:)``) or, for a key
    /// too scattered for them, by ID. Its row is the caller's to set.
    ///
    /// `entityReference` and `contextReference` are the references the object keeps to its entity (in its
    /// ID) and to the context: callers making many objects take them from ``SharedReferences``.
    @inline(__always)
    func makeRegisteredObject(_ objectClass: ManagedObject.Type, entity: EntityDescription, key: Int64,
                              storeIndex: UInt32, table: Int, entityReference: consuming EntityDescription,
                              contextReference: consuming ContextReference) -> ManagedObject {
        let object = objectClass.init(entity: entity, id: ManagedObjectID(entity: consume entityReference, primaryKey: key,
                                                                          storeIndex: storeIndex))
        object.contextReference = consume contextReference
        object.flags.insert(.registered)
        if !registry.insertSaved(object, key: key, table: table) { registry[object.objectID] = object }
        return object
    }

    /// A batch of a batched result whose entity is alone in its table, by primary key: when none of them is
    /// registered yet (the usual case), reads their rows and registers new objects as the rows arrive (no
    /// list of IDs or rows in between), handing each object to `body` with its position in `keys` (not
    /// necessarily in order). Returns false, having done nothing, when the batch needs the general path
    /// (``materializeBatch(_:into:)``).
    ///
    /// `beforeMaking` runs once, after the rows are read and before the first object is made: a holder
    /// letting go of older objects does it there, so their memory is free again just when the new objects
    /// are allocated (before the read, SQLite's own allocations would merge it away first).
    func materializeFreshBatch(entity: EntityDescription, storeIndex: UInt32, keys: ArraySlice<Int64>,
                               beforeMaking: () -> Void = {},
                               into body: (Int, consuming ManagedObject) -> Void) throws -> Bool {
        guard parent == nil, storeIndex != 0, let coordinator = persistentStoreCoordinator,
              !registry.containsAny(entity: entity, storeIndex: storeIndex, keys: keys) else { return false }
        let store = try coordinator.primaryStore()
        guard store.identity.index == storeIndex else { return false }
        // As `register(row:id:)` does per object: trim before the batch would take the registry past the threshold.
        if registry.count + keys.count > registryTrimThreshold { trimRegistry() }
        // SQLite returns `Z_PK IN (…)` rows in key order: walk the keys in that order alongside them. Keys
        // of a result sorted by key are in order already; others are sorted here (a batch is small).
        let base = keys.startIndex
        let byKey: [Int]? = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
            ? nil : keys.indices.sorted { keys[$0] < keys[$1] }.map { $0 - base }
        func position(_ rank: Int) -> Int { byKey?[rank] ?? rank }
        let objectClass = entity.managedObjectClass
        let table = registry.table(rootEntityNumber: entity.rootEntityNumber, storeIndex: storeIndex)
        // Each object made new holds the entity (in its ID) and the context: their references are added for
        // the whole batch at once (one atomic increment each, not one an object), each new object takes one,
        // and those left (objects reused) are given back at the end. Kept as constants and counted on the
        // context: a counter or struct captured by the row closure below would be checked for exclusive
        // access on every use, and its reference hand-over would not compile down to nothing.
        let entityReferences = Unmanaged.passUnretained(entity)
        let contextReferences = Unmanaged.passUnretained(reference)
        entityReferences.retain(count: keys.count)
        contextReferences.retain(count: keys.count)
        let madeBefore = freshObjectsMade
        defer {
            let unused = keys.count - (freshObjectsMade &- madeBefore)
            entityReferences.release(count: unused)
            contextReferences.release(count: unused)
        }
        // Spares the holder let go of in `beforeMaking` that nothing reused are freed when the read ends.
        defer { if !spareObjects.isEmpty { spareObjects.removeAll(keepingCapacity: true) } }
        func make(_ key: Int64, at position: Int, row: consuming RowValues?) {
            var reused: ManagedObject?
            // Taken out before it is looked at: bound in place, it would be retained and released.
            if !spareObjects.isEmpty {
                let spare = spareObjects.removeLast()
                if type(of: spare) == objectClass && spare.objectID.entity === entity && spare.objectID.storeIndex == storeIndex {
                    reuseSpare(spare, key: key, table: table)
                    reused = consume spare
                } else {
                    spareObjects.append(consume spare)
                }
            }
            let object: ManagedObject
            if let reused = reused.take() {
                object = reused
            } else {
                freshObjectsMade &+= 1
                object = makeRegisteredObject(objectClass, entity: entity, key: key, storeIndex: storeIndex, table: table,
                                              entityReference: entityReferences.takeRetainedValue(),
                                              contextReference: contextReferences.takeRetainedValue())
            }
            // Tested by pattern and then moved in: binding the row would copy it (a retain of its block).
            let hasRow: Bool
            if case .none = row { hasRow = false } else { hasRow = true }
            object.row = consume row
            if hasRow { object.awakeFromFetch() }
            // Handed over, not shared: the receiver keeps this reference (no retain and release).
            body(position, consume object)
        }
        var rank = 0
        var missing: [Int] = []
        var madeAny = false
        try store.rows(inTable: entity.tableName, keys: keys) { row in
            if !madeAny {
                madeAny = true
                beforeMaking()
            }
            let key = row.primaryKey
            while rank < keys.count, keys[base + position(rank)] < key {
                missing.append(position(rank))
                rank += 1
            }
            // A row out of key order (never seen from SQLite) leaves its object a fault, read when used.
            guard rank < keys.count, keys[base + position(rank)] == key else { return }
            make(key, at: position(rank), row: consume row)
            rank += 1
        }
        while rank < keys.count {
            missing.append(position(rank))
            rank += 1
        }
        if !madeAny { beforeMaking() }
        // Keys whose rows are gone (deleted in the store) become faults, as in the general path.
        for position in missing { make(keys[base + position], at: position, row: nil) }
        return true
    }

    /// Reads the rows of the faults among `objects` with one query (through the parent for a child context).
    private func fillFaults(among objects: [ManagedObject]) throws {
        let faults = objects.filter { $0.isFault }
        guard !faults.isEmpty else { return }
        if let parent {
            // Read the batch into the root context with one query, then fill the faults from there.
            let ids = faults.map(\.objectID).filter { !$0.isTemporaryID }
            try parent.performAndWait { _ = try parent.materializeBatch(ids) }
            for fault in faults { try fulfillFault(fault) }
            return
        }
        guard let coordinator = persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let rows = try coordinator.rows(for: faults.map(\.objectID))
        var byKey: [Int64: RowValues] = [:]
        for row in rows { byKey[row.primaryKey] = row }
        for fault in faults {
            if let row = byKey[fault.objectID.primaryKey] {
                fault.row = row
                fault.faultBatch = nil
                fault.awakeFromFetch()
            }
        }
    }
}

/// A fetch request resolved against the model, compiled to SQL, with the context's pending changes.
struct FetchPlan<T> {
    let request: FetchRequest<T>
    let context: ManagedObjectContext
    let entity: EntityDescription
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore
    let compiled: PredicateSQLCompiler.Compiled
    let whereSQL: String
    /// Unsaved objects of this entity that may change the result.
    let pendingInserted: [ManagedObject]
    let pendingUpdated: [ManagedObject]
    let pendingDeleted: Set<ManagedObjectID>

    var hasPendingChanges: Bool { !pendingInserted.isEmpty || !pendingUpdated.isEmpty || !pendingDeleted.isEmpty }

    init(request: FetchRequest<T>, context: ManagedObjectContext) throws {
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        guard let entity = coordinator.managedObjectModel.entitiesByName[request.entityName] else {
            throw ObjectGraphError.unknownEntity(request.entityName)
        }
        guard request.fetchLimit >= 0, request.fetchOffset >= 0, request.fetchBatchSize >= 0 else {
            throw ObjectGraphError.invalidRequest("fetchLimit, fetchOffset and fetchBatchSize cannot be negative")
        }
        self.request = request
        self.context = context
        self.entity = entity
        self.coordinator = coordinator
        self.store = try coordinator.primaryStore()
        self.compiled = try PredicateSQLCompiler.compile(model: coordinator.managedObjectModel, entity: entity,
                                                         predicate: request.predicate,
                                                         sortDescriptors: request.sortDescriptors)
        var conditions: [String] = []
        let mapping = coordinator.managedObjectModel.schema.mapping(for: entity)
        if mapping.sharesTable {
            let numbers = request.includesSubentities ? entity.entityNumbersIncludingSubentities : [entity.entityNumber]
            conditions.append(numbers.count == 1 ? "t0.Z_ENT = \(numbers[0])"
                              : "t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))")
        }
        if let whereClause = compiled.whereClause { conditions.append("(\(whereClause))") }
        whereSQL = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")

        var inserted: [ManagedObject] = []
        var updated: [ManagedObject] = []
        var deleted: Set<ManagedObjectID> = []
        if request.includesPendingChanges {
            func matchesEntity(_ object: ManagedObject) -> Bool {
                request.includesSubentities ? object.entity.isKind(of: entity) : object.entity === entity
            }
            var ancestor: ManagedObjectContext? = context
            while let current = ancestor {
                let isSelf = current === context
                let pending: (Set<ManagedObject>, Set<ManagedObject>, Set<ManagedObject>) = isSelf
                    ? (current.insertedSet, current.updatedSet, current.deletedSet)
                    : current.performAndWait { (current.insertedSet, current.updatedSet, current.deletedSet) }
                for object in pending.2 where matchesEntity(object) { deleted.insert(object.objectID) }
                for object in pending.0 where matchesEntity(object) {
                    if isSelf { inserted.append(object) }
                    else if let mine = try? context.object(with: object.objectID) { inserted.append(mine) }
                }
                for object in pending.1 where matchesEntity(object) {
                    if isSelf { updated.append(object) }
                    else if let mine = try? context.object(with: object.objectID) { updated.append(mine) }
                }
                ancestor = current.parent
            }
        }
        pendingInserted = inserted.filter { !$0.isDeleted }
        pendingUpdated = updated.filter { !$0.isDeleted && !deleted.contains($0.objectID) }
        pendingDeleted = deleted
    }

    private var limitSQL: String {
        guard !hasPendingChanges else { return "" }
        var sql = ""
        if request.fetchLimit > 0 { sql += " LIMIT \(request.fetchLimit)" }
        if request.fetchOffset > 0 { sql += (request.fetchLimit > 0 ? "" : " LIMIT -1") + " OFFSET \(request.fetchOffset)" }
        return sql
    }

    private var orderSQL: String { compiled.orderByClause.map { " ORDER BY \($0)" } ?? "" }

    /// The store side of this plan: SQL and arguments only, safe to run on any thread.
    var storeQuery: StoreQuery {
        let table = coordinator.managedObjectModel.schema.table(named: entity.tableName)
        let tail = "FROM \(compiled.fromClause)\(whereSQL)\(orderSQL)\(limitSQL)"
        return StoreQuery(store: store, model: coordinator.managedObjectModel, entity: entity,
                          rowsSQL: "SELECT \(table.map { store.selectList(for: $0) } ?? "t0.Z_PK") \(tail)",
                          idsSQL: "SELECT t0.Z_ENT, t0.Z_PK \(tail)",
                          arguments: compiled.arguments, columnCount: table?.columns.count ?? 1)
    }

    /// The matching IDs in order, pending changes applied.
    func fetchIDs() throws -> [ManagedObjectID] {
        let ids = try storeQuery.readIDs()
        return try finishIDs(ids)
    }

    /// Applies pending changes to IDs read from the store (on the context's queue).
    func finishIDs(_ ids: [ManagedObjectID]) throws -> [ManagedObjectID] {
        guard hasPendingChanges else { return ids }
        return try applyPending(to: ids.map { try context.object(with: $0) }).map(\.objectID)
    }

    /// The matching objects in order, registered in the context, pending changes applied.
    func fetchObjects() throws -> [ManagedObject] {
        if context.parent != nil {
            return try applyPendingIfNeeded(storeQuery.readIDs().map { try context.object(with: $0) })
        }
        return try materialize(storeQuery.readRows())
    }

    /// Registers rows read from the store as objects of the context (on its queue), reusing objects it
    /// already holds, then applies pending changes.
    /// `range` picks a slice of `rows` (and of `prepared`, objects made off the queue for those rows)
    /// without copying either array.
    func materialize(_ rows: [RowValues], range: Range<Int>? = nil, prepared: [ManagedObject]? = nil,
                     applyingPending: Bool = true) throws -> [ManagedObject] {
        let range = range ?? rows.indices
        let model = coordinator.managedObjectModel
        let identity = store.identity
        var objects: [ManagedObject] = []
        objects.reserveCapacity(range.count)
        context.prepareRegistry(forAdding: range.count)
        // One query's rows have distinct keys: into an empty registry they go without looking up first.
        let registryWasEmpty = context.registry.isEmpty
        if registryWasEmpty && prepared == nil {
            registerFresh(rows, range: range, into: &objects)
            return try finish(rows, range: range, objects: objects, applyingPending: applyingPending)
        }
        // Objects made off the queue get the context's reference here, added for all of them at once.
        var contextReferences = SharedReferences(to: context.reference)
        defer { contextReferences.finish() }
        for index in range {
            let row = rows[index]
            let id = prepared?[index].objectID ?? ManagedObjectID(entity: model.entity(number: row.entityNumber) ?? entity,
                                                                  primaryKey: row.primaryKey, store: identity)
            if !registryWasEmpty, let existing = context.registry[id] {
                if existing.row == nil && !existing.isInserted {
                    existing.row = row
                    existing.faultBatch = nil
                    existing.awakeFromFetch()
                }
                objects.append(existing)
            } else if let object = prepared?[index] {
                object.contextReference = contextReferences.take(expecting: range.upperBound - index)
                object.flags.insert(.registered)
                context.registry[id] = object
                object.awakeFromFetch()
                objects.append(object)
            } else {
                let object = context.register(row: row, id: id)
                object.awakeFromFetch()
                objects.append(object)
            }
        }
        return try finish(rows, range: range, objects: objects, applyingPending: applyingPending)
    }

    /// Makes and registers an object for each row, into a registry that held nothing before this query
    /// (so no row's object can be there yet). Per object this is what `register(row:id:)` does, without
    /// the per-object trim check (`prepareRegistry` made room for all of them), the entity's class and
    /// registry table looked up per row, or the context's reference found through the context: about a
    /// dozen retains and releases fewer an object.
    private func registerFresh(_ rows: [RowValues], range: Range<Int>, into objects: inout [ManagedObject]) {
        let model = coordinator.managedObjectModel
        let storeIndex = store.identity.index
        var entityNumber = -1
        var rowEntity = entity
        var objectClass = entity.managedObjectClass
        var table = 0
        // Each object holds its entity and the context: their references are added in bulk (see
        // `SharedReferences`), the entity's anew whenever the rows' entity changes.
        var entityReferences = SharedReferences(to: entity)
        var contextReferences = SharedReferences(to: context.reference)
        defer {
            entityReferences.finish()
            contextReferences.finish()
        }
        for index in range {
            let row = rows[index]
            if row.entityNumber != entityNumber {
                entityNumber = row.entityNumber
                rowEntity = model.entity(number: entityNumber) ?? entity
                objectClass = rowEntity.managedObjectClass
                table = context.registry.table(rootEntityNumber: rowEntity.rootEntityNumber, storeIndex: storeIndex)
                entityReferences.finish()
                entityReferences = SharedReferences(to: rowEntity)
            }
            let object = context.makeRegisteredObject(objectClass, entity: rowEntity, key: row.primaryKey,
                                                      storeIndex: storeIndex, table: table,
                                                      entityReference: entityReferences.take(expecting: range.upperBound - index),
                                                      contextReference: contextReferences.take(expecting: range.upperBound - index))
            object.row = consume row
            object.awakeFromFetch()
            objects.append(object)
        }
    }

    /// After registering: rows read on a private queue are kept for other contexts (seed 002: IDs handed to
    /// the main context; the array is shared, not copied), then pending changes are applied.
    private func finish(_ rows: [RowValues], range: Range<Int>, objects: [ManagedObject],
                        applyingPending: Bool) throws -> [ManagedObject] {
        if context.concurrencyType == .privateQueue {
            coordinator.rowCache.store(rows: range == rows.indices ? rows : Array(rows[range]), table: entity.tableName,
                                       token: store.externalChangeToken())
        }
        return applyingPending ? try applyPendingIfNeeded(objects) : objects
    }

    func applyPendingIfNeeded(_ objects: [ManagedObject]) throws -> [ManagedObject] {
        hasPendingChanges ? try applyPending(to: objects) : objects
    }

    /// Store results corrected for unsaved changes: deleted objects leave, changed objects are matched
    /// again in memory, new objects join; then order, offset and limit are applied in memory.
    func applyPending(to storeObjects: [ManagedObject]) throws -> [ManagedObject] {
        var result: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        let updated = Set(pendingUpdated.map(ObjectIdentifier.init))
        for object in storeObjects where !pendingDeleted.contains(object.objectID) && !object.isDeleted {
            if updated.contains(ObjectIdentifier(object)) { continue }
            if seen.insert(ObjectIdentifier(object)).inserted { result.append(object) }
        }
        for object in pendingUpdated + pendingInserted where !seen.contains(ObjectIdentifier(object)) {
            if try matches(object) {
                seen.insert(ObjectIdentifier(object))
                result.append(object)
            }
        }
        if !request.sortDescriptors.isEmpty {
            var failure: Error?
            let keys = request.sortDescriptors
            result.sort { lhs, rhs in
                guard failure == nil else { return false }
                do {
                    for descriptor in keys {
                        let order = try descriptor.compare(lhs, rhs)
                        if order != .orderedSame { return order == .orderedAscending }
                    }
                } catch { failure = error }
                return false
            }
            if let failure { throw failure }
        }
        if request.fetchOffset > 0 { result = Array(result.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { result = Array(result.prefix(request.fetchLimit)) }
        return result
    }

    private func matches(_ object: ManagedObject) throws -> Bool {
        guard let predicate = request.predicate else { return true }
        return try predicate.evaluate(with: object)
    }

    /// The number of matches, pending changes included.
    func count() throws -> Int {
        if hasPendingChanges || context.parent != nil { return try fetchIDs().count }
        var sql = "SELECT COUNT(*) FROM \(compiled.fromClause)\(whereSQL)"
        if request.fetchLimit > 0 || request.fetchOffset > 0 {
            sql = "SELECT COUNT(*) FROM (SELECT t0.Z_PK FROM \(compiled.fromClause)\(whereSQL)\(limitSQL))"
        }
        let arguments = compiled.arguments
        return try store.read { db in
            try db.fetchInteger(sql: sql, arguments: arguments) ?? 0
        }
    }

    /// Dictionary results: attributes (dotted paths through to-one relationships allowed) and
    /// ``ExpressionDescription``s, grouped, filtered by `havingPredicate`, distinct. Read from the store
    /// (unsaved changes do not enter aggregates, as in Core Data).
    func fetchDictionaries() throws -> [[String: Any]] {
        var names: [String] = []
        var expressions: [QueryExpression] = []
        var types: [AttributeType?] = []
        var transformables = TransformableDictionaryValues(entity: entity, identity: store.identity)
        func attributeType(ofPath path: String) -> AttributeType? {
            var current: EntityDescription? = entity
            let parts = path.split(separator: ".").map(String.init)
            for (index, part) in parts.enumerated() {
                if index == parts.count - 1 { return current?.attributesByName[part]?.attributeType }
                current = current?.relationshipsByName[part]?.destinationEntity
            }
            return nil
        }
        func add(_ item: Any) throws {
            switch item {
            case let key as String:
                guard attributeType(ofPath: key) != nil || entity.relationshipsByName[key] != nil else {
                    throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
                }
                transformables.note(position: names.count, key: key)
                names.append(key)
                expressions.append(.key(key))
                types.append(attributeType(ofPath: key))
            case let property as PropertyDescription:
                try add(property.name)
            case let description as ExpressionDescription:
                names.append(description.name)
                expressions.append(description.expression)
                types.append(description.expressionResultType)
            default:
                throw ObjectGraphError.invalidRequest("propertiesToFetch holds a \(type(of: item)); use key names or ExpressionDescriptions")
            }
        }
        let fetched: [Any] = request.propertiesToFetch
            ?? entity.allProperties.filter { $0 is AttributeDescription && !$0.isTransient }.map(\.name)
        for item in fetched { try add(item) }
        var groups: [QueryExpression] = []
        for item in request.propertiesToGroupBy ?? [] {
            switch item {
            case let key as String: groups.append(.key(key))
            case let property as PropertyDescription: groups.append(.key(property.name))
            case let description as ExpressionDescription: groups.append(description.expression)
            default: throw ObjectGraphError.invalidRequest("propertiesToGroupBy holds a \(type(of: item))")
            }
        }
        let compiler = PredicateSQLCompiler(model: coordinator.managedObjectModel, entity: entity)
        let mapping = coordinator.managedObjectModel.schema.mapping(for: entity)
        var entityFilter: String?
        if mapping.sharesTable {
            let numbers = request.includesSubentities ? entity.entityNumbersIncludingSubentities : [entity.entityNumber]
            entityFilter = "t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
        }
        transformables.addRowKeys(to: &expressions, groupedOrDistinct: !groups.isEmpty || request.returnsDistinctResults)
        let query = try compiler.compileDictionaryQuery(
            columns: expressions, groupBy: groups, predicate: request.predicate, entityFilter: entityFilter,
            sortDescriptors: request.sortDescriptors, distinct: request.returnsDistinctResults,
            limit: request.havingPredicate == nil ? request.fetchLimit : 0,
            offset: request.havingPredicate == nil ? request.fetchOffset : 0)
        let identity = store.identity
        var results: [[String: Any]] = try store.read { db in
            var results: [[String: Any]] = []
            try db.stepRows(sql: query.sql, arguments: query.arguments) { handle in
                var dictionary: [String: Any] = [:]
                for (index, name) in names.enumerated() {
                    let value = DatabaseValue(sqliteStatement: handle, index: Int32(index))
                    if let transformed = try transformables.value(at: index, value, in: handle) {
                        if let transformed { dictionary[name] = transformed }
                    } else if let type = types[index] {
                        if let swift = ValueConversion.swiftValue(value, for: type) { dictionary[name] = swift }
                    } else if case .int64(let key) = value.storage,
                              let destination = entity.relationshipsByName[name]?.destinationEntity {
                        // A to-one relationship's value is the related object's ID.
                        dictionary[name] = ManagedObjectID(entity: destination, primaryKey: key, store: identity)
                    } else {
                        switch value.storage {
                        case .int64(let v): dictionary[name] = v
                        case .double(let v): dictionary[name] = v
                        case .string(let v): dictionary[name] = v
                        case .blob(let v): dictionary[name] = v
                        case .null: break
                        }
                    }
                }
                results.append(dictionary)
            }
            return results
        }
        if let having = request.havingPredicate {
            results = try results.filter { try having.evaluate(with: $0) }
            if request.fetchOffset > 0 { results = Array(results.dropFirst(request.fetchOffset)) }
            if request.fetchLimit > 0 { results = Array(results.prefix(request.fetchLimit)) }
        }
        return results
    }
}

/// A compiled fetch in store terms only (no context, no objects): runs on any thread, for example on a
/// background reader during an asynchronous fetch.
struct StoreQuery: @unchecked Sendable {
    // @unchecked Sendable: every member is immutable; the store and model are Sendable; DatabaseValue
    // arguments are values.
    let store: PersistentStore
    let model: ManagedObjectModel
    let entity: EntityDescription
    let rowsSQL: String
    let idsSQL: String
    let arguments: [DatabaseValue]
    let columnCount: Int

    /// Full rows, in order. `progress` is called with the running row count every `progressInterval` rows.
    func readRows(cancellation: CancellationFlag? = nil, progressInterval: Int = 0,
                  progress: ((Int) -> Void)? = nil) throws -> [RowValues] {
        let start = ContinuousClock.now
        let rows: [RowValues] = try store.read { db in
            var rows: [RowValues] = []
            try db.fetchRowValues(sql: rowsSQL, arguments: arguments, columnCount: columnCount,
                                  cancellation: cancellation) { row in
                rows.append(row)
                if progressInterval > 0, rows.count % progressInterval == 0 { progress?(rows.count) }
            }
            return rows
        }
        progress?(rows.count)
        PersistentStore.logFetch(rows: rows.count, since: start)
        return rows
    }

    /// The IDs query without the entity column.
    private var primaryKeysSQL: String { "SELECT t0.Z_PK" + idsSQL.dropFirst("SELECT t0.Z_ENT, t0.Z_PK".count) }

    /// Whether every row of the entity's table is of the entity (no entity column to read).
    private var isAloneInTable: Bool { !model.schema.mapping(for: entity).sharesTable }

    /// Primary keys only, in order (for an entity alone in its table).
    func readPrimaryKeys() throws -> [Int64] {
        let start = ContinuousClock.now
        let sql = primaryKeysSQL
        let keys: [Int64] = try store.read { db in
            var keys: [Int64] = []
            try db.stepRows(sql: sql, arguments: arguments) { handle in keys.append(sqlite3_column_int64(handle, 0)) }
            return keys
        }
        PersistentStore.logFetch(rows: keys.count, since: start)
        return keys
    }

    /// IDs only, in order.
    func readIDs(cancellation: CancellationFlag? = nil, progressInterval: Int = 0,
                 progress: ((Int) -> Void)? = nil) throws -> [ManagedObjectID] {
        let start = ContinuousClock.now
        let identity = store.identity
        let entity = self.entity
        let aloneInTable = isAloneInTable
        let ids: [ManagedObjectID] = try store.read { db in
            var ids: [ManagedObjectID] = []
            var nextReport = progressInterval > 0 ? progressInterval : Int.max
            if aloneInTable {
                // An entity alone in its table needs no entity column: every row is one of its objects. The
                // keys are collected first (8 bytes each), so the IDs (32 bytes each) are allocated once at
                // their final size instead of being copied at every doubling.
                var keys: [Int64] = []
                try db.stepRows(sql: primaryKeysSQL, arguments: arguments, cancellation: cancellation) { handle in
                    keys.append(sqlite3_column_int64(handle, 0))
                    if keys.count == nextReport {
                        progress?(keys.count)
                        nextReport += progressInterval
                    }
                }
                ids.reserveCapacity(keys.count)
                let storeIndex = identity.index
                // Every ID holds the entity: its references are added at once, and each ID takes one.
                let sharedEntity = Unmanaged.passUnretained(entity)
                sharedEntity.retain(count: keys.count)
                for key in keys {
                    ids.append(ManagedObjectID(entity: sharedEntity.takeRetainedValue(), primaryKey: key, storeIndex: storeIndex))
                }
                return ids
            }
            try db.stepRows(sql: idsSQL, arguments: arguments, cancellation: cancellation) { handle in
                let number = Int(sqlite3_column_int64(handle, 0))
                ids.append(ManagedObjectID(entity: model.entity(number: number) ?? entity,
                                           primaryKey: sqlite3_column_int64(handle, 1), store: identity))
                if ids.count == nextReport {
                    progress?(ids.count)
                    nextReport += progressInterval
                }
            }
            return ids
        }
        progress?(ids.count)
        PersistentStore.logFetch(rows: ids.count, since: start)
        return ids
    }
}
