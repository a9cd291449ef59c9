import Foundation

/// Where a context's objects for saved rows are made. Every such object — a fault, an object read with its
/// row, one made new or a spare given another row, one made off the queue by an asynchronous fetch — is made
/// and registered here, and every `awakeFromFetch` is called from here.
///
/// - The rule for a registered object is written once: ``enroll(_:contextReference:table:)`` (context
///   reference, registered flag, registry entry), next to the row the maker sets.
/// - Awake hooks run last: a batch is registered and its bookkeeping done (spares freed, no reference ledger
///   open) before its first `awakeFromFetch`, so an override that fetches or fires faults on the same context
///   finds the batch's objects registered and cannot make a second object for one of its rows.
/// - The fast paths that measured a gain live behind this boundary only: references added in bulk for a
///   fetch's objects (``SharedReferences``), spare objects (``SparePool``), a batch written straight into
///   its holder's slots.
struct ObjectMaterializer {
    let context: ManagedObjectContext

    init(_ context: ManagedObjectContext) { self.context = context }

    // MARK: The registered-object rule

    /// Makes `object` (a new instance with a saved ID no registered object has) the context's: its
    /// context reference, its flag and its registry entry (in `table`'s pages when given and its key fits,
    /// else by ID). Its row is the maker's to set; its `awakeFromFetch` runs once its batch is registered.
    @inline(__always)
    private func enroll(_ object: ManagedObject, contextReference: consuming ContextReference, table: Int?) {
        object.contextReference = consume contextReference
        object.flags.insert(.registered)
        enter(object, table: table)
    }

    /// The registry entry of ``enroll(_:contextReference:table:)``.
    @inline(__always)
    private func enter(_ object: ManagedObject, table: Int?) {
        if let table, context.registry.insertSaved(object, key: object.objectID.primaryKey, table: table) { return }
        context.registry[object.objectID] = object
    }

    /// A new registered object for `id`, which no registered object has (the caller knows), with `row` or
    /// as a fault. Its `awakeFromFetch`, when it has a row, is the caller's to run through ``awaken(_:)``.
    @discardableResult
    func register(row: RowValues?, id: ManagedObjectID) -> ManagedObject {
        if context.registry.count >= context.registryTrimThreshold { context.trimRegistry() }
        let object = id.entity.managedObjectClass.init(entity: id.entity, id: id)
        object.row = row
        enroll(object, contextReference: context.reference, table: nil)
        return object
    }

    /// A new registered object for a saved key of `table` (from ``ObjectRegistry/table(rootEntityNumber:storeIndex:)``).
    /// It takes two references to the entity, both handed over: the initializer's argument (which it takes
    /// owned, and lets go) and its ID's.
    @inline(__always)
    private func makeNew(_ objectClass: ManagedObject.Type, key: Int64, storeIndex: UInt32, table: Int,
                         entityArgument: consuming EntityDescription, entityReference: consuming EntityDescription,
                         contextReference: consuming ContextReference) -> ManagedObject {
        let object = objectClass.init(entity: consume entityArgument,
                                      id: ManagedObjectID(entity: consume entityReference, primaryKey: key, storeIndex: storeIndex))
        enroll(object, contextReference: consume contextReference, table: table)
        return object
    }

    /// Gives a spare (of the same class, entity, store and context) the saved key `key`, registered as
    /// ``makeNew(_:entity:key:storeIndex:table:entityReference:contextReference:)`` would make it new: only
    /// the key and the flags change, so nothing is retained or released.
    @inline(__always)
    private func reuse(_ spare: ManagedObject, key: Int64, table: Int) {
        assert(!spare.objectID.isTemporaryID, "a spare object with a temporary ID")
        spare.objectID.primaryKey = key
        spare.flags = [.registered]
        enter(spare, table: table)
    }

