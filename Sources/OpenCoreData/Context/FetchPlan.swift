import Foundation

/// A fetch request resolved against the model, compiled to SQL, with the context's pending changes.
struct FetchPlan<T> {
    let request: FetchRequest<T>
    let context: ManagedObjectContext
    let entity: EntityDescription
    let coordinator: PersistentStoreCoordinator
    /// The store, reached through the boundary: one dynamic call per fetch or per batch of rows, never per row.
    let store: any StoreBackend
    let compiled: PredicateSQLCompiler.Compiled
    /// What the store's SQL leaves to the app (opaque here: the store query answers through it).
    let residual: ResidualQuery?
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
        for (bound, value) in [("fetchLimit", request.fetchLimit), ("fetchOffset", request.fetchOffset),
                               ("fetchBatchSize", request.fetchBatchSize)] where value < 0 {
            throw ObjectGraphError.negativeFetchBound(entity: entity.name, bound: bound, value: value)
        }
        self.request = request
        self.context = context
        self.entity = entity
        self.coordinator = coordinator
        self.store = try coordinator.primaryBackend()
        let planned = try ResidualQuery.compile(model: coordinator.managedObjectModel, entity: entity,
                                                predicate: request.predicate,
                                                sortDescriptors: request.sortDescriptors, dialect: store.dialect)
        self.compiled = planned.compiled
        self.residual = planned.residual

