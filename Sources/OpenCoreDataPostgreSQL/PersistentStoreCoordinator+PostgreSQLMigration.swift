import Foundation
import OpenCoreData

extension PersistentStoreCoordinator {
    /// Copies every object of `store` (an SQLite, XML, in-memory or another PostgreSQL store) into a new PostgreSQL store at `url`
    /// (Core Data's `migratePersistentStore(_:to:options:type:)`), then takes `store` out of this coordinator
    /// and adds the PostgreSQL store in its place, which it returns. The destination's schema must be empty or
    /// hold a store of this model that has given out no keys; every row goes in with its key in one
    /// transaction, so a failure leaves the database as it was and `store` in the coordinator. Values an
    /// SQLite store keeps in `_EXTERNAL_DATA` go into their rows.
    ///
    /// ```swift
    /// let device = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: "Notes.sqlite"))
    /// try coordinator.migratePersistentStore(device, to: URL(string: "postgresql://app@db.internal/notes")!, type: .postgreSQL)
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/storeNotInCoordinator(path:)`` when `store` is not one of this
    ///   coordinator's; ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when the destination
    ///   is not new; what
    ///   ``addPersistentStore(type:at:options:)-(PostgreSQLStoreType,_,_)`` throws opening the destination;
    ///   ``StoreError`` when either store refuses (``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)``
    ///   for a value whose file cannot be read).
    @discardableResult
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: StoreOptions = StoreOptions(),
                                       type: PostgreSQLStoreType) throws -> PostgreSQLStore {
        let source = try sourceForMigration(store)
        let destination = try PostgreSQLStore(model: managedObjectModel, configuration: PostgreSQLStoreConfiguration(url: url.absoluteString),
                                              recordsHistory: options.persistentHistoryTracking, options: options)
        do {
            try StoreRowCopy.copy(from: source, into: destination, model: managedObjectModel)
            try add(destination)
        } catch {
            destination.close()
            throw error
        }
        remove(store)
        return destination
    }
}
