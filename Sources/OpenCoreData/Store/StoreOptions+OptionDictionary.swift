import Foundation

/// Core Data's `NSSQLiteStoreType`: a store in an SQLite file (``StoreType/sqlite``).
public let SQLiteStoreType = StoreType.sqlite.rawValue
/// Core Data's `NSInMemoryStoreType`: a store in memory (``StoreType/inMemory``).
public let InMemoryStoreType = StoreType.inMemory.rawValue
/// Core Data's `NSXMLStoreType`: an XML store file, loaded whole and written whole (``StoreType/xml``).
public let XMLStoreType = StoreType.xml.rawValue
/// Core Data's `NSSQLitePragmasOption`: a dictionary of SQLite pragmas (``StoreOptions/init(optionDictionary:)``
/// reads `journal_mode`).
public let SQLitePragmasOption = "NSSQLitePragmasOption"
/// Core Data's `NSReadOnlyPersistentStoreOption` (``StoreOptions/readOnly``).
public let ReadOnlyPersistentStoreOption = StoreOptions.Key.readOnly
/// Core Data's `NSMigratePersistentStoresAutomaticallyOption` (``StoreOptions/migratesStoreAutomatically``).
public let MigratePersistentStoresAutomaticallyOption = StoreOptions.Key.migratePersistentStoresAutomatically
/// Core Data's `NSInferMappingModelAutomaticallyOption` (``StoreOptions/infersMappingModelAutomatically``).
public let InferMappingModelAutomaticallyOption = StoreOptions.Key.inferMappingModelAutomatically
/// Core Data's `NSPersistentHistoryTrackingKey` (``StoreOptions/persistentHistoryTracking``).
public let PersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// Core Data's `NSPersistentStoreRemoteChangeNotificationPostOptionKey` (``StoreOptions/remoteChangeNotifications``).
public let PersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"

extension StoreType {
    /// The store type Core Data's name gives (`NSSQLiteStoreType`: "SQLite", `NSInMemoryStoreType`: "InMemory",
    /// `NSXMLStoreType`: "XML").
    ///
    /// - Throws: ``ObjectGraphError/unsupportedStoreType(name:operation:)`` naming any other type (Core Data's
    ///   binary store is not supported).
    init(coreDataName name: String) throws {
        guard let type = StoreType(rawValue: name) else {
            throw ObjectGraphError.unsupportedStoreType(name: name, operation: nil)
        }
        self = type
    }
}

extension StoreOptions {
    /// The options Core Data's option dictionary gives (`addPersistentStore(ofType:configurationName:at:options:)`):
    /// `NSReadOnlyPersistentStoreOption`, `NSMigratePersistentStoresAutomaticallyOption`,
    /// `NSInferMappingModelAutomaticallyOption`, `NSPersistentHistoryTrackingKey`,
    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey` (booleans or numbers), and
    /// `NSSQLitePragmasOption` with `journal_mode`: `DELETE`, `TRUNCATE` or `PERSIST` (what apps set to move
    /// a store's write-ahead log into its file before migrating it) checkpoints the log into the file before
    /// the store opens (``checkpointsWriteAheadLogOnOpen``; a writable store is then used in WAL mode again);
    /// `WAL` changes nothing. Other options take their defaults.
    ///
    /// - Throws: ``ObjectGraphError/unknownStoreOption(name:)`` naming an option that is not read, or
    ///   ``ObjectGraphError/invalidStoreOption(name:value:expected:)`` naming an option whose value (or pragma)
    ///   is not read: an option an app relies on is never ignored silently.
    public init(optionDictionary: [AnyHashable: Any]?) throws {
        self.init()
        for (key, value) in optionDictionary ?? [:] {
            guard let name = key as? String else {
                throw ObjectGraphError.unknownStoreOption(name: "\(key)")
            }
            func flag() throws -> Bool {
                switch value {
                case let bool as Bool: return bool
                case let number as NSNumber: return number.boolValue
                default: throw ObjectGraphError.invalidStoreOption(name: name, value: "\(type(of: value))", expected: "a boolean")
                }
            }
            switch name {
            case ReadOnlyPersistentStoreOption: readOnly = try flag()
            case MigratePersistentStoresAutomaticallyOption: migratesStoreAutomatically = try flag()
            case InferMappingModelAutomaticallyOption: infersMappingModelAutomatically = try flag()
            case PersistentHistoryTrackingKey: persistentHistoryTracking = try flag()
            case PersistentStoreRemoteChangeNotificationPostOptionKey: remoteChangeNotifications = try flag()
            case SQLitePragmasOption:
                guard let pragmas = value as? [String: Any] else {
                    throw ObjectGraphError.invalidStoreOption(name: name, value: "\(type(of: value))",
                                                             expected: "a dictionary of pragma names")
                }
                for (pragma, setting) in pragmas {
                    guard pragma.lowercased() == "journal_mode" else {
                        throw ObjectGraphError.invalidStoreOption(name: name, value: "the pragma '\(pragma)'",
                                                                 expected: "journal_mode only")
                    }
                    switch "\(setting)".uppercased() {
                    case "DELETE", "TRUNCATE", "PERSIST": checkpointsWriteAheadLogOnOpen = true
                    case "WAL": checkpointsWriteAheadLogOnOpen = false
                    default:
                        throw ObjectGraphError.invalidStoreOption(name: "\(name) journal_mode", value: "'\(setting)'",
                                                                 expected: "DELETE, TRUNCATE, PERSIST or WAL")
                    }
                }
            default:
                throw ObjectGraphError.unknownStoreOption(name: name)
            }
        }
    }
}
