import Foundation

// Passing a StagedMigrationManager to an open, under the option name Core Data uses.

extension StoreOptions.Key {
    /// `NSPersistentStoreStagedMigrationManagerOptionKey` (``StoreOptions/stagedMigrationManager``).
    public static let stagedMigrationManager = "NSPersistentStoreStagedMigrationManagerOptionKey"
}

extension StoreOptions {
    /// Sets the staged migration manager under the name Core Data's options dictionary uses
    /// (``Key/stagedMigrationManager``).
    ///
    /// - Throws: ``ObjectGraphError/invalidStoreOption(name:value:expected:)`` for any other name.
    public mutating func setOption(_ manager: StagedMigrationManager, forKey key: String) throws {
        guard key == Key.stagedMigrationManager else {
            throw ObjectGraphError.invalidStoreOption(name: key, value: "a staged migration manager",
                                                      expected: "another value (\(Key.stagedMigrationManager) takes one)")
        }
        stagedMigrationManager = manager
    }
}

extension PersistentStoreDescription {
    /// Sets the staged migration manager by the name Core Data uses
    /// (``StoreOptions/Key/stagedMigrationManager``), as `NSPersistentStoreDescription.setOption(_:forKey:)`.
    ///
    /// - Throws: ``ObjectGraphError/invalidStoreOption(name:value:expected:)`` for any other name.
    public func setOption(_ manager: StagedMigrationManager, forKey key: String) throws {
        try options.setOption(manager, forKey: key)
    }
}