    /// Gives a registered fault its row (read now); its `awakeFromFetch` is the caller's to run through
    /// ``awaken(_:)`` once every fault read with it has its row.
    @inline(__always)
    func fill(_ fault: ManagedObject, row: RowValues) {
        fault.row = row
        fault.faultBatch = nil
    }

    /// Runs `awakeFromFetch` on objects that were just given their rows, once their batch is registered.
    func awaken(_ objects: some Sequence<ManagedObject>) {
        for object in objects { object.awakeFromFetch() }
    }

    /// Runs `awakeFromFetch` on the objects in `slots[0..<count]`, but those at the ascending `missing`
    /// positions (faults whose rows were gone).
    /// `slots` are a batched result's own memory (see ``BatchedObjects``), valid while the result is.
    private static func awaken(_ slots: UnsafeMutablePointer<ManagedObject?>, count: Int, skipping missing: [Int]) {
        var next = 0
        for position in 0..<count {
            if next < missing.count && missing[next] == position {
                next += 1
                continue
            }
            slots[position].unsafelyUnwrapped.awakeFromFetch()
        }
    }

    // MARK: Batches by ID

    /// Reads a batch of objects by ID (one `Z_PK IN (…)` query), registering them; in the IDs' order.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``; ``StoreError`` when the rows cannot be read.
    func loadBatch(_ ids: [ManagedObjectID]) throws -> [ManagedObject] {
        if let rows = try freshRows(for: ids) {
            var objects: [ManagedObject] = []
            objects.reserveCapacity(ids.count)
            let missing = registerFresh(ids, rows: rows) { _, object in objects.append(object) }
            Self.awaken(objects, skipping: missing)
            return objects
        }
        let objects = try ids.map { try context.object(with: $0) }
        try fillFaults(among: objects)
        return objects
    }

    /// ``loadBatch(_:)`` written straight into `slots[0..<ids.count]` (memory the caller owns, outside any
    /// access scope: awake hooks may read the holder). `slotsHoldNothing`: every slot is nil, so each is
    /// initialized without releasing what it held.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``; ``StoreError`` when the rows cannot be read.
    func loadBatch(_ ids: [ManagedObjectID], into slots: UnsafeMutablePointer<ManagedObject?>,
                   slotsHoldNothing: Bool) throws {
        if let rows = try freshRows(for: ids) {
            let missing = registerFresh(ids, rows: rows) { position, object in
                if slotsHoldNothing { (slots + position).initialize(to: consume object) } else { slots[position] = consume object }
            }
            Self.awaken(slots, count: ids.count, skipping: missing)
            return
        }
        let objects = try ids.map { try context.object(with: $0) }
        try fillFaults(among: objects)
        for (position, object) in objects.enumerated() { slots[position] = object }
    }

    /// The rows of a batch none of whose IDs is registered (the common case) in a root context; nil for the
    /// general path.
    private func freshRows(for ids: [ManagedObjectID]) throws -> [RowValues]? {
        guard context.parent == nil, let coordinator = context.persistentStoreCoordinator,
              ids.allSatisfy({ context.registry[$0] == nil }) else { return nil }
        return try coordinator.rows(for: ids)
    }

