import Foundation

/// Keeps the results of a fetch request in sections and order for a list screen, and reports
/// precisely what changed as the context changes.
///
/// The result type is the request's: `FetchedResultsController<ManagedObject>` for a request by entity
/// name, `FetchedResultsController<Bank>` for a request of a typed subclass (`FetchRequest<Bank>()`), whose
/// ``object(at:)`` and ``fetchedObjects`` then hand out `Bank`s.
///
/// ```swift
/// let request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
/// request.sortDescriptors = [QuerySortDescriptor(key: "state"),
///                            QuerySortDescriptor(key: "details.closeDate", ascending: false)]
/// request.fetchBatchSize = 20
/// let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
///                                               sectionNameKeyPath: "state", cacheName: "Banks")
/// controller.delegate = screen
/// try controller.performFetch()             // or: try await controller.performFetchInBackground(), off the queue
/// let bank = try controller.object(at: IndexPath(item: 0, section: 0))
/// ```
///
/// - `performFetch` runs one query for IDs and sort keys only; with a `fetchBatchSize` objects are read
///   a batch at a time (`Z_PK IN (…)`) as they are asked for, also in child contexts.
/// - The first sort descriptor's key must be the section key path (so sections group in order).
/// - With a cache name, the store part of the result is kept on disk and reused while the request and
///   the store's data are unchanged (see ``deleteCache(withName:)``).
/// - Changes reach the delegate and ``onDifference`` / ``differences`` after the context processes
///   pending changes, merges a save, or a child saves into it; the work grows with the number of
///   changes, not with the number of rows.
///
/// Use the controller on its context's queue, like the context's objects.
public final class FetchedResultsController<ResultType: ManagedObject>: @unchecked Sendable {
    // @unchecked Sendable: all state is touched on the context's queue only (the async fetch reads the
    // store elsewhere and applies the result on the queue), the same contract as the context.

    /// The request; its sort descriptors and predicate define the results. Edits take effect at the next
    /// fetch: until then the controller follows the request as it was when it last fetched.
    public let fetchRequest: FetchRequest<ResultType>
    /// The context the results live in.
    public let managedObjectContext: ManagedObjectContext
    /// The key path whose value names each object's section (nil: one section).
    public let sectionNameKeyPath: String?
    /// The name the computed results are cached under on disk (nil: no cache).
    public let cacheName: String?
    /// Hears about changes.
    public weak var delegate: (any FetchedResultsControllerDelegate<ResultType>)?
    /// Called on the context's queue with each transaction's changes as a value.
    public var onDifference: ((FetchedResultsDifference) -> Void)?

    /// How many fetches ran the ordered query, and how many were answered from the cache.
    public internal(set) var statistics = Statistics()

    /// Counters for tests and diagnostics.
    public struct Statistics: Sendable, Equatable {
        /// Fetches that ran the SQL query for IDs and sort keys.
        public var queryFetches = 0
        /// Fetches answered from the on-disk cache.
        public var cacheHits = 0
        /// Change transactions processed incrementally.
        public var incrementalUpdates = 0
        /// Times a change could not be applied (a key unreadable) and the controller re-fetched quietly.
        public var recoveryFetches = 0
    }

