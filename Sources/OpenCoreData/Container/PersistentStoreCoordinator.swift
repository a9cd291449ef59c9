import Foundation
import Synchronization

/// Connects contexts to stores: opens stores for a model, hands out rows, and writes saves.
///
/// ```swift
/// let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: "Todo.sqlite"))
/// let context = ManagedObjectContext(concurrencyType: .mainQueue)
/// context.persistentStoreCoordinator = coordinator
/// ```
public final class PersistentStoreCoordinator: @unchecked Sendable {
    // @unchecked Sendable: `stores` and `automaticMergeContexts` are guarded by `lock`; the model is
    // immutable; the row cache is thread-safe; each store serializes its own database access.

    /// The model every store of this coordinator follows.
    public let managedObjectModel: ManagedObjectModel
    private let lock = NSLock()
    /// Every open store, SQLite or another kind (``StoreBackend``), in the order they were added.
    private var stores: [any StoreBackend] = []
    private var automaticMergeContexts: [ObjectIdentifier: WeakContext] = [:]
    private(set) var rowCache = RowCache(capacity: 100_000)
    /// Watchers of stores opened with remote-change notifications.
    let remoteChangeState = RemoteChangeState()

    private struct WeakContext { weak var context: ManagedObjectContext? }

    /// Creates a coordinator for a model. The model is in use from now on: its fetch request templates can
    /// no longer change (``ManagedObjectModel/setFetchRequestTemplate(_:forName:)``).
    public init(managedObjectModel: ManagedObjectModel) {
        self.managedObjectModel = managedObjectModel
        managedObjectModel.markInUse()
    }

    /// The open stores of every kind (SQLite, in-memory, PostgreSQL), in the order they were added.
    public var persistentStores: [PersistentStore] { lock.withLock { stores.compactMap { $0 as? PersistentStore } } }

    /// How many stores are open.
    public var persistentStoreCount: Int { lock.withLock { stores.count } }

    /// Every open store, of every kind, in the order they were added.
    package var storeBackends: [any StoreBackend] { lock.withLock { stores } }

    /// Opens (creating if needed) a store. An XML store (``StoreType/xml``) loads every object of its file
    /// now and writes the whole file at each save. A file store that was written with another model, or that is
    /// not a store at all, is refused with a ``StoreError`` and left as it was.
    ///
    /// - Throws: ``ObjectGraphError/missingStoreURL`` for an SQLite or XML store without a URL;
    ///   ``XMLStoreError`` for an XML file that is not a Core Data XML store or does not fit the model (naming
    ///   the line, object and key);
    ///   ``StoreError/notAStore(path:reason:)`` for a file that is not SQLite, or missing when opened
    ///   read-only; ``StoreError/incompatibleModel(path:differences:)`` for a store written with another model;
    ///   ``StoreError/corrupt(path:reason:)`` for a damaged one;
    ///   ``StoreError/foreignSchemaObjects(path:objects:)`` for a writable open of a store holding triggers,
    ///   views or tables that neither this library nor Core Data's layout made; ``StoreError/busy(path:)``,
    ///   ``StoreError/readOnly(path:)`` or ``StoreError/sqlite(code:message:sql:)`` when SQLite refuses;
    ///   ``MigrationError`` when the store needs migrating from another version of the model's bundle and the
    ///   options forbid it or the migration is refused (the file is left as it was); ``ModelError`` when that
    ///   version cannot be loaded.
    @discardableResult
    public func addPersistentStore(type: StoreType, at url: URL? = nil,
                                   options: StoreOptions = StoreOptions()) throws -> SQLiteStore {
        if type != .inMemory && url == nil {
            throw ObjectGraphError.missingStoreURL
        }
        if type == .sqlite, options.checkpointsWriteAheadLogOnOpen, !options.readOnly, let url {
            try WriteAheadLogCheckpoint.run(onStoreAt: url.path, busyTimeout: options.busyTimeout)
        }
        let store = try SQLiteStore(type: type, url: url, model: managedObjectModel, options: options)
        try add(store)
        return store
    }

