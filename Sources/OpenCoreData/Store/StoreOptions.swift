import Foundation

/// Options for opening a store.
public struct StoreOptions: Sendable, Hashable {
    /// Open without writing anything: no journal-mode switch, no metadata rewrite, no saves.
    public var readOnly = false
    /// How long a save waits for another connection's write lock before failing with `StoreError.busy`.
    public var busyTimeout: TimeInterval = 5
    /// How many rows the coordinator's row cache keeps for other contexts to pick up.
    public var rowCacheCapacity = 100_000
    /// When the store's version hashes differ from the model's but the tables and columns are exactly
    /// what the model implies (only optionality, delete rules or the like changed), rewrite the hashes
    /// instead of refusing a writable open: the simplest lightweight migration.
    public var updatesMetadataWhenSchemaMatches = false
    /// Existing files up to this size (bytes) get SQLite's `PRAGMA quick_check` before they are opened, so a
    /// file damaged inside its pages is refused before anything writes to it (opening a WAL pool writes). It
    /// reads every page: about a millisecond per megabyte when cached. 0 turns it off.
    public var integrityCheckLimit = 64 << 20
    /// Record every commit (saves, batch requests) in the store's persistent history, in Core Data's history
    /// tables, in the same transaction as the data (Core Data's `NSPersistentHistoryTrackingKey`).
    /// Read it with ``PersistentHistoryChangeRequest``.
    public var persistentHistoryTracking = false
    /// Watch the file for commits by other processes and coordinators and post
    /// ``PersistentStoreCoordinator/remoteChangeNotification`` for each (Core Data's
    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`). With history tracking on, the
    /// notification carries the newest history token and the coordinator's automatically merging contexts
    /// receive the changes.
    public var remoteChangeNotifications = false
    /// Write to a store that holds triggers, views or tables that neither this library nor Core Data's
    /// layout made. Such objects act on the library's writes: a trigger can drop or delete rows while a
    /// save reports success, remove `Z_METADATA`, or copy data into a table of its own. Off by default: a
    /// writable open of such a store throws ``StoreError/foreignSchemaObjects(path:objects:)``; read-only
    /// opens are unaffected.
    public var allowsForeignSchemaObjects = false
    /// Core Data's `NSMigratePersistentStoresAutomaticallyOption`: when the model came from a
    /// `.xcdatamodeld` bundle and another version of it wrote the store, migrate the store on open
    /// (docs/MIGRATION.md). Off, such an open fails with ``MigrationError/migrationNeeded(path:storeVersion:modelVersion:reason:)``.
    public var migratesStoreAutomatically = true
    /// Core Data's `NSInferMappingModelAutomaticallyOption`: infer the mapping between versions. Off, a
    /// store that needs migrating is refused unless a mapping model covers it.
    public var infersMappingModelAutomatically = true
    /// Core Data's `NSPersistentStoreStagedMigrationManagerOptionKey`: the stages (and their code) a store
    /// written by an earlier version of the bundle is migrated through on open (docs/MIGRATION.md).
    public var stagedMigrationManager: StagedMigrationManager?
    /// Before opening, move the store's write-ahead log (`-wal`) into its file (a full checkpoint), as Core
    /// Data does for `NSSQLitePragmasOption` `journal_mode = DELETE`: the file alone then holds every
    /// commit. Ignored for a read-only open, which writes nothing.
    public var checkpointsWriteAheadLogOnOpen = false
    /// Mapping models to migrate with on open, before those found beside the model's bundle: the one whose
    /// ``MappingModel/sourceModelVersionName`` is the store's version and whose
    /// ``MappingModel/destinationModelVersionName`` is the model's is used, or a compiled one (`.cdm`) whose
    /// entity version hashes fit both versions (docs/MIGRATION.md).
    public var mappingModels: [MappingModel] = []
    /// The `_EXTERNAL_DATA` folder of the values kept outside their rows; nil for the one next to the file.
    /// A migration working on a copy of a store sets the original's, where the values are and must stay.
    package var externalDataDirectory: URL?

    /// Options with each setting as its property documents it (the defaults: writable, a 5-second busy timeout,
    /// no history, automatic inferred migration).
    public init(readOnly: Bool = false, busyTimeout: TimeInterval = 5, rowCacheCapacity: Int = 100_000,
                updatesMetadataWhenSchemaMatches: Bool = false, integrityCheckLimit: Int = 64 << 20,
                persistentHistoryTracking: Bool = false, remoteChangeNotifications: Bool = false,
                allowsForeignSchemaObjects: Bool = false,
                migratesStoreAutomatically: Bool = true, infersMappingModelAutomatically: Bool = true) {
        self.readOnly = readOnly
        self.busyTimeout = busyTimeout
        self.rowCacheCapacity = rowCacheCapacity
        self.updatesMetadataWhenSchemaMatches = updatesMetadataWhenSchemaMatches
        self.integrityCheckLimit = integrityCheckLimit
        self.persistentHistoryTracking = persistentHistoryTracking
        self.remoteChangeNotifications = remoteChangeNotifications
        self.allowsForeignSchemaObjects = allowsForeignSchemaObjects
        self.migratesStoreAutomatically = migratesStoreAutomatically
        self.infersMappingModelAutomatically = infersMappingModelAutomatically
    }

    /// The option names Core Data's options dictionary uses for the migration flags.
    public enum Key {
        /// `NSMigratePersistentStoresAutomaticallyOption` (``StoreOptions/migratesStoreAutomatically``).
        public static let migratePersistentStoresAutomatically = "NSMigratePersistentStoresAutomaticallyOption"
        /// `NSInferMappingModelAutomaticallyOption` (``StoreOptions/infersMappingModelAutomatically``).
        public static let inferMappingModelAutomatically = "NSInferMappingModelAutomaticallyOption"
        /// `NSReadOnlyPersistentStoreOption` (``StoreOptions/readOnly``).
        public static let readOnly = "NSReadOnlyPersistentStoreOption"
    }

    /// Sets the flag Core Data's options dictionary calls `key` (see ``Key``).
    ///
    /// - Throws: ``ObjectGraphError/unknownStoreOption(name:)`` for a name that is not one of ``Key``'s.
    public mutating func setOption(_ value: Bool, forKey key: String) throws {
        switch key {
        case Key.migratePersistentStoresAutomatically: migratesStoreAutomatically = value
        case Key.inferMappingModelAutomatically: infersMappingModelAutomatically = value
        case Key.readOnly: readOnly = value
        default: throw ObjectGraphError.unknownStoreOption(name: key)
        }
    }
}