    // Unchecked (this field and the request and batch fields below): touched on the context's queue only,
    // and no access to one stays open while code that could reach it again runs: the tracker is changed on a
    // copy taken out of the field (`apply`), and a batch array is moved out before awake hooks can run.
    // Skips a `swift_beginAccess` (about 80 instructions) on each of the several reads per `object(at:)`
    // (`frc-batch-on-access`).
    @exclusivity(unchecked) var tracker: ResultsChangeTracker?
    /// A copy of the request as it was at the last fetch. Changes are matched, and batches read, by it: an
    /// edit to ``fetchRequest`` before the next fetch would otherwise apply to new changes only, and the
    /// rows would no longer be what any one request selects.
    @exclusivity(unchecked) var fetchedRequest: FetchRequest<ManagedObject>?
    /// The batch `object(at:)` loaded last, as far as it lies in one section: its objects from item
    /// `recentFirstItem` of section `recentSection` on (-1: none). A screen asks for the rows of one batch
    /// in turn, and the rest of them are answered from here by index path, without finding their IDs in
    /// the rows again. Dropped whenever the rows change (`forgetRecentBatch()`). Kept in three fields, not
    /// one optional struct: reading the struct copied it, a retain and a release of its array per row.
    @exclusivity(unchecked) private var recentSection = -1
    @exclusivity(unchecked) private var recentFirstItem = 0
    @exclusivity(unchecked) private var recentObjects: [ManagedObject?] = []
    /// The objects of the batch loaded before it, kept while the screen may still move back to them (a row
    /// on either side of a batch boundary then costs no reload), and let go when the next batch comes.
    @exclusivity(unchecked) private var previousBatchObjects: [ManagedObject?] = []
    /// The array of the batch let go last, all nil, kept to hold the next batch read: a batch's array is then
    /// neither allocated and filled with nils nor emptied and freed.
    @exclusivity(unchecked) private var spareBatchSlots: [ManagedObject?] = []

    /// The object at `indexPath` if the recent batch holds it, still registered and not turned into a fault.
    @inline(__always)
    private func recentObject(at indexPath: IndexPath) -> ManagedObject? {
        guard indexPath.count == 2, indexPath[0] == recentSection else { return nil }
        let index = indexPath[1] - recentFirstItem
        guard index >= 0, index < recentObjects.count, let object = recentObjects[index],
              object.flags.contains(.registered), !object.isFault else { return nil }
        return object
    }

    private var entity: EntityDescription?
    private var observerToken: UUID?
    let differenceStreams = ContinuationStore<FetchedResultsDifference>()
    /// Relationship chains (from the entity) whose objects' changes can move rows, with the keys that matter.
    var dependenciesForChanges: [ResultsDependency] = []

    /// Where cache files are kept (default: `<temporary directory>/OpenCoreData-FRC-cache`).
    public static var cacheDirectory: URL {
        get { ResultsCache.directory }
        set { ResultsCache.directory = newValue }
    }