        var inserted: [ManagedObject] = []
        var updated: [ManagedObject] = []
        var deleted: Set<ManagedObjectID> = []
        func matchesEntity(_ object: ManagedObject) -> Bool {
            request.includesSubentities ? object.entity.isKind(of: entity) : object.entity === entity
        }
        /// This context's copy of an ancestor's object. A parent's unsaved insert has a temporary ID that
        /// `object(with:)` refuses; its fault is filled from the parent chain's current row.
        func mine(_ object: ManagedObject) -> ManagedObject {
            context.registry[object.objectID] ?? context.materializer.register(row: nil, id: object.objectID)
        }
        // A child's parent chain is its store: `includesPendingChanges = false` leaves out only the
        // asking context's own unsaved changes, never its ancestors'.
        var ancestor: ManagedObjectContext? = request.includesPendingChanges ? context : context.parent
        while let current = ancestor {
            let isSelf = current === context
            let pending: (Set<ManagedObject>, Set<ManagedObject>, Set<ManagedObject>) = isSelf
                ? (current.insertedSet, current.updatedSet, current.deletedSet)
                : current.performAndWait { (current.insertedSet, current.updatedSet, current.deletedSet) }
            // A nearer context's state wins: an object an ancestor inserted or changed but a nearer
            // context deleted stays deleted (filtered below).
            for object in pending.2 where matchesEntity(object) { deleted.insert(object.objectID) }
            for object in pending.0 where matchesEntity(object) { inserted.append(isSelf ? object : mine(object)) }
            for object in pending.1 where matchesEntity(object) { updated.append(isSelf ? object : mine(object)) }
            ancestor = current.parent
        }
        pendingInserted = inserted.filter { !$0.isDeleted && !deleted.contains($0.objectID) }
        pendingUpdated = updated.filter { !$0.isDeleted && !deleted.contains($0.objectID) }
        pendingDeleted = deleted
    }

    /// The store side of this plan: SQL and arguments only, safe to run on any thread. With pending
    /// changes, offset and limit are applied in memory after them, so the store reads every match.
    var storeQuery: StoreQuery {
        StoreQuery(store: store, model: coordinator.managedObjectModel, entity: entity, compiled: compiled,
                   residual: residual, includesSubentities: request.includesSubentities,
                   limit: hasPendingChanges ? 0 : request.fetchLimit, offset: hasPendingChanges ? 0 : request.fetchOffset)
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

    /// Registers rows read from the store as objects of the context (on its queue, through its
    /// ``ObjectMaterializer``), then applies pending changes. `range` picks a slice of `rows` (and of
    /// `prepared`, objects made off the queue for those rows) without copying either array.
    func materialize(_ rows: [RowValues], range: Range<Int>? = nil, prepared: [ManagedObject]? = nil,
                     applyingPending: Bool = true) throws -> [ManagedObject] {
        let range = range ?? rows.indices
        let objects = context.materializer.register(rows, range: range, prepared: prepared, entity: entity, store: store,
                                                    model: coordinator.managedObjectModel)
        return try finish(rows, range: range, objects: objects, applyingPending: applyingPending)
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
        return try storeQuery.count()
    }

    /// Dictionary results: attributes (dotted paths through to-one relationships allowed) and
    /// ``ExpressionDescription``s, grouped, filtered by `havingPredicate`, distinct. Read from the store
    /// (unsaved changes do not enter aggregates, as in Core Data). On PostgreSQL, a predicate or sort its SQL
    /// cannot say is answered in the app first (``DictionaryResidual``).
    func fetchDictionaries() throws -> [[String: Any]] {
        var names: [String] = []
        var expressions: [QueryExpression] = []
        var types: [AttributeType?] = []
        var transformables = TransformableDictionaryValues(entity: entity, identity: store.identity,
                                                           external: store.externalStorage)
        var wholeComposites: [CompositeAttributeDescription] = []
        func attributeType(ofPath path: String) -> AttributeType? {
            if let element = entity.attributesByName[path], element.compositeOwner != nil { return element.attributeType }
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
                // A composite is fetched as its elements' columns and folded back into one dictionary below.
                if let composite = entity.attributesByName[key] as? CompositeAttributeDescription {
                    wholeComposites.append(composite)
                    for element in composite.storedElements { try add(element.name) }
                    return
                }
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
                throw ObjectGraphError.unsupportedFetchItem(entity: entity.name, list: "propertiesToFetch", itemType: "\(type(of: item))")
            }
        }
        let fetched: [Any] = request.propertiesToFetch
            ?? entity.allProperties.filter { ($0 as? AttributeDescription)?.compositeOwner == nil && $0 is AttributeDescription && !$0.isTransient }.map(\.name)
        for item in fetched { try add(item) }
        var groups: [QueryExpression] = []
        for item in request.propertiesToGroupBy ?? [] {
            switch item {
            case let key as String: groups.append(.key(key))
            case let property as PropertyDescription: groups.append(.key(property.name))
            case let description as ExpressionDescription: groups.append(description.expression)
            default:
                throw ObjectGraphError.unsupportedFetchItem(entity: entity.name, list: "propertiesToGroupBy", itemType: "\(type(of: item))")
            }
        }
        let compiler = PredicateSQLCompiler(model: coordinator.managedObjectModel, entity: entity, dialect: store.dialect)
        let entityNumbers = request.includesSubentities ? entity.entityNumbersIncludingSubentities : [entity.entityNumber]
        let groupedOrDistinct = !groups.isEmpty || request.returnsDistinctResults
        transformables.addRowKeys(to: &expressions, groupedOrDistinct: groupedOrDistinct)
        // What PostgreSQL's SQL cannot say (a residual predicate, a localized sort) is answered in the app.
        let residual = try DictionaryResidual(request: request, entity: entity, model: coordinator.managedObjectModel, store: store)
        let sortColumns = try residual.sortColumns(of: entity, adding: &expressions, fetchedCount: names.count,
                                                   groupedOrDistinct: groupedOrDistinct)
        let sortTypes = (residual.memorySort ?? []).map { attributeType(ofPath: $0.key) }
        // Offset and limit apply after what is done in memory.
        let pagesInMemory = request.havingPredicate != nil || residual.memorySort != nil
        let identity = store.identity
        var results: [[String: Any]] = []
        var sortValues: [[Any?]] = []
        // The keys a residual predicate keeps, then the dictionary query on them.
        func read() throws {
            results = []
            sortValues = []
            let keys = try residual.selectedKeys()
            if keys != nil { ResidualSelectionHook.run(forStore: store.identifier) }
            let query = try compiler.compileDictionaryQuery(
                columns: expressions, groupBy: groups, predicate: keys == nil ? request.predicate : nil, keys: keys,
                entityNumbers: entityNumbers, sortDescriptors: residual.serverSort, distinct: request.returnsDistinctResults,
                limit: pagesInMemory ? 0 : request.fetchLimit, offset: pagesInMemory ? 0 : request.fetchOffset)
            try store.readRows(of: query) { row in
                if !sortColumns.isEmpty {
                    sortValues.append(sortColumns.enumerated().map { position, column -> Any? in
                        let value = row.value(at: Int32(column))
                        if let type = sortTypes[position] { return ValueConversion.swiftValue(value, for: type) }
                        switch value.storage {
                        case .int64(let v): return v
                        case .double(let v): return v
                        case .string(let v): return v
                        case .blob(let v): return v
                        case .null: return nil
                        }
                    })
                }
                var dictionary: [String: Any] = [:]
                for (index, name) in names.enumerated() {
                    let value = row.value(at: Int32(index))
                    if let transformed = try transformables.value(at: index, value, in: row) {
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
        }
        if residual.selection != nil {
            // In one snapshot: the keys and the values aggregated over them are the same moment's.
            try store.inOneSnapshot(writing: false, request: "a dictionary fetch of '\(entity.name)'", read)
        } else {
            try read()
        }
        results = try residual.sorted(results, sortValues: sortValues)
        CompositeValue.fold(&results, composites: wholeComposites, keeping: Set(fetched.compactMap { $0 as? String }))
        if let having = request.havingPredicate {
            results = try results.filter { try having.evaluate(with: $0) }
        }
        if pagesInMemory {
            if request.fetchOffset > 0 { results = Array(results.dropFirst(request.fetchOffset)) }
            if request.fetchLimit > 0 { results = Array(results.prefix(request.fetchLimit)) }
        }
        return results
    }
}