    /// Adds a store opened elsewhere (a PostgreSQL store, by its module), and starts watching it for
    /// commits made elsewhere when its options ask for that.
    ///
    /// - Throws: ``ObjectGraphError/storeModelMismatch(path:)`` when the store was opened with another model;
    ///   the errors of starting the watch (the store is not added then).
    package func add(_ store: any StoreBackend) throws {
        guard store.schema.tables.map(\.name) == managedObjectModel.schema.tables.map(\.name) else {
            throw ObjectGraphError.storeModelMismatch(path: store.displayPath)
        }
        lock.withLock {
            stores.append(store)
            if stores.count == 1 { rowCache = RowCache(capacity: store.options.rowCacheCapacity) }
        }
        do {
            try startWatching(store)
        } catch {
            lock.withLock { stores.removeAll { $0 === store } }
            throw error
        }
    }

    /// Takes a store of any kind out of the coordinator, stopping its watch for commits made elsewhere; a
    /// store that holds connections of its own (PostgreSQL's pool) closes them.
    public func remove(_ store: PersistentStore) {
        let backend = store.backend
        removeBackend(backend)
        backend.didLeaveCoordinator()
    }

    /// Takes a store out of the coordinator (its watch stopped); the store itself stays open.
    package func removeBackend(_ store: any StoreBackend) {
        remoteChangeState.remove(store)
        lock.withLock { stores.removeAll { $0 === store } }
        rowCache.removeAll()
    }

    deinit {
        remoteChangeState.removeAll()
    }

    /// The store that objects are read from and saved to.
    func primaryBackend() throws -> any StoreBackend {
        guard let store = lock.withLock({ stores.first }) else { throw ObjectGraphError.noPersistentStore }
        return store
    }

    /// The store that objects are read from and saved to, as the SQLite store (for SQLite-only code and tests).
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore`` without a store;
    ///   ``ObjectGraphError/unsupportedStoreType(name:operation:)`` when it is a store of another kind.
    func primaryStore() throws -> SQLiteStore {
        let store = try primaryBackend()
        guard let sqlite = store as? SQLiteStore else {
            throw ObjectGraphError.unsupportedStoreType(name: "\(type(of: store)) at \(store.displayPath)",
                                                       operation: "Reading the store's SQLite file directly")
        }
        return sqlite
    }

    /// The ID for a URI from ``ManagedObjectID/uriRepresentation()``, if it names an object of this
    /// coordinator's stores.
    public func managedObjectID(forURIRepresentation uri: URL) -> ManagedObjectID? {
        guard uri.scheme == "x-coredata", let host = uri.host else { return nil }
        let parts = uri.path.split(separator: "/")
        guard parts.count == 2, let entity = managedObjectModel.entitiesByName[String(parts[0])],
              parts[1].first == "p", let key = Int64(parts[1].dropFirst()), key > 0 else { return nil }
        guard let store = storeBackends.first(where: { $0.identifier.caseInsensitiveCompare(host) == .orderedSame })
        else { return nil }
        return ManagedObjectID(entity: entity, primaryKey: key, store: store.identity)
    }

    // MARK: Automatic merges

    func registerAutomaticMerge(_ context: ManagedObjectContext) {
        lock.withLock { automaticMergeContexts[ObjectIdentifier(context)] = WeakContext(context: context) }
    }

    func unregisterAutomaticMerge(_ context: ManagedObjectContext) {
        lock.withLock { _ = automaticMergeContexts.removeValue(forKey: ObjectIdentifier(context)) }
    }

    /// Tells every context that merges automatically about a save made by `source` (nil: a batch request).
    func broadcast(_ changes: ContextDidSave, from source: ManagedObjectContext?) {
        let targets = lock.withLock { automaticMergeContexts.values.compactMap(\.context) }
        for context in targets where context !== source && context.parent == nil {
            context.perform { context.mergeChanges(fromContextDidSave: changes) }
        }
    }
}

extension PersistentStoreCoordinator {
    /// Rows by ID, from the store.
    func rows(for ids: [ManagedObjectID]) throws -> [RowValues] {
        try primaryBackend().rows(for: ids)
    }

    /// The IDs a to-many relationship of one object holds in the store.
    func relatedIDs(of id: ManagedObjectID, relationship: RelationshipDescription,
                    storage: StoreSchema.PropertyStorage) throws -> [ManagedObjectID] {
        try primaryBackend().relatedIDs(of: id, relationship: relationship, storage: storage)
    }
}