    /// Creates a controller. The request must have sort descriptors; with a section key path, the first
    /// sort descriptor's key must be that key path (it may go through to-one relationships).
    ///
    /// - Throws: ``FetchedResultsError`` naming what is wrong:
    ///   ``FetchedResultsError/missingSortDescriptors(entity:)`` for a request without sort descriptors,
    ///   ``FetchedResultsError/sectionKeyPathMismatch(sectionNameKeyPath:firstSortKey:)`` when the section key
    ///   path is not the first sort key, ``FetchedResultsError/unsupportedRequest(_:)`` for a `fetchLimit`, a
    ///   `fetchOffset` or a result type other than objects. Key paths and the entity are checked by
    ///   ``performFetch()``.
    public init(fetchRequest: FetchRequest<ResultType>, managedObjectContext: ManagedObjectContext,
                sectionNameKeyPath: String?, cacheName: String?) throws {
        guard let first = fetchRequest.sortDescriptors.first else {
            throw FetchedResultsError.missingSortDescriptors(entity: fetchRequest.entityName)
        }
        if let sectionNameKeyPath, sectionNameKeyPath != first.key {
            throw FetchedResultsError.sectionKeyPathMismatch(sectionNameKeyPath: sectionNameKeyPath, firstSortKey: first.key)
        }
        guard fetchRequest.resultType == .managedObject else {
            throw FetchedResultsError.unsupportedRequest("the result type must be managed objects, not \(fetchRequest.resultType)")
        }
        guard fetchRequest.fetchLimit == 0, fetchRequest.fetchOffset == 0 else {
            throw FetchedResultsError.unsupportedRequest("fetchLimit and fetchOffset are not supported")
        }
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    deinit {
        if let token = observerToken {
            let context = managedObjectContext
            context.perform { context.removeChangeObserver(token) }
        }
    }

    /// Removes one cache file, or all of them with nil.
    ///
    /// ```swift
    /// FetchedResultsController.deleteCache(withName: "Banks")
    /// ```
    public static func deleteCache(withName name: String?) {
        ResultsCache.delete(name: name)
    }

    // MARK: Fetching

    /// Fetches: one query for IDs and sort keys (or the cache), then the context's unsaved changes on
    /// top. Without a `fetchBatchSize` every object is read too; with one, objects are read as used.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore``, ``ObjectGraphError/unknownEntity(_:)`` and
    ///   ``ObjectGraphError/negativeFetchBound(entity:bound:value:)`` and the other errors of a context's fetch
    ///   for the request;
    ///   ``FetchedResultsError/resultTypeMismatch(entity:objectClass:resultType:)`` when the entity (or a
    ///   sub-entity the results include) makes objects that are not `ResultType`;
    ///   ``FetchedResultsError/unknownKeyPath(entity:keyPath:)`` or
    ///   ``FetchedResultsError/unsupportedKeyPath(entity:keyPath:reason:)`` for a sort or section key path the
    ///   entity lacks or that cannot order (through a to-many, or ending at no stored attribute);
    ///   ``FetchedResultsError/unsupportedRequest(_:)`` when the sort keys compile to no ORDER BY it can read
    ///   back; ``QueryLanguageError`` when the predicate does not compile to SQL or cannot be evaluated against
    ///   unsaved objects; ``StoreError`` when the store cannot be read.
    public func performFetch() throws {
        let query = try prepare()
        let snapshot = try query.load()
        try install(snapshot, query: query)
    }

    /// Fetches with the SQL running on a background reader, off the context's queue; the result is
    /// applied on the context's queue.
    ///
    /// ```swift
    /// try await controller.performFetchInBackground()
    /// ```
    ///
    /// Named apart from ``performFetch()`` so that Core Data's `try controller.performFetch()` still means
    /// the synchronous fetch inside an `async` function.
    ///
    /// - Throws: what ``performFetch()`` throws.
    public func performFetchInBackground() async throws {
        let context = managedObjectContext
        let query = try await context.perform { [self] in try QueryBox(self.prepare()) }.query
        let snapshot = try await Task.detached { try query.load() }.value
        let box = SnapshotBox(snapshot)
        try await context.perform { [self] in try self.install(box.snapshot, query: query) }
    }

    private struct QueryBox: Sendable {
        let query: ResultsQuery
        init(_ query: ResultsQuery) { self.query = query }
    }

    private struct SnapshotBox: Sendable {
        let snapshot: ResultsCache.Snapshot
        init(_ snapshot: ResultsCache.Snapshot) { self.snapshot = snapshot }
    }

    /// The query for `request` (by default a copy of ``fetchRequest`` as it is now).
    private func prepare(_ request: FetchRequest<ManagedObject>? = nil) throws -> ResultsQuery {
        let request = request ?? fetchRequest.copy(as: ManagedObject.self)
        let plan = try FetchPlan(request: request, context: managedObjectContext)
        try checkResultType(entity: plan.entity, includesSubentities: request.includesSubentities)
        let ordering = try ResultsOrdering(entity: plan.entity, sortDescriptors: request.sortDescriptors)
        let dependencies = ResultsDependency.collect(ordering: ordering, entity: plan.entity, predicate: request.predicate)
        let cacheable = !dependencies.contains { $0.relationships.contains { $0.isToMany } }
        return try ResultsQuery(request: request, plan: plan, ordering: ordering, hasSections: sectionNameKeyPath != nil,
                                cacheName: cacheName, cacheable: cacheable)
    }

    /// Refuses, before anything is read, an entity (or a sub-entity the results can include) whose objects
    /// are not of the result type, so that ``object(at:)`` never meets one.
    private func checkResultType(entity: EntityDescription, includesSubentities: Bool) throws {
        guard ResultType.self != ManagedObject.self else { return }
        for current in [entity] + (includesSubentities ? entity.allSubentities : [])
        where !(current.managedObjectClass is ResultType.Type) {
            throw FetchedResultsError.resultTypeMismatch(entity: current.name, objectClass: "\(current.managedObjectClass)",
                                                         resultType: "\(ResultType.self)")
        }
    }

    /// Builds the state from the store part, then applies the context's unsaved changes quietly.
    func buildTracker(_ snapshot: ResultsCache.Snapshot, query: ResultsQuery) throws -> (ResultsChangeTracker, EntityDescription) {
        let context = managedObjectContext
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let plan = try FetchPlan(request: query.request, context: context)
        var tracker = ResultsChangeTracker(ordering: query.ordering, hasSections: query.hasSections, snapshot: snapshot,
                                           model: coordinator.managedObjectModel, entity: plan.entity,
                                           storeIdentity: plan.store.identity)
        // Unsaved changes to related objects (a bank's details) move their owners too; the store does not
        // know them yet.
        let dependencies = ResultsDependency.collect(ordering: query.ordering, entity: plan.entity, predicate: query.request.predicate)
        var relatedOwners: [ManagedObject] = []
        if !dependencies.isEmpty {
            var ancestor: ManagedObjectContext? = context
            while let current = ancestor {
                let changedIDs: [ManagedObjectID] = current.performAndWait {
                    current.updatedSet.union(current.insertedSet).union(current.deletedSet).map(\.objectID)
                }
                for id in changedIDs where !(query.request.includesSubentities ? id.entity.isKind(of: plan.entity)
                                                                            : id.entity === plan.entity) {
                    guard let object = try? context.object(with: id) else { continue }
                    // The change is an ancestor's, not this object's: any key may have changed.
                    relatedOwners.append(contentsOf: owners(of: object, changedKeys: nil, dependencies: dependencies))
                }
                ancestor = current.parent
            }
        }
        if !relatedOwners.isEmpty {
            let pendingIDs = Set(plan.pendingUpdated.map(\.objectID)).union(plan.pendingInserted.map(\.objectID))
                .union(plan.pendingDeleted)
            var seen = Set<ObjectIdentifier>()
            for owner in relatedOwners where !pendingIDs.contains(owner.objectID) && seen.insert(ObjectIdentifier(owner)).inserted {
                let id = owner.objectID
                try tracker.quietlyRemove(ResultsChangeTracker.handle(for: id))
                if try matches(owner, entity: plan.entity, request: query.request) {
                    try tracker.quietlyInsert(handle: ResultsChangeTracker.handle(for: id), entity: Int32(id.entity.entityNumber),
                                              keys: query.ordering.keyValues(of: owner), id: id)
                }
            }
        }
        if plan.hasPendingChanges {
            for id in plan.pendingDeleted { try tracker.quietlyRemove(ResultsChangeTracker.handle(for: id)) }
            for object in plan.pendingUpdated { try tracker.quietlyRemove(ResultsChangeTracker.handle(for: object.objectID)) }
            for object in plan.pendingUpdated + plan.pendingInserted where try matches(object, entity: plan.entity, request: query.request) {
                let id = object.objectID
                try tracker.quietlyInsert(handle: ResultsChangeTracker.handle(for: id), entity: Int32(id.entity.entityNumber),
                                          keys: query.ordering.keyValues(of: object), id: id)
            }
        }
        return (tracker, plan.entity)
    }

    /// A fresh state from the store and the context for the request of the last fetch, not installed.
    func freshTracker() throws -> ResultsChangeTracker {
        let query = try prepare(fetchedRequest)
        return try buildTracker(query.load(), query: query).0
    }

    private func install(_ snapshot: ResultsCache.Snapshot, query: ResultsQuery) throws {
        let context = managedObjectContext
        let (tracker, entity) = try buildTracker(snapshot, query: query)
        self.tracker = tracker
        fetchedRequest = query.request
        forgetRecentBatch()
        self.entity = entity
        self.dependenciesForChanges = ResultsDependency.collect(ordering: query.ordering, entity: entity,
                                                                 predicate: query.request.predicate)
        if snapshot.fromCache { statistics.cacheHits += 1 } else { statistics.queryFetches += 1 }
        if query.request.fetchBatchSize == 0 && tracker.count > 0 {
            _ = try context.materializer.loadBatch(self.tracker?.objectIDs(in: 0..<tracker.count) ?? [])
        }
        if observerToken == nil {
            observerToken = context.addChangeObserver { [weak self] _, change in
                self?.contextDidChange(change)
            }
        }
    }

    /// Whether an object belongs in the results of the last fetch's request.
    func matches(_ object: ManagedObject) throws -> Bool {
        guard let entity, let fetchedRequest else { return false }
        return try matches(object, entity: entity, request: fetchedRequest)
    }

    private func matches(_ object: ManagedObject, entity: EntityDescription, request: FetchRequest<ManagedObject>) throws -> Bool {
        guard request.includesSubentities ? object.entity.isKind(of: entity) : object.entity === entity else {
            return false
        }
        if object.isDeleted { return false }
        guard let predicate = request.predicate else { return true }
        return try predicate.evaluate(with: object)
    }

    // MARK: Reading results

    /// Every fetched object in order (sections one after another); nil before a fetch. With a
    /// `fetchBatchSize` the collection holds IDs and reads objects a batch at a time as it is used.
    public var fetchedObjects: FetchResults<ResultType>? {
        guard let tracker else { return nil }
        return results(forPositions: 0..<tracker.count)
    }

    /// The sections; nil before a fetch.
    public var sections: [SectionInfo]? {
        guard let tracker else { return nil }
        return tracker.sections.indices.map { sectionInfo(at: $0) }
    }

    func sectionInfo(at index: Int) -> SectionInfo {
        let name = tracker?.sections[index].name ?? ""
        return SectionInfo(name: name, indexTitle: sectionIndexTitle(forSectionName: name),
                           numberOfObjects: tracker?.sizes.counts[index] ?? 0, index: index, controller: self)
    }

    /// The object at an index path (read with its batch when the request has a `fetchBatchSize`).
    ///
    /// - Throws: ``FetchedResultsError/notFetched`` before the first fetch;
    ///   ``FetchedResultsError/indexPathOutOfRange(_:)`` for an index path the results do not have;
    ///   ``FetchedResultsError/resultTypeMismatch(entity:objectClass:resultType:)`` for an object that is not
    ///   `ResultType`; ``ObjectGraphError/unknownKey(entity:key:)`` for a prefetching key path the entity
    ///   lacks; ``StoreError`` when the object's batch cannot be read (an object whose row is gone since the
    ///   fetch comes back as a fault).
    public func object(at indexPath: IndexPath) throws -> ResultType {
        let object = try managedObject(at: indexPath)
        // An object of exactly the result type (always, for `ManagedObject`) is handed out after comparing
        // two type pointers, without the runtime's cast.
        // Safe: the object's dynamic type is `ResultType`, compared just here (`frc-batch-on-access`).
        if type(of: object) == ResultType.self { return unsafeDowncast(object, to: ResultType.self) }
        // Checked when fetched, for the request as fetched (which the controller follows until the next
        // fetch); checked again so that a class the check missed throws instead of crashing.
        guard let typed = object as? ResultType else {
            throw FetchedResultsError.resultTypeMismatch(entity: object.entity.name, objectClass: "\(type(of: object))",
                                                         resultType: "\(ResultType.self)")
        }
        return typed
    }

    /// ``object(at:)`` before its cast to the result type.
    private func managedObject(at indexPath: IndexPath) throws -> ManagedObject {
        // The tracker is not read on this path: reading it through the optional copies it.
        if let object = recentObject(at: indexPath) { return object }
        guard let position = tracker?.checkedPosition(of: indexPath) else {
            if case .none = tracker { throw FetchedResultsError.notFetched }
            throw FetchedResultsError.indexPathOutOfRange(indexPath)
        }
        let context = managedObjectContext
        let request = fetchedRequest
        let batchSize = request?.fetchBatchSize ?? 0
        let start = batchSize > 0 ? position - position % batchSize : position
        // Saved objects of one entity, none of them registered yet (the usual batch): read by key, each
        // object made as its row arrives, none listed in between. Tried before looking the object up by
        // ID: the fresh read refuses a batch holding any registered object, the asked one included, which
        // the general path below then finds.
        if let request, batchSize > 0, request.relationshipKeyPathsForPrefetching.isEmpty,
           let batch = tracker?.uniformKeys(in: start..<(start + batchSize)), let storeIndex = tracker?.storeIdentity.index {
            let materializer = context.materializer
            // Moved out, not shared: an awake hook that reads another batch of this controller meanwhile finds
            // no spare array and makes its own.
            var loaded = spareBatchSlots
            spareBatchSlots = []
            if try materializer.loadFreshBatch(
                entity: batch.entity, storeIndex: storeIndex, keys: batch.keys[...], into: &loaded,
                beforeMaking: { materializer.letGo(of: &previousBatchObjects, keepingSpares: true) }) {
                rememberBatch(loaded, start: start, askedFor: indexPath)
                let offset = position - start
                if offset < loaded.count, let asked = loaded[offset] {
                    // A fault here had no row when the batch was read (deleted in the store since the fetch):
                    // it is tried once more alone, as firing the fault would.
                    if asked.isFault { _ = try context.materializer.loadBatch([asked.objectID]) }
                    return asked
                }
            }
        }
        guard let (_, id) = tracker?.objectID(at: indexPath) else { throw FetchedResultsError.indexPathOutOfRange(indexPath) }
        if let object = context.registeredObject(for: id), !object.isFault { return object }
        if let request, batchSize > 0 {
            let batch = try context.materializer.loadBatch(tracker?.objectIDs(in: start..<(start + batchSize)) ?? [])
            rememberBatch(batch, start: start, askedFor: indexPath)
            if !request.relationshipKeyPathsForPrefetching.isEmpty {
                try context.prefetch(request.relationshipKeyPathsForPrefetching, for: batch)
            }
            // The batch comes back in the IDs' order: the object asked for needs no second lookup.
            let offset = position - start
            if offset < batch.count, batch[offset].objectID == id, !batch[offset].isFault { return batch[offset] }
        }
        let object = try context.object(with: id)
        if object.isFault { _ = try context.materializer.loadBatch([id]) }
        return object
    }

    /// Keeps the part of a batch loaded for `indexPath` (positions from `start`) that lies in its section.
    /// The batch loaded two batches ago is let go, and with it those of its objects nobody else holds: a
    /// screen moving through a long list frees the rows it left behind while they are still in cache, and
    /// the context's registry stays the size of a screen instead of growing to its next trim.
    private func rememberBatch(_ objects: [ManagedObject?], start: Int, askedFor indexPath: IndexPath) {
        managedObjectContext.materializer.letGo(of: &previousBatchObjects)
        swap(&previousBatchObjects, &recentObjects)
        // The batch before is all nil now: its array holds the next batch read.
        swap(&spareBatchSlots, &recentObjects)
        recentObjects = []
        recentSection = -1
        let section = indexPath.count > 0 ? indexPath[0] : 0
        guard indexPath.count == 2, let range = tracker?.sectionRange(section) else { return }
        let lower = max(start, range.lowerBound), upper = min(start + objects.count, range.upperBound)
        guard lower < upper else { return }
        // Mostly the batch lies in one section: kept as it is, not copied.
        let inSection = lower == start && upper == start + objects.count ? objects : Array(objects[(lower - start)..<(upper - start)])
        recentObjects = inSection
        recentFirstItem = lower - range.lowerBound
        recentSection = section
    }

    /// Called whenever the rows change: index paths in the recent batch may no longer be the same rows.
    func forgetRecentBatch() {
        recentSection = -1
        recentObjects = []
        previousBatchObjects = []
        spareBatchSlots = []
    }

    /// The index path of an object, or nil when it is not in the results. O(log n).
    public func indexPath(forObject object: ManagedObject) -> IndexPath? {
        guard let tracker, let found = tracker.rows.find(ResultsChangeTracker.handle(for: object.objectID)) else { return nil }
        return tracker.indexPath(forPosition: found.position)
    }

    /// The index title for a section name: the delegate's, else the name's first letter, capitalized.
    public func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        if let title = delegate?.controller(self, sectionIndexTitleForSectionName: sectionName) { return title }
        guard let first = sectionName.first else { return nil }
        return String(first).uppercased()
    }

