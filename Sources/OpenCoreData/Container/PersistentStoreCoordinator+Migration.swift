import Foundation

/// Moving a store to another file and type, in Core Data's words.
extension PersistentStoreCoordinator {
    /// Copies every object of `store` into a new store of `type` at `url` (Core Data's
    /// `migratePersistentStore(_:to:options:type:)`), then takes `store` out of this coordinator and adds the
    /// new one in its place, which it returns. Between SQLite files, XML stores and in-memory stores (`url`
    /// is then ignored). The new file appears only once complete: a failure leaves nothing at `url`, and
    /// `store` still in the coordinator.
    ///
    /// ```swift
    /// let xml = try coordinator.addPersistentStore(type: .xml, at: URL(fileURLWithPath: "Notes.xml"))
    /// try coordinator.migratePersistentStore(xml, to: URL(fileURLWithPath: "Notes.sqlite"), type: .sqlite)
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/storeNotInCoordinator(path:)`` when `store` is not one of this
    ///   coordinator's; ``ObjectGraphError/unsupportedStoreType(name:operation:)`` when it is not kept in SQLite
    ///   (a PostgreSQL store); ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when a file is
    ///   at `url` already or the model keeps values outside rows (`_EXTERNAL_DATA`, not copied yet);
    ///   ``XMLStoreError/unwritableValue(path:entity:key:reason:)`` for a value an XML store cannot hold;
    ///   ``StoreError`` when SQLite refuses; `CocoaError` when the file cannot be written; what
    ///   ``addPersistentStore(type:at:options:)`` throws opening the new store (its file is removed then).
    @discardableResult
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: StoreOptions = StoreOptions(),
                                       type: StoreType) throws -> SQLiteStore {
        let source = try sourceForMigration(store)
        let migrated: SQLiteStore
        if type == .inMemory {
            migrated = try SQLiteStore(type: .inMemory, url: nil, model: managedObjectModel, options: options)
            try source.copyContents(into: migrated)
        } else {
            try source.copyContents(toNewStoreAt: url, type: type)
            do {
                migrated = try SQLiteStore(type: type, url: url, model: managedObjectModel, options: options)
            } catch {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
                throw error
            }
        }
        try add(migrated)
        remove(store)
        return migrated
    }

    /// `store` as the source of a copy: one of this coordinator's stores, kept in SQLite (a file, in memory,
    /// or an XML store's loaded objects).
    ///
    /// - Throws: ``ObjectGraphError/storeNotInCoordinator(path:)`` when `store` is not one of this
    ///   coordinator's; ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for a store of another kind
    ///   (copying out of a PostgreSQL store is not written yet).
    package func sourceForMigration(_ store: PersistentStore) throws -> SQLiteStore {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw ObjectGraphError.storeNotInCoordinator(path: store.backend.displayPath)
        }
        guard let source = store as? SQLiteStore else {
            throw ObjectGraphError.unsupportedStoreType(name: store.typeName, operation: "Copying a store")
        }
        return source
    }
}