    /// Registers an object for each of `ids` with its row among `rows` (a fault when it has none), handing
    /// each to `body` with its position, in order. Returns the positions without a row, ascending.
    private func registerFresh(_ ids: [ManagedObjectID], rows: [RowValues],
                               into body: (Int, consuming ManagedObject) -> Void) -> [Int] {
        // SQLite returns `Z_PK IN (…)` rows in key order, which is the IDs' order for results sorted
        // by key: match them walking both. IDs out of that order (a random batch) are found by binary
        // search among the key-ordered rows; a key index is built only if the rows are not in order.
        var missing: [Int] = []
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
            if found == nil { missing.append(position) }
            body(position, register(row: found.map { rows[$0] }, id: ids[position]))
        }
        return missing
    }

    private static func awaken(_ objects: [ManagedObject], skipping missing: [Int]) {
        var next = 0
        for position in objects.indices {
            if next < missing.count && missing[next] == position {
                next += 1
                continue
            }
            objects[position].awakeFromFetch()
        }
    }

    /// Reads the rows of the faults among `objects` with one query (through the parent for a child context).
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``; ``StoreError`` when the rows cannot be read;
    ///   ``ObjectGraphError/objectNotFound(_:)`` from a child context whose parent lacks one of the objects.
    func fillFaults(among objects: [ManagedObject]) throws {
        let faults = objects.filter { $0.isFault }
        guard !faults.isEmpty else { return }
        if let parent = context.parent {
            // Read the batch into the root context with one query, then fill the faults from there.
            let ids = faults.map(\.objectID).filter { !$0.isTemporaryID }
            try parent.performAndWait { _ = try parent.materializer.loadBatch(ids) }
            for fault in faults { try context.fulfillFault(fault) }
            return
        }
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let rows = try coordinator.rows(for: faults.map(\.objectID))
        var byKey: [Int64: RowValues] = [:]
        for row in rows { byKey[row.primaryKey] = row }
        var filled: [ManagedObject] = []
        filled.reserveCapacity(faults.count)
        for fault in faults {
            if let row = byKey[fault.objectID.primaryKey] {
                fill(fault, row: row)
                filled.append(fault)
            }
        }
        awaken(filled)
    }

    // MARK: Fresh batches by key

    /// A batch of a batched result whose entity is alone in its table, by primary key: when none of them is
    /// registered yet (the usual case), reads their rows and registers objects as the rows arrive (no list of
    /// IDs or rows in between), spares first, writing each into `slots` at its position in `keys` (memory the
    /// caller owns, outside any access scope: awake hooks may read the holder). `slotsHoldNothing`: every slot
    /// is nil, so each is initialized without releasing what it held. `slotsAreOnlyHere`: no awake hook can
    /// reach the slots (memory of this read's own), so none can let go of the object it runs on and the hooks
    /// are called without retaining it. Returns false, having done nothing, when
    /// the batch needs the general path (``loadBatch(_:into:slotsHoldNothing:)``).
    ///
    /// `beforeMaking` runs once, after the rows are read and before the first object is made: a holder
    /// letting go of older objects does it there (``letGo(of:keepingSpares:)``), so that just when the new
    /// objects are made they are spares, each given another row or freed right before the next object is
    /// allocated (see ``SparePool``; before the read, SQLite's own allocations would take the memory first).
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``; ``StoreError`` when the rows cannot be read (the
    ///   objects made before are registered and awoken).
    func loadFreshBatch(entity: EntityDescription, storeIndex: UInt32, keys: ArraySlice<Int64>,
                        into slots: UnsafeMutablePointer<ManagedObject?>, slotsHoldNothing: Bool,
                        slotsAreOnlyHere: Bool = false, beforeMaking: () -> Void = {}) throws -> Bool {
        let context = self.context
        guard context.parent == nil, storeIndex != 0, let coordinator = context.persistentStoreCoordinator,
              !context.registry.containsAny(entity: entity, storeIndex: storeIndex, keys: keys) else { return false }
        let store = try coordinator.primaryBackend()
        guard store.identity.index == storeIndex else { return false }
        // As `register(row:id:)` does per object: trim before the batch would take the registry past the threshold.
        if context.registry.count + keys.count > context.registryTrimThreshold { context.trimRegistry() }
        // SQLite returns `Z_PK IN (…)` rows in key order: walk the keys in that order alongside them. Keys
        // of a result sorted by key are in order already; others are sorted here (a batch is small).
        let base = keys.startIndex
        let byKey: [Int]? = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
            ? nil : keys.indices.sorted { keys[$0] < keys[$1] }.map { $0 - base }
        func position(_ rank: Int) -> Int { byKey?[rank] ?? rank }
        let objectClass = entity.managedObjectClass
        let table = context.registry.table(rootEntityNumber: entity.rootEntityNumber, storeIndex: storeIndex)
        // Each object made new takes two references to the entity (its initializer's argument and its ID's)
        // and one to the context: they are added for the whole batch at once (one atomic increment each, not
        // one or two an object), each new object takes its own, and those no object took (spares reused,
        // context references a freed spare handed over, keys a failed read never reached) are given back at
        // the end. Kept as constants and counted from the pool's counts: a counter or `SharedReferences`
        // captured by `make`, which the row closure calls, is checked for exclusive access on every use.
        let contextReference = context.reference
        // Unsafe: the references added are all taken, or given back by `giveBackReferences`, before this
        // returns, and `entity` and the context are held by the caller throughout (`fetch-batched-first-100`,
        // `load-batch-by-id`).
        let entityReferences = Unmanaged.passUnretained(entity)
        let contextReferences = Unmanaged.passUnretained(contextReference)
        entityReferences.retain(count: 2 * keys.count)
        contextReferences.retain(count: keys.count)
        let reusedBefore = context.spares.reusedCount, handedOverBefore = context.spares.handedOverCount
        /// Gives back the references not taken once `made` objects are made (spares given a row among them).
        func giveBackReferences(made: Int) {
            let madeNew = made - (context.spares.reusedCount &- reusedBefore)
            entityReferences.release(count: 2 * (keys.count - madeNew))
            contextReferences.release(count: keys.count - madeNew + (context.spares.handedOverCount &- handedOverBefore))
        }
        func make(_ key: Int64, at position: Int, row: consuming RowValues?) {
            let object: ManagedObject
            var handedOver: ContextReference?
            if let spare = context.spares.take(objectClass, entity: entity, storeIndex: storeIndex,
                                               handingOver: &handedOver, to: contextReference) {
                reuse(spare, key: key, table: table)
                object = spare
            } else {
                object = makeNew(objectClass, key: key, storeIndex: storeIndex, table: table,
                                 entityArgument: entityReferences.takeRetainedValue(),
                                 entityReference: entityReferences.takeRetainedValue(),
                                 contextReference: handedOver.take() ?? contextReferences.takeRetainedValue())
            }
            object.row = consume row
            // Handed over, not shared: the slot keeps this reference (no retain and release).
            if slotsHoldNothing { (slots + position).initialize(to: consume object) } else { slots[position] = consume object }
        }
        var rank = 0
        var missing: [Int] = []
        var madeAny = false
        /// Awakes the objects made for the first `ranks` keys, once the batch's bookkeeping is done.
        func awakenMade(ranks: Int) {
            let skipped = missing.isEmpty ? nil : Set(missing)
            for rank in 0..<ranks {
                let at = position(rank)
                if let skipped, skipped.contains(at) { continue }
                if slotsAreOnlyHere {
                    // Nothing but this read reaches the slots while the hooks run, so each object stays held by its
                    // slot throughout its hook: it is called without a retain and a release around it. Every
                    // slot before `ranks` but the missing ones holds an object, so the word is never null
                    // (`frc-batch-on-access`: −1.6 M instructions; performance-log, "plain objects made cheaper").
                    let bits = UnsafeRawPointer(slots + at).load(as: UnsafeRawPointer.self)
                    Unmanaged<ManagedObject>.fromOpaque(bits)._withUnsafeGuaranteedRef { $0.awakeFromFetch() }
                } else {
                    slots[at].unsafelyUnwrapped.awakeFromFetch()
                }
            }
        }
        do {
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
        } catch {
            // Every key before `rank` has its object but those missing, made only after the read.
            giveBackReferences(made: rank - missing.count)
            // Spares the holder let go of in `beforeMaking` that nothing reused are freed.
            context.spares.drain()
            awakenMade(ranks: rank)
            throw error
        }
        while rank < keys.count {
            missing.append(position(rank))
            rank += 1
        }
        if !madeAny { beforeMaking() }
        // Keys whose rows are gone (deleted in the store) become faults, as in the general path.
        for position in missing { make(keys[base + position], at: position, row: nil) }
        giveBackReferences(made: keys.count)
        context.spares.drain()
        awakenMade(ranks: keys.count)
        return true
    }

    /// ``loadFreshBatch(entity:storeIndex:keys:into:slotsHoldNothing:beforeMaking:)`` into `loaded`, in the
    /// keys' order: an array of the caller's alone (a local, which awake hooks cannot reach), all nil, used as
    /// it is when it has one slot per key and made anew otherwise. Returns false, `loaded` all nil, when the
    /// batch needs the general path.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``; ``StoreError`` when the rows cannot be read.
    func loadFreshBatch(entity: EntityDescription, storeIndex: UInt32, keys: ArraySlice<Int64>,
                        into loaded: inout [ManagedObject?], beforeMaking: () -> Void) throws -> Bool {
        guard !keys.isEmpty else { return false }
        if loaded.count != keys.count { loaded = [ManagedObject?](repeating: nil, count: keys.count) }
        // The array is the caller's local, which nothing else reaches while the batch is read: its buffer
        // is written in place as a result's slots are (`frc-batch-on-access`).
        return try loaded.withUnsafeMutableBufferPointer { slots in
            try loadFreshBatch(entity: entity, storeIndex: storeIndex, keys: keys, into: slots.baseAddress.unsafelyUnwrapped,
                               slotsHoldNothing: true, slotsAreOnlyHere: true, beforeMaking: beforeMaking)
        }
    }

    // MARK: Letting go

    /// Lets go of objects a holder no longer needs, forgetting at once those nobody else holds and that have
    /// nothing unsaved: what a trim would do to them, done while they are still in cache (see
    /// ``ObjectRegistry/letGo(of:where:forget:spares:isSpare:)``). Leaves `objects` all nil.
    ///
    /// With `keepingSpares`, they go to the ``SparePool`` for the next fresh batch read (call it from that
    /// read's `beforeMaking`): those the pool accepts for reuse as they are, the others forgotten now and
    /// freed one at a time as that read allocates (spares left when it ends are freed).
    func letGo(of objects: inout [ManagedObject?], keepingSpares: Bool = false) {
        if keepingSpares {
            let start = context.spares.objects.count
            context.registry.letGo(of: &objects, where: ManagedObjectContext.isForgettable,
                                   forget: ManagedObjectContext.markForgotten,
                                   spares: &context.spares.objects, isSpare: { _ in true })
            context.spares.admit(from: start)
        } else {
            var none: [ManagedObject] = []
            context.registry.letGo(of: &objects, where: ManagedObjectContext.isForgettable,
                                   forget: ManagedObjectContext.markForgotten, spares: &none, isSpare: { _ in false })
        }
    }

    // MARK: A query's rows

    /// Registers rows read from the store as objects of the context (on its queue), reusing objects it
    /// already holds, and awakes those given their rows. `range` picks a slice of `rows` (and of `prepared`,
    /// objects made off the queue for those rows by ``makeUnregistered(for:query:cancellation:)``) without
    /// copying either array.
    func register(_ rows: [RowValues], range: Range<Int>, prepared: [ManagedObject]?, entity: EntityDescription,
                  store: any StoreBackend, model: ManagedObjectModel) -> [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(range.count)
        context.prepareRegistry(forAdding: range.count)
        // One query's rows have distinct keys: into an empty registry they go without looking up first.
        let registryWasEmpty = context.registry.isEmpty
        if registryWasEmpty && prepared == nil {
            registerIntoEmptyRegistry(rows, range: range, entity: entity, store: store, model: model, into: &objects)
            awaken(objects)
            return objects
        }
        let identity = store.identity
        // Objects already registered with their rows are not awoken again.
        var notAwoken: [Int] = []
        // Objects made off the queue get the context's reference here, added for all of them at once.
        var contextReferences = SharedReferences(to: context.reference)
        defer { contextReferences.finish() }
        for index in range {
            let row = rows[index]
            let id = prepared?[index].objectID ?? ManagedObjectID(entity: model.entity(number: row.entityNumber) ?? entity,
                                                                  primaryKey: row.primaryKey, store: identity)
            if !registryWasEmpty, let existing = context.registry[id] {
                if existing.row == nil && !existing.isInserted {
                    fill(existing, row: row)
                } else {
                    notAwoken.append(objects.count)
                }
                objects.append(existing)
            } else if let object = prepared?[index] {
                enroll(object, contextReference: contextReferences.take(expecting: range.upperBound - index), table: nil)
                objects.append(object)
            } else {
                objects.append(register(row: row, id: id))
            }
        }
        Self.awaken(objects, skipping: notAwoken)
        return objects
    }

    /// Makes and registers an object for each row, into a registry that held nothing before this query
    /// (so no row's object can be there yet). Per object this is what `register(row:id:)` does, without
    /// the per-object trim check (`prepareRegistry` made room for all of them), the entity's class and
    /// registry table looked up per row, or the context's reference found through the context: about a
    /// dozen retains and releases fewer an object.
    private func registerIntoEmptyRegistry(_ rows: [RowValues], range: Range<Int>, entity: EntityDescription,
                                           store: any StoreBackend, model: ManagedObjectModel,
                                           into objects: inout [ManagedObject]) {
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
            let object = makeNew(objectClass, key: row.primaryKey, storeIndex: storeIndex, table: table,
                                 entityArgument: entityReferences.take(expecting: 2 * (range.upperBound - index)),
                                 entityReference: entityReferences.take(expecting: 2 * (range.upperBound - index)),
                                 contextReference: contextReferences.take(expecting: range.upperBound - index))
            object.row = consume row
            objects.append(object)
        }
    }

    // MARK: Off the queue

    /// Objects for an asynchronous fetch's rows, made on the background reader (no context touched): each
    /// with its ID and row, not registered. ``register(_:range:prepared:entity:store:model:)`` registers and
    /// awakes them on the context's queue.
    ///
    /// - Throws: ``ObjectGraphError/cancelled`` when `cancellation` is set meanwhile.
    static func makeUnregistered(for rows: [RowValues], query: StoreQuery,
                                 cancellation: CancellationFlag) throws -> [ManagedObject] {
        var prepared: [ManagedObject] = []
        prepared.reserveCapacity(rows.count)
        // Each object's ID holds its entity: the references are added in bulk (`SharedReferences`), anew
        // whenever the rows' entity changes.
        let storeIndex = query.store.identity.index
        var entity = query.entity
        var entityReferences = SharedReferences(to: entity)
        defer { entityReferences.finish() }
        for (index, row) in rows.enumerated() {
            if cancellation.isCancelled { throw ObjectGraphError.cancelled }
            let rowEntity = query.model.entity(number: row.entityNumber) ?? query.entity
            if rowEntity !== entity {
                entity = rowEntity
                entityReferences.finish()
                entityReferences = SharedReferences(to: entity)
            }
            // Two references each: the initializer's argument (taken owned) and the ID's.
            let object = entity.managedObjectClass.init(
                entity: entityReferences.take(expecting: 2 * (rows.count - index)),
                id: ManagedObjectID(entity: entityReferences.take(expecting: 2 * (rows.count - index)),
                                    primaryKey: row.primaryKey, storeIndex: storeIndex))
            object.row = row
            prepared.append(object)
        }
        return prepared
    }
}

extension ManagedObjectContext {
    /// The maker of this context's objects (see ``ObjectMaterializer``).
    var materializer: ObjectMaterializer { ObjectMaterializer(self) }
}