    /// The index titles of the sections, in order, each once.
    public var sectionIndexTitles: [String] {
        var seen = Set<String>()
        var titles: [String] = []
        for section in tracker?.sections ?? [] {
            if let title = sectionIndexTitle(forSectionName: section.name), seen.insert(title).inserted {
                titles.append(title)
            }
        }
        return titles
    }

    /// The section a section index title (at `sectionIndex` in ``sectionIndexTitles``) jumps to: the
    /// first section with that title.
    ///
    /// - Throws: ``FetchedResultsError/notFetched`` before the first fetch;
    ///   ``FetchedResultsError/unknownSectionIndexTitle(_:)`` when no section has that title.
    public func section(forSectionIndexTitle title: String, at sectionIndex: Int) throws -> Int {
        guard let tracker else { throw FetchedResultsError.notFetched }
        for (index, section) in tracker.sections.enumerated()
        where sectionIndexTitle(forSectionName: section.name) == title {
            return index
        }
        throw FetchedResultsError.unknownSectionIndexTitle(title)
    }

    /// Each transaction's changes as values, as an AsyncSequence.
    public var differences: AsyncStream<FetchedResultsDifference> { differenceStreams.makeStream() }

    func objects(inSection section: Int) throws -> FetchResults<ManagedObject> {
        guard let tracker else { throw FetchedResultsError.notFetched }
        guard let range = tracker.sectionRange(section) else {
            throw FetchedResultsError.indexPathOutOfRange(IndexPath(item: 0, section: section))
        }
        return results(forPositions: range)
    }

    func objectIDs(inSection section: Int) -> [ManagedObjectID] {
        guard let range = tracker?.sectionRange(section) else { return [] }
        return tracker?.objectIDs(in: range) ?? []
    }

    /// The object IDs of every section, in order.
    public var sectionObjectIDs: [[ManagedObjectID]] {
        guard let tracker else { return [] }
        return tracker.sections.indices.map { objectIDs(inSection: $0) }
    }

    private func results<Element>(forPositions range: Range<Int>) -> FetchResults<Element> {
        guard let ids = tracker?.objectIDs(in: range) else { return FetchResults([]) }
        let batched = BatchedObjects(ids: ids, batchSize: max(1, fetchedRequest?.fetchBatchSize ?? 0),
                                     context: managedObjectContext)
        batched.prefetchKeyPaths = fetchedRequest?.relationshipKeyPathsForPrefetching ?? []
        return FetchResults(batched: batched)
    }
}

extension FetchedResultsController: SectionContents {}
