import Foundation
import OrderedCollections

/// A scratchpad of objects: fetch them, change them, save them, all on the context's own queue.
///
/// ```swift
/// let context = container.newBackgroundContext()
/// try await context.perform {
///     let item = try context.insertNewObject(forEntityName: "Item")
///     try item.setValue("Buy milk", forKey: "name")
///     try context.save()
/// }
/// ```
///
/// A context and its objects are not thread-safe: use them inside ``perform(_:)`` /
/// ``performAndWait(_:)`` (or on the main thread for a `.mainQueue` context). Pass
/// ``ManagedObjectID``s between contexts, never objects.
public final class ManagedObjectContext: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: all mutable state is touched only on the context's queue (perform /
    // performAndWait), which is the contract Core Data has too.

    /// How a context runs its work.
    public enum ConcurrencyType: Sendable, CustomStringConvertible {
        /// Work runs on the main queue.
        case mainQueue
        /// Work runs on a private serial queue of the context's own.
        case privateQueue
        /// Work runs on whatever thread calls; requests that need a queue (asynchronous fetches) are refused.
        case confinement

        /// Core Data's name for the type (`MainQueueConcurrencyType`…).
        public var description: String {
            switch self {
            case .mainQueue: return "MainQueueConcurrencyType"
            case .privateQueue: return "PrivateQueueConcurrencyType"
            case .confinement: return "ConfinementConcurrencyType"
            }
        }
    }

    /// How the context runs its work.
    public let concurrencyType: ConcurrencyType
    /// A name for logs and debugging; the persistent history records it with each transaction.
    public var name: String?
    /// Who the context's saves and batch requests are by, as the persistent history records them (Core
    /// Data's `transactionAuthor`): an importer, a sync engine, a user's edits. Readers of the history
    /// use it to skip their own changes.
    public var transactionAuthor: String?
    /// How optimistic-locking and uniqueness-constraint conflicts at save are resolved.
    public var mergePolicy: MergePolicy = .error
    /// How old, in seconds, a row other contexts read may be for this context to fill a fault with it
    /// instead of reading the store (Core Data's `stalenessInterval`): negative (the default) takes any
    /// cached row, 0 always reads the store, a positive interval reads again rows cached longer ago.
    public var stalenessInterval: TimeInterval = -1
    /// Whether a fault whose row has left the store (deleted by another context or process) is, when it
    /// fires, marked deleted and read as empty values, as Core Data does, instead of the read throwing
    /// ``ObjectGraphError/objectNotFound(_:)``. Off by default, unlike Core Data's: a read of a row that
    /// is gone says so rather than answering nil.
    public var shouldDeleteInaccessibleFaults = false
    /// Whether saves of the parent context (or, for a context on a coordinator, of sibling contexts) are
    /// merged into this context automatically.
    public var automaticallyMergesChangesFromParent = false {
        didSet { updateAutomaticMergeRegistration() }
    }

    // Unchecked: like the object graph state below, touched on the context's queue only, and no access
    // stays open across a call; read on every batch and fault the context reads (`load-batch-by-id`).
    @exclusivity(unchecked) private var coordinatorStorage: PersistentStoreCoordinator?
    /// The parent context, for a child context whose saves push into the parent.
    public var parent: ManagedObjectContext? {
        didSet {
            if parent != nil { coordinatorStorage = nil }
            updateAutomaticMergeRegistration()
        }
    }

    /// The coordinator this context (or its root parent) works with.
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { parent?.persistentStoreCoordinator ?? coordinatorStorage }
        set {
            coordinatorStorage = newValue
            if newValue != nil { parent = nil }
            updateAutomaticMergeRegistration()
        }
    }

    let queue: DispatchQueue?
    /// The queue's identity in queue marks and in what a thread holds (see ``QueueOwnership``): the private
    /// queue object, which the context keeps; for the main queue, ``mainQueueToken``, since on Linux each
    /// read of `DispatchQueue.main` makes a new wrapper object.
    private let queueIdentity: ObjectIdentifier?
    /// What this context's objects hold to reach it; cleared when the context goes away.
    let reference = ContextReference()
    /// Stands for the main queue in queue identities.
    private final class MainQueueToken: Sendable {}
    private static let mainQueueToken = MainQueueToken()
    /// Marks each context queue (the main queue, every private queue) with its identity, so
    /// `DispatchQueue.getSpecific` names the context queue a thread is running, wherever it runs.
    static let runningQueueKey: DispatchSpecificKey<ObjectIdentifier> = {
        let key = DispatchSpecificKey<ObjectIdentifier>()
        DispatchQueue.main.setSpecific(key: key, value: ObjectIdentifier(mainQueueToken))
        return key
    }()

    // Object graph state; touched on the context's queue only. Unchecked (these fields and `undoRecorder`):
    // one queue means no concurrent access, and no access to a field stays open while code that could reach
    // the same field runs (awake hooks and observers run between accesses, not inside one). Skips a
    // `swift_beginAccess`, about 80 instructions, on each access, several per object fetched or registered
    // (`load-batch-by-id`: 122.6 M → 109.5 M instructions with the objects', results' and model's fields).
    @exclusivity(unchecked) var registry = ObjectRegistry()
    /// Objects let go of and kept for the next fresh batch read to reuse (see ``SparePool``); empty outside
    /// that read.
    @exclusivity(unchecked) var spares = SparePool()
    /// Registry size at which objects nobody holds are forgotten (see `trimRegistry`).
    @exclusivity(unchecked) var registryTrimThreshold = 10_000
    /// The smallest threshold, so small contexts never pay for trimming.
    var registryTrimFloor = 10_000 {
        didSet { registryTrimThreshold = registryTrimFloor }
    }
    @exclusivity(unchecked) var insertedSet: Set<ManagedObject> = []
    /// The inserted objects in the order they were inserted (with any since deleted): new objects get their
    /// primary keys in this order at save. Use `noteInserted`, `insertedInOrder` and `clearInserted`.
    @exclusivity(unchecked) private var insertionOrder: [ManagedObject] = []
    @exclusivity(unchecked) var updatedSet: Set<ManagedObject> = []
    @exclusivity(unchecked) var deletedSet: Set<ManagedObject> = []
    /// Objects changed since the last `processPendingChanges` (for change observers).
    @exclusivity(unchecked) var pendingChangeRecord = ChangeRecord()
    @exclusivity(unchecked) var changeObservers: [UUID: (ManagedObjectContext, ObjectsDidChange) -> Void] = [:]
    /// Whether `processPendingChanges()` posts ``objectsDidChangeNotification``. On, as in Core Data:
    /// whoever observes the notification hears every change. Recording the changes costs a set insertion
    /// per object changed between reports; a context nobody observes that inserts or edits in bulk can
    /// turn it off (change observers and fetched results controllers still record for themselves).
    public var postsObjectsDidChangeNotifications = true
    /// Whether a save checks the validation rules first. Off only in a mapping migration's destination
    /// context while objects are made and linked batch by batch: Core Data validates them once their
    /// relationships are set (`MigrationManager.validateDestination`).
    var validatesOnSave = true
    /// Whether edits are recorded for observers or the notification.
    var tracksChanges: Bool { postsObjectsDidChangeNotifications || !changeObservers.isEmpty }
    /// Whether temporary IDs made permanent are recorded: only change observers use them (the
    /// notification does not carry them, as Core Data's does not), and a bulk insert's would be a
    /// dictionary as large as the insert.
    var tracksRenames: Bool { !changeObservers.isEmpty }
    /// Records changes for ``undoManager``; nil (and never looked into beyond that test) without one.
    @exclusivity(unchecked) var undoRecorder: UndoRecorder?
    let didSaveContinuations = ContinuationStore<ContextDidSave>()
    private let childLock = NSLock()
    private var children: [WeakContextReference] = []

    struct WeakContextReference { weak var context: ManagedObjectContext? }

    /// Child contexts still alive.
    var childContexts: [WeakContextReference] { childLock.withLock { children } }

    func registerChild(_ child: ManagedObjectContext) {
        childLock.withLock {
            children.removeAll { $0.context == nil || $0.context === child }
            children.append(WeakContextReference(context: child))
        }
    }

    /// Creates a context. Give it a coordinator or a parent before use.
    public init(concurrencyType: ConcurrencyType) {
        self.concurrencyType = concurrencyType
        switch concurrencyType {
        case .mainQueue: queue = DispatchQueue.main
        case .privateQueue: queue = DispatchQueue(label: "OpenCoreData.ManagedObjectContext")
        case .confinement: queue = nil
        }
        switch concurrencyType {
        case .mainQueue: queueIdentity = ObjectIdentifier(Self.mainQueueToken)
        case .privateQueue: queueIdentity = queue.map(ObjectIdentifier.init)
        case .confinement: queueIdentity = nil
        }
        reference.context = self
        if let queue, let queueIdentity {
            if concurrencyType == .mainQueue {
                _ = Self.runningQueueKey
            } else {
                queue.setSpecific(key: Self.runningQueueKey, value: queueIdentity)
            }
        }
    }

    deinit {
        reference.context = nil
        persistentStoreCoordinator?.unregisterAutomaticMerge(self)
    }

    /// The context's name, if any, and its concurrency type.
    public var description: String {
        "<ManagedObjectContext \(name.map { "'\($0)' " } ?? "")\(concurrencyType)>"
    }

    // MARK: Running work on the context's queue

    /// Whether the caller is already on this context's queue: running it (the main thread counts for the
    /// main queue; on Linux a worker thread may drain the main queue after `dispatchMain()` or run
    /// main-actor code after an `await`, and the queue's mark tells), or holding it while it runs a
    /// `performAndWait` block of another context (see ``QueueOwnership``).
    var isOnQueue: Bool {
        guard let queueIdentity else { return true }
        if concurrencyType == .mainQueue && Thread.isMainThread { return true }
        return DispatchQueue.getSpecific(key: Self.runningQueueKey) == queueIdentity || QueueOwnership.holds(queueIdentity)
    }

    /// The context queue the current thread runs, as the queue check's messages name it; nil for none.
    static var runningQueueName: String? {
        guard let running = DispatchQueue.getSpecific(key: runningQueueKey) else { return nil }
        return running == ObjectIdentifier(mainQueueToken) ? "the main queue" : "a private context queue"
    }

    /// The context queues the current thread holds: the one it runs, and those held further up its stack.
    private static var queuesHeldByCurrentThread: [ObjectIdentifier] {
        var held = QueueOwnership.heldQueues
        if let running = DispatchQueue.getSpecific(key: runningQueueKey) { held.append(running) }
        if Thread.isMainThread { held.append(ObjectIdentifier(mainQueueToken)) }
        return held
    }

    /// Runs `block` on the context's queue, later.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        guard let queue else { block(); return }
        queue.async(execute: block)
    }

    /// Runs `block` on the context's queue and waits for it (runs it at once when already there).
    ///
    /// The queues the caller holds stay held for the block: a parent context on one of them (the main
    /// queue, a private queue whose block called this) runs its own `performAndWait` inside the block at
    /// once, where a `sync` would wait for itself.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        guard let queue, !isOnQueue else { return try block() }
        let held = Self.queuesHeldByCurrentThread
        return try queue.sync { try QueueOwnership.holding(held, block) }
    }

    /// Runs `block` on the context's queue and returns its result, as Core Data's `perform` does: it
    /// throws only when `block` throws (`try` is needed only then), and the result need not be
    /// `Sendable`, only handed over whole (`sending`), as a fetch made inside the block is.
    ///
    /// - Throws: what `block` throws.
    public func perform<T, Failure: Error>(_ block: @escaping @Sendable () throws(Failure) -> sending T) async throws(Failure) -> sending T {
        guard let queue else { return try block() }
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(Failure) -> T in try block() })
            }
        }
        return try result.get()
    }

    // MARK: Registered objects

    /// The objects this context holds.
    public var registeredObjects: Set<ManagedObject> {
        QueueCheck.use(of: self, "registeredObjects")
        return Set(registry.values)
    }
    /// New objects not yet saved.
    public var insertedObjects: Set<ManagedObject> {
        QueueCheck.use(of: self, "insertedObjects")
        return insertedSet
    }
    /// Changed objects not yet saved.
    public var updatedObjects: Set<ManagedObject> {
        QueueCheck.use(of: self, "updatedObjects")
        return updatedSet
    }
    /// Deleted objects not yet saved.
    public var deletedObjects: Set<ManagedObject> {
        QueueCheck.use(of: self, "deletedObjects")
        return deletedSet
    }
    /// Whether anything is unsaved.
    public var hasChanges: Bool {
        QueueCheck.use(of: self, "hasChanges")
        return !insertedSet.isEmpty || !updatedSet.isEmpty || !deletedSet.isEmpty
    }

    /// The object with this ID if the context holds it, else nil (never touches the store).
    public func registeredObject(for id: ManagedObjectID) -> ManagedObject? {
        QueueCheck.use(of: self, "registeredObject(for:)")
        return registry[id]
    }

    /// The object with this ID: the registered one, or a fault that reads the store when first used.
    ///
    /// - Throws: ``ObjectGraphError/objectNotFound(_:)`` for a temporary ID this context does not hold;
    ///   ``ObjectGraphError/foreignObjectID(_:)`` for an ID of another model than the coordinator's, or when the
    ///   context has no coordinator. The store is not read, so a missing row is found only when the fault is
    ///   first used.
    public func object(with id: ManagedObjectID) throws -> ManagedObject {
        QueueCheck.use(of: self, "object(with:)")
        if let object = registry[id] { return object }
        if id.isTemporaryID { throw ObjectGraphError.objectNotFound(id) }
        guard id.entity.managedObjectModel === persistentStoreCoordinator?.managedObjectModel else {
            throw ObjectGraphError.foreignObjectID(id)
        }
        return materializer.register(row: nil, id: id)
    }

    /// The object with this ID, read from the store now; throws if its row does not exist.
    ///
    /// - Throws: what ``object(with:)`` throws; ``ObjectGraphError/objectNotFound(_:)`` when the ID's row is
    ///   not in the store (or the parent context); ``ObjectGraphError/noPersistentStore`` when the context has
    ///   no coordinator; ``StoreError`` when the store cannot be read.
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        let object = try self.object(with: id)
        if object.isFault { try fulfillFault(object) }
        if object.row == nil && !object.isInserted { throw ObjectGraphError.objectNotFound(id) }
        return object
    }

    /// Records an object as inserted: in the set, and once in the insertion order.
    func noteInserted(_ object: ManagedObject) {
        insertedSet.insert(object)
        if !object.flags.contains(.listedForInsert) {
            object.flags.insert(.listedForInsert)
            insertionOrder.append(object)
        }
    }

    /// The inserted objects, in the order they were first inserted.
    var insertedInOrder: [ManagedObject] {
        // Every member of the set is listed once; the list is longer only when some were removed since.
        insertionOrder.count == insertedSet.count ? insertionOrder : insertionOrder.filter { insertedSet.contains($0) }
    }

    /// Forgets every inserted object (after a save, a rollback, a reset or a push to the parent).
    func clearInserted() {
        for object in insertionOrder { object.flags.remove(.listedForInsert) }
        insertionOrder = []
        insertedSet = []
    }

    /// Makes room for `count` new objects at once: trims the registry now if they would cross the trim
    /// threshold, raises the threshold past them, and grows the table once. Every object being added stays
    /// held by the caller, so trimming while they are added could only forget older objects; and growing
    /// (rehashing everything) in the middle of a long registration is what made one block on the queue long.
    func prepareRegistry(forAdding count: Int) {
        if registry.count + count >= registryTrimThreshold {
            trimRegistry()
            registryTrimThreshold = max(registryTrimThreshold, (registry.count + count) * 2)
        }
        registry.reserveCapacity(count)
    }

    /// Forgets objects nobody else holds and that have nothing unsaved, as Core Data's context holds such
    /// objects weakly. Run when the registry has doubled since the last trim, so the cost is amortized;
    /// a uniqueness check instead of weak references keeps fetches free of side-table costs.
    func trimRegistry() {
        registry.forgetUnreferenced(where: Self.isForgettable, forget: Self.markForgotten)
        registryTrimThreshold = max(registryTrimFloor, registry.count * 2)
    }

    /// Whether the registry may let an object go once nobody else holds it: nothing unsaved.
    static func isForgettable(_ object: ManagedObject) -> Bool {
        object.changes.isEmpty && !object.isInserted && !object.isDeleted
    }

    /// An object let go may still be reached through a weak reference taken meanwhile: it must then say it
    /// is no longer registered or in this context.
    static func markForgotten(_ object: ManagedObject) {
        object.flags.remove(.registered)
        object.contextReference = nil
    }

    func unregister(_ object: ManagedObject) {
        registry.removeValue(forKey: object.objectID)
        object.flags.remove(.registered)
    }

    // MARK: Inserting and deleting

    /// Creates and inserts a new object of the named entity.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore`` when the context has no coordinator (no model to find
    ///   the entity in); ``ObjectGraphError/unknownEntity(_:)`` when the model has no entity `name`;
    ///   ``ObjectGraphError/abstractEntity(name:)`` when the entity is abstract.
    @discardableResult
    public func insertNewObject(forEntityName name: String) throws -> ManagedObject {
        QueueCheck.use(of: self, "insertNewObject(forEntityName:)")
        guard let entity = persistentStoreCoordinator?.managedObjectModel.entitiesByName[name] else {
            if persistentStoreCoordinator == nil { throw ObjectGraphError.noPersistentStore }
            throw ObjectGraphError.unknownEntity(name)
        }
        guard !entity.isAbstract else {
            throw ObjectGraphError.abstractEntity(name: name)
        }
        let object = entity.managedObjectClass.init(entity: entity, id: ManagedObjectID(temporaryFor: entity))
        insert(object)
        return object
    }

    /// Creates and inserts a new object of a typed subclass whose entity is registered in the model.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore`` when the context has no coordinator;
    ///   ``ObjectGraphError/unknownEntity(_:)`` naming the type when no entity of the model makes objects of
    ///   it; ``ObjectGraphError/abstractEntity(name:)`` when that entity is abstract.
    public func insertNew<T: ManagedObject>(_ type: T.Type) throws -> T {
        guard let model = persistentStoreCoordinator?.managedObjectModel else { throw ObjectGraphError.noPersistentStore }
        guard let entity = model.entities.first(where: { $0.managedObjectClass == type }) else {
            throw ObjectGraphError.unknownEntity(String(describing: type))
        }
        return try insertNewObject(forEntityName: entity.name) as! T
    }

    /// Inserts a new object (one made with `ManagedObject(entity:insertInto: nil)`).
    public func insert(_ object: ManagedObject) {
        QueueCheck.use(of: self, "insert(_:)")
        if object.managedObjectContext === self && object.flags.contains(.registered) {
            if object.isDeleted {
                if let undoRecorder { undoRecorder.recordLifecycle(of: object, in: self) }
                object.flags.remove(.deleted)
                deletedSet.remove(object)
                if object.row == nil { object.flags.insert(.inserted); noteInserted(object) }
            }
            return
        }
        if let undoRecorder { undoRecorder.recordLifecycle(of: object, in: self) }
        object.managedObjectContext = self
        object.flags.insert([.inserted, .registered])
        registry[object.objectID] = object
        noteInserted(object)
        // Defaults, converted once per entity when the model was built.
        if object.changes.isEmpty {
            object.changes = object.entity.defaultChanges
        } else {
            object.changes.merge(object.entity.defaultChanges) { current, _ in current }
        }
        if !object.entity.transientDefaults.isEmpty {
            object.transientValues.merge(object.entity.transientDefaults) { current, _ in current }
        }
        if tracksChanges { pendingChangeRecord.inserted.insert(object) }
        object.awakeFromInsert()
    }

    /// Marks an object deleted; delete rules run now for the graph in memory and are checked at save.
    public func delete(_ object: ManagedObject) {
        QueueCheck.use(of: self, "delete(_:)")
        guard object.managedObjectContext === self, !object.isDeleted else { return }
        if let undoRecorder { undoRecorder.recordLifecycle(of: object, in: self) }
        object.prepareForDeletion()
        if object.isInserted {
            // A new object deleted before any save simply goes away.
            try? applyDeleteRules(to: object)
            insertedSet.remove(object)
            object.flags.remove(.inserted)
            object.flags.insert(.deleted)
            unregister(object)
            if tracksChanges { pendingChangeRecord.deleted.insert(object) }
            return
        }
        object.flags.insert(.deleted)
        deletedSet.insert(object)
        updatedSet.remove(object)
        if tracksChanges { pendingChangeRecord.deleted.insert(object) }
        try? applyDeleteRules(to: object)
    }

    /// Called before a value of `object` changes: the value in `slot` (nil: values not told one by one).
    func willChange(_ object: ManagedObject, slot: Int?) {
        // Before the deleted test: delete rules still change a deleted object's own relationships.
        if let undoRecorder { undoRecorder.recordValue(of: object, slot: slot, in: self) }
        guard !object.isDeleted else { return }
        // A new object edited after observers heard of its insert: they hear of the edit as an update.
        if !object.isInserted { updatedSet.insert(object) }
        if tracksChanges {
            // An object inserted since the last report is reported as inserted: its edits add nothing (a
            // bulk insert would otherwise keep an entry per object and edit until the report).
            if object.isInserted && pendingChangeRecord.inserted.contains(object) { return }
            pendingChangeRecord.updated.insert(object)
            // Which keys changed is read by the library's own observers (results controllers deciding whether
            // a related object's change matters), not by the notification.
            if !changeObservers.isEmpty { pendingChangeRecord.noteChange(of: object, slot: slot) }
        }
    }

    // MARK: Discarding changes

    /// Throws away every unsaved change.
    public func rollback() {
        QueueCheck.use(of: self, "rollback()")
        for object in insertedSet {
            unregister(object)
            object.flags.remove(.inserted)
            object.managedObjectContext = nil
        }
        for object in updatedSet.union(deletedSet) {
            object.changes = [:]
            object.committedToMany = [:]
            object.flags.remove(.deleted)
        }
        // Relationship changes may have touched objects beyond the updated set.
        for object in registry.values where !object.changes.isEmpty {
            object.changes = [:]
            object.committedToMany = [:]
        }
        clearInserted()
        updatedSet = []
        deletedSet = []
        pendingChangeRecord = ChangeRecord()
        if let undoRecorder { undoRecorder.removeAll() }
        notifyObservers(ObjectsDidChange(invalidatedAll: true))
    }

    /// Forgets every object: the context is as new. Objects handed out before are no longer usable.
    public func reset() {
        QueueCheck.use(of: self, "reset()")
        for object in registry.values { object.managedObjectContext = nil; object.flags.remove(.registered) }
        registry = ObjectRegistry()
        clearInserted()
        updatedSet = []
        deletedSet = []
        pendingChangeRecord = ChangeRecord()
        if let undoRecorder { undoRecorder.removeAll() }
        notifyObservers(ObjectsDidChange(invalidatedAll: true))
    }

    /// Re-reads an object from the store. With `mergeChanges` its unsaved changes are kept on top of the
    /// fresh values; without, they are discarded and the object becomes a fault.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        QueueCheck.use(of: self, "refresh(_:mergeChanges:)")
        guard object.managedObjectContext === self, !object.isInserted else { return }
        persistentStoreCoordinator?.rowCache.remove(object.objectID)
        object.committedToMany = [:]
        object.faultBatch = nil
        object.fetchedResults = [:]
        if mergeChanges && !object.changes.isEmpty {
            object.row = nil
            try? fulfillFault(object)
        } else {
            object.willTurnIntoFault()
            object.changes = [:]
            object.row = nil
            updatedSet.remove(object)
            if object.isDeleted { object.flags.remove(.deleted); deletedSet.remove(object) }
            object.didTurnIntoFault()
        }
    }

    /// Turns every object without unsaved changes back into a fault.
    public func refreshAllObjects() {
        QueueCheck.use(of: self, "refreshAllObjects()")
        for object in registry.values { refresh(object, mergeChanges: true) }
    }

    // MARK: Faults

    /// Reads a fault's row: from the parent context, the coordinator's row cache, or the store (with its
    /// whole batch when it came from a batched fetch).
    func fulfillFault(_ object: ManagedObject) throws {
        guard object.row == nil, !object.isInserted else { return }
        if let parent {
            let id = object.objectID
            let row = try parent.performAndWait { try parent.currentRow(for: id) }
            guard let row else { throw ObjectGraphError.objectNotFound(id) }
            materializer.fill(object, row: row)
            materializer.awaken(CollectionOfOne(object))
            return
        }
        guard let coordinator = persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        if stalenessInterval != 0, !coordinator.rowCache.isEmpty, let store = try? coordinator.primaryBackend(),
           let cached = coordinator.rowCache.row(for: object.objectID, token: store.externalChangeToken(),
                                                 maximumAge: stalenessInterval > 0 ? .seconds(stalenessInterval) : nil) {
            materializer.fill(object, row: cached)
            materializer.awaken(CollectionOfOne(object))
            return
        }
        var ids = [object.objectID]
        if let batch = object.faultBatch {
            ids = batch.ids.filter { id in registry[id].map { $0.row == nil && !$0.isInserted } ?? false }
            if !ids.contains(object.objectID) { ids.append(object.objectID) }
        }
        let rows = try coordinator.rows(for: ids)
        var filled: [ManagedObject] = []
        filled.reserveCapacity(rows.count)
        for row in rows {
            let id = ManagedObjectID(entity: coordinator.managedObjectModel.entity(number: row.entityNumber) ?? object.entity,
                                     primaryKey: row.primaryKey, storeIndex: object.objectID.storeIndex)
            if let target = registry[id], target.row == nil, !target.isInserted {
                materializer.fill(target, row: row)
                filled.append(target)
            }
        }
        // Once every fault of the batch has its row: a hook reading a neighbour finds it filled.
        materializer.awaken(filled)
        if object.row == nil { throw ObjectGraphError.objectNotFound(object.objectID) }
    }

    /// The row a child context sees for an object: this context's committed row with its unsaved
    /// attribute and to-one changes applied. Nil when the object does not exist here.
    func currentRow(for id: ManagedObjectID) throws -> RowValues? {
        let object: ManagedObject
        if let registered = registry[id] {
            object = registered
        } else if id.isTemporaryID {
            // Inserted further up the chain and not yet looked at here: its row is the parent's.
            guard let parent else { return nil }
            return try parent.performAndWait { try parent.currentRow(for: id) }
        } else {
            object = try self.object(with: id)
        }
        if object.isDeleted { return nil }
        if object.isFault {
            do { try fulfillFault(object) } catch ObjectGraphError.objectNotFound { return nil }
        }
        let table = persistentStoreCoordinator!.managedObjectModel.schema.table(named: object.entity.tableName)!
        var row = object.row ?? RowValues(repeating: .null, count: table.columns.count)
        if object.isInserted {
            row[0] = object.objectID.primaryKey.storeValue
            row[1] = object.entity.entityNumber.storeValue
            row[2] = 0.storeValue
        }
        object.applyChanges(to: &row)
        return row
    }

    /// Reads the IDs a to-many relationship holds in the store (or in the parent context).
    func loadToMany(of object: ManagedObject, slot: Int) throws -> OrderedSet<ManagedObjectID> {
        if let parent {
            let id = object.objectID
            let ids: [ManagedObjectID] = try parent.performAndWait {
                guard let source = try? parent.object(with: id), !source.isDeleted else { return [] }
                return Array(try source.relatedIDs(atSlot: slot))
            }
            return OrderedSet(ids)
        }
        guard let coordinator = persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let relationship = object.entity.allProperties[slot] as! RelationshipDescription
        let ids = try coordinator.relatedIDs(of: object.objectID, relationship: relationship,
                                             storage: object.entity.storage[slot])
        let batch = FaultBatch(ids: ids)
        for id in ids where registry[id] == nil {
            materializer.register(row: nil, id: id).faultBatch = batch
        }
        return OrderedSet(ids)
    }
}

/// IDs loaded together, so firing one fault of them loads them all in one query.
final class FaultBatch {
    let ids: [ManagedObjectID]
    init(ids: [ManagedObjectID]) { self.ids = ids }
}

/// The link from objects to their context. `unowned(unsafe)` is safe here because the context clears it in
/// `deinit` before it goes, and objects are used on the context's queue only, where that cannot race.
final class ContextReference: @unchecked Sendable {
    // @unchecked Sendable: written in the context's init and deinit, read on the context's queue.
    // Saves: a `weak` reference per object would give the context a side table (every retain of it slow);
    // `unowned(unsafe)` also skips the unowned count and its check, and `@exclusivity(unchecked)` the access
    // check, on each object's read of its context (`load-batch-by-id`).
    @exclusivity(unchecked) unowned(unsafe) var context: ManagedObjectContext?
}
