import Foundation
import OpenCoreData

/// The synced store and the engine's bookkeeping in it: the client's ID and server token (in the store's
/// sync tables), and how far local history has been pushed (a registered history reader, so that pruning
/// by anyone keeps what the server has not acknowledged).
struct SyncLocalStore: Sendable {
    /// The history reader's name: its mark is the last local transaction the server acknowledged.
    static let readerName = "OpenCoreDataSync"
    private static let clientIDKey = "clientID"
    private static let serverTokenKey = "serverToken"

    let container: PersistentContainer
    let store: SQLiteStore

    /// The container's one SQLite store.
    ///
    /// - Throws: ``SyncError/storeNotSyncable(reason:)`` when it has none, several, or one that is read-only
    ///   or keeps no history.
    init(container: PersistentContainer) throws {
        let stores = container.persistentStoreCoordinator.persistentStores
        guard stores.count == 1, let store = stores.first as? SQLiteStore, store.typeName == StoreType.sqlite.rawValue else {
            throw SyncError.storeNotSyncable(reason: "sync mirrors a container with exactly one SQLite store (it has \(stores.map(\.typeName)))")
        }
        guard !store.isReadOnly else { throw SyncError.storeNotSyncable(reason: "\(store.url?.path ?? "the store") is read-only") }
        guard store.options.persistentHistoryTracking else {
            throw SyncError.storeNotSyncable(reason: "persistent history tracking is off (StoreOptions.persistentHistoryTracking)")
        }
        self.container = container
        self.store = store
    }

    /// This replica's ID, made and kept the first time it is asked for.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read or written.
    func clientID() throws -> UUID {
        if let data = try store.syncState(Self.clientIDKey), let id = UUID(uuidString: String(decoding: data, as: UTF8.self)) {
            return id
        }
        let id = UUID()
        try store.writeSyncBookkeeping(records: [], state: [Self.clientIDKey: Data(id.uuidString.utf8)])
        return id
    }

    /// The server token pulled through (0 before the first pull).
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    func serverToken() throws -> Int64 {
        guard let data = try store.syncState(Self.serverTokenKey) else { return 0 }
        return Int64(String(decoding: data, as: UTF8.self)) ?? 0
    }

    /// Keeps `token` as the server token pulled through.
    ///
    /// - Throws: ``StoreError`` when the store cannot be written.
    func setServerToken(_ token: Int64) throws {
        try store.writeSyncBookkeeping(records: [], state: [Self.serverTokenKey: Data(String(token).utf8)])
    }

    /// The last local history transaction the server acknowledged (nil before the first push).
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    func pushedThrough() throws -> PersistentHistoryToken? {
        try container.persistentStoreCoordinator.persistentHistoryReaders()
            .first { $0.name == Self.readerName }?.seenThrough
    }

    /// Moves the pushed mark to `token`.
    ///
    /// - Throws: ``StoreError`` when the store cannot be written.
    func setPushedThrough(_ token: PersistentHistoryToken) throws {
        try container.persistentStoreCoordinator.registerPersistentHistoryReader(named: Self.readerName, seenThrough: token)
    }

    /// The object ID of (entity, primary key) in this store.
    func objectID(entity: String, primaryKey: Int64) -> ManagedObjectID? {
        var components = URLComponents()
        components.scheme = "x-coredata"
        components.host = store.identifier
        components.path = "/\(entity)/p\(primaryKey)"
        return components.url.flatMap { container.persistentStoreCoordinator.managedObjectID(forURIRepresentation: $0) }
    }
}
