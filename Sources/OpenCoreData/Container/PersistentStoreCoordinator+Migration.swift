import Foundation

/// Moving a store to another file and type, in Core Data's words.
extension PersistentStoreCoordinator {
    /// Copies every object of `store` into a new store of `type` at `url` (Core Data's
    /// `migratePersistentStore(_:to:options:type:)`), then takes `store` out of this coordinator and adds the
    /// new one in its place, which it returns. Into an SQLite file, an XML store or an in-memory store (`url`
    /// is then ignored), from any of those or a PostgreSQL store. Values kept outside rows (`_EXTERNAL_DATA`)
    /// go with their rows: into the new store's own folder, or into its rows for a type that keeps them
    /// there. The new file appears only once complete: a failure leaves nothing at `url` (and no new file in
    /// its folder), and `store` still in the coordinator.
    ///
    /// ```swift
    /// let xml = try coordinator.addPersistentStore(type: .xml, at: URL(fileURLWithPath: "Notes.xml"))
    /// try coordinator.migratePersistentStore(xml, to: URL(fileURLWithPath: "Notes.sqlite"), type: .sqlite)
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/storeNotInCoordinator(path:)`` when `store` is not one of this
    ///   coordinator's; ``ObjectGraphError/storeCopyRefused(source:destination:reason:)`` when a file is at
    ///   `url` already; ``XMLStoreError/unwritableValue(path:entity:key:reason:)`` for a value an XML store
    ///   cannot hold; ``StoreError`` when either store refuses
    ///   (``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)`` for a value whose file
    ///   cannot be read); `CocoaError` when the file cannot be written; what
    ///   ``addPersistentStore(type:at:options:)`` throws opening the new store (its file is removed then).
    @discardableResult
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: StoreOptions = StoreOptions(),
                                       type: StoreType) throws -> SQLiteStore {
        let source = try sourceForMigration(store)
        let migrated: SQLiteStore
        if type == .inMemory {
            migrated = try SQLiteStore(type: .inMemory, url: nil, model: managedObjectModel, options: options)
            try SQLiteStore.copyContents(of: source, model: managedObjectModel, into: migrated)
        } else {
            try SQLiteStore.copyContents(of: source, model: managedObjectModel, toNewStoreAt: url, type: type)
            do {
                migrated = try SQLiteStore(type: type, url: url, model: managedObjectModel, options: options)
            } catch {
                StoreFileCopy.removeStore(at: url)
                throw error
            }
        }
        try add(migrated)
        remove(store)
        return migrated
    }

    /// `store` as the source of a copy: one of this coordinator's stores, whatever its backend.
    ///
    /// - Throws: ``ObjectGraphError/storeNotInCoordinator(path:)`` when `store` is not one of this
    ///   coordinator's.
    package func sourceForMigration(_ store: PersistentStore) throws -> any StoreBackend {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw ObjectGraphError.storeNotInCoordinator(path: store.backend.displayPath)
        }
        return store.backend
    }
}
