import Foundation

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
    ///   ``ObjectGraphError/negativeFetchBound(entity:bound:value:)`` for a negative limit, offset or batch size;
    ///   ``ObjectGraphError/fetchResultTypeMismatch(entity:returns:requested:)`` for a `T` the result type does
    ///   not give; ``ObjectGraphError/unsupportedFetchItem(entity:list:itemType:)`` for unusable
    ///   `propertiesToFetch`/`propertiesToGroupBy`;
    ///   ``ObjectGraphError/resultTypeMismatch(entity:objectClass:resultType:)`` when the entity's objects are
    ///   not `T`; ``ObjectGraphError/unknownKey(entity:key:)`` for a `relationshipKeyPathsForPrefetching` or
    ///   `propertiesToFetch` key the entity lacks; ``QueryLanguageError`` when the predicate or a sort key does
    ///   not compile to SQL (a key the entity lacks, among others) or fails while evaluated against unsaved
    ///   objects; ``StoreError`` when the store cannot be read.
    public func fetch<T>(_ request: FetchRequest<T>) throws -> FetchResults<T> {
        QueueCheck.use(of: self, "fetch(_:)")
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
                    throw ObjectGraphError.resultTypeMismatch(entity: ids[0].entity.name, objectClass: "\(ids[0].entity.managedObjectClass)",
                                                              resultType: "\(T.self)")
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
                throw ObjectGraphError.fetchResultTypeMismatch(entity: request.entityName, returns: "ManagedObjectID",
                                                               requested: "\(T.self)")
            }
            return FetchResults(try plan.fetchIDs() as! [T])
        case .dictionary:
            guard T.self == [String: Any].self || T.self == Any.self else {
                throw ObjectGraphError.fetchResultTypeMismatch(entity: request.entityName, returns: "[String: Any]",
                                                               requested: "\(T.self)")
            }
            return FetchResults(try plan.fetchDictionaries().map { $0 as! T })
        case .count:
            let count = try plan.count()
            guard let typed = count as? T ?? (NSNumber(value: count) as Any) as? T else {
                throw ObjectGraphError.fetchResultTypeMismatch(entity: request.entityName, returns: "Int", requested: "\(T.self)")
            }
            return FetchResults([typed])
        }
    }

    /// The number of objects a request would return, without reading them.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``, ``ObjectGraphError/unknownEntity(_:)``,
    ///   ``ObjectGraphError/negativeFetchBound(entity:bound:value:)`` and ``QueryLanguageError`` as `fetch(_:)` does for the
    ///   request; ``StoreError`` when the store cannot be read.
    public func count<T>(for request: FetchRequest<T>) throws -> Int {
        QueueCheck.use(of: self, "count(for:)")
        return try FetchPlan(request: request, context: self).count()
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
                    _ = try materializer.loadBatch(Array(faults[start..<min(start + 500, faults.count)]))
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
        // Safe: the same type, so the same array; no copy or cast per element (`fetch-all`).
        if T.self == ManagedObject.self { return unsafeBitCast(objects, to: [T].self) }
        func notOfType(_ object: ManagedObject) -> ObjectGraphError {
            ObjectGraphError.resultTypeMismatch(entity: object.entity.name, objectClass: "\(Swift.type(of: object))",
                                                resultType: "\(T.self)")
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
        // Safe: every element was checked to be a `T`, a class, whose instances are laid out as the
        // `ManagedObject` references already are: the array is handed over as it is (`fetch-all`).
        return unsafeBitCast(objects, to: [T].self)
    }
}
