import Foundation

extension PersistentStoreCoordinator {
    /// Opens a store as Core Data's `addPersistentStore(ofType:configurationName:at:options:)` does: the
    /// type by Core Data's name (``SQLiteStoreType``, ``InMemoryStoreType``), the options as Core Data's
    /// dictionary (``StoreOptions/init(optionDictionary:)``: read-only, automatic migration and inference,
    /// history tracking, remote change notifications, `NSSQLitePragmasOption`'s `journal_mode`). The typed
    /// form is ``addPersistentStore(type:at:options:)``.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for another store type;
    ///   ``ObjectGraphError/unknownConfiguration(_:)`` for a configuration name other than nil or `"Default"`
    ///   (a model here has one configuration); what ``StoreOptions/init(optionDictionary:)`` throws for an
    ///   option that is not read;
    ///   and what ``addPersistentStore(type:at:options:)`` throws.
    @discardableResult
    public func addPersistentStore(ofType storeType: String, configurationName: String?, at url: URL?,
                                   options: [AnyHashable: Any]? = nil) throws -> SQLiteStore {
        guard configurationName == nil || configurationName == "Default" else {
            throw ObjectGraphError.unknownConfiguration(configurationName ?? "")
        }
        return try addPersistentStore(type: try StoreType(coreDataName: storeType), at: url,
                                      options: try StoreOptions(optionDictionary: options))
    }

    /// Moves a store to a new file of another type as Core Data's `migratePersistentStore(_:to:options:withType:)`
    /// does: the type by Core Data's name, the options as Core Data's dictionary. The typed form is
    /// ``migratePersistentStore(_:to:options:type:)``.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedStoreType(name:operation:)`` for another store type,
    ///   ``ObjectGraphError/unknownStoreOption(name:)`` or ``ObjectGraphError/invalidStoreOption(name:value:expected:)``
    ///   for an option that is not read;
    ///   and what ``migratePersistentStore(_:to:options:type:)`` throws.
    @discardableResult
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
                                       withType storeType: String) throws -> SQLiteStore {
        try migratePersistentStore(store, to: url, options: try StoreOptions(optionDictionary: options),
                                   type: try StoreType(coreDataName: storeType))
    }
}
