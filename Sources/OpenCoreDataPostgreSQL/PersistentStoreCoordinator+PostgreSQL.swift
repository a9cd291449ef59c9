import Foundation
import OpenCoreData

/// The kind of store ``PersistentStoreCoordinator/addPersistentStore(type:at:options:)-(PostgreSQLStoreType,_,_)``
/// opens from a `postgresql://` URL. A type of its own (not a case of `StoreType`): the core module's method
/// opens SQLite stores, and this module's opens PostgreSQL ones.
public enum PostgreSQLStoreType: Sendable, Hashable {
    /// A store in a PostgreSQL database (``PostgreSQLStore``).
    case postgreSQL
}

extension PersistentStoreCoordinator {
    /// Opens (creating its layout when the schema is empty) a PostgreSQL store for the coordinator's model
    /// and adds it: contexts of this coordinator then fetch from it and save to it as to an SQLite store.
    ///
    /// ```swift
    /// import OpenCoreDataPostgreSQL
    /// let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    /// try coordinator.addPersistentStore(type: .postgreSQL, at: URL(string: "postgresql://app@db.internal/shop")!)
    /// ```
    ///
    /// `options`: ``StoreOptions/persistentHistoryTracking`` records history (and announces each save on the
    /// change feed), ``StoreOptions/remoteChangeNotifications`` (with it) posts
    /// ``PersistentStoreCoordinator/remoteChangeNotification`` for other processes' saves and merges them into
    /// automatically merging contexts, ``StoreOptions/readOnly`` refuses saves. The URL's parameters are
    /// ``PostgreSQLStoreConfiguration``'s.
    ///
    /// - Throws: ``StoreError/invalidURL(_:reason:)`` for a URL that is not a PostgreSQL one; the
    ///   errors of ``PostgreSQLStore/init(model:configuration:recordsHistory:keyBlockSize:options:)``;
    ///   ``StoreError/connectionFailed(server:reason:)`` when the change feed cannot start.
    @discardableResult
    public func addPersistentStore(type: PostgreSQLStoreType, at url: URL,
                                   options: StoreOptions = StoreOptions()) throws -> PostgreSQLStore {
        try addPersistentStore(configuration: PostgreSQLStoreConfiguration(url: url.absoluteString), options: options)
    }

    /// Opens a PostgreSQL store from a configuration (for example
    /// ``PostgreSQLStoreConfiguration/fromEnvironment()``) and adds it, as
    /// ``addPersistentStore(type:at:options:)-(PostgreSQLStoreType,_,_)`` does.
    ///
    /// - Throws: as ``addPersistentStore(type:at:options:)-(PostgreSQLStoreType,_,_)``.
    @discardableResult
    public func addPersistentStore(configuration: PostgreSQLStoreConfiguration,
                                   options: StoreOptions = StoreOptions()) throws -> PostgreSQLStore {
        let store = try PostgreSQLStore(model: managedObjectModel, configuration: configuration,
                                        recordsHistory: options.persistentHistoryTracking, options: options)
        do {
            try add(store)
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// The open PostgreSQL stores, in the order they were added (``persistentStores`` lists them with the others).
    public var postgreSQLStores: [PostgreSQLStore] { storeBackends.compactMap { $0 as? PostgreSQLStore } }
}
