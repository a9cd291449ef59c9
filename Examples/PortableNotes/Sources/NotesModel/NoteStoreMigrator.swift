import Foundation

/// Brings a notes store written by an earlier version of the model to the current one, a version at a time:
/// Core Data code that builds against Core Data and OpenCoreData alike (a progressive migrator, as apps
/// write when lightweight migration is not enough). Each step goes through the app's mapping model where it
/// ships one, else the inferred one, into a new file; the last file then replaces the store.
public struct NoteStoreMigrator {
    public enum MigrationError: Error {
        /// No version of the model wrote the store.
        case unknownVersion
    }

    /// The model's versions, oldest first; the last is the current one.
    public let versions: [String]
    let bundle: Bundle

    /// A migrator over `versions` of the model this package ships.
    public init(versions: [String] = ["Notes"]) {
        self.versions = versions
        self.bundle = .module
    }

    /// Whether the store at `storeURL` was written by a version before the current one.
    ///
    /// - Throws: when the store's metadata cannot be read or no version wrote it.
    public func requiresMigration(at storeURL: URL) throws -> Bool {
        guard FileManager.default.fileExists(atPath: storeURL.path) else { return false }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: storeURL, options: nil)
        return try version(compatibleWith: metadata) != versions.last
    }

    /// Migrates the store at `storeURL` to the current version.
    ///
    /// - Throws: when a step's migration, or replacing the store, fails; the store is then as it was.
    public func migrateStore(at storeURL: URL) throws {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: storeURL, options: nil)
        var version = try version(compatibleWith: metadata)
        try checkpointWriteAheadLog(ofStoreAt: storeURL, model: try model(version))
        var currentURL = storeURL
        while let index = versions.firstIndex(of: version), index + 1 < versions.count {
            let sourceModel = try model(version)
            let destinationModel = try model(versions[index + 1])
            let mappingModel = try NSMappingModel(from: [bundle], forSourceModel: sourceModel, destinationModel: destinationModel)
                ?? NSMappingModel.inferredMappingModel(forSourceModel: sourceModel, destinationModel: destinationModel)
            let manager = NSMigrationManager(sourceModel: sourceModel, destinationModel: destinationModel)
            let destinationURL = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
            try manager.migrateStore(from: currentURL, sourceType: NSSQLiteStoreType, options: nil, with: mappingModel,
                                     toDestinationURL: destinationURL, destinationType: NSSQLiteStoreType, destinationOptions: nil)
            if currentURL != storeURL { try destroyStore(at: currentURL) }
            currentURL = destinationURL
            version = versions[index + 1]
        }
        guard currentURL != storeURL else { return }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: NSManagedObjectModel())
        try coordinator.replacePersistentStore(at: storeURL, destinationOptions: nil, withPersistentStoreFrom: currentURL,
                                               sourceOptions: nil, ofType: NSSQLiteStoreType)
        try destroyStore(at: currentURL)
    }

    private func model(_ version: String) throws -> NSManagedObjectModel {
        try NSManagedObjectModel.version(version, ofModel: "Notes", in: bundle)
    }

    private func version(compatibleWith metadata: [String: Any]) throws -> String {
        for version in versions where try model(version).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
            return version
        }
        throw MigrationError.unknownVersion
    }

    /// Moves the store's `-wal` into its file, so that the migration reads the file alone.
    private func checkpointWriteAheadLog(ofStoreAt storeURL: URL, model: NSManagedObjectModel) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL,
                                                       options: [NSSQLitePragmasOption: ["journal_mode": "DELETE"]])
        try coordinator.remove(store)
    }

    private func destroyStore(at storeURL: URL) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: NSManagedObjectModel())
        try coordinator.destroyPersistentStore(at: storeURL, ofType: NSSQLiteStoreType, options: nil)
    }
}
