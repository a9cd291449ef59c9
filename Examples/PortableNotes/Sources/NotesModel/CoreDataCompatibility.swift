// The one file that differs between Core Data and OpenCoreData: the rest of the model layer is Core Data
// code and builds against either. Copy it into a project and add the names that project uses
// (the DocC article PortingFromCoreData.md lists the differences it cannot hide).
import Foundation

#if canImport(CoreData)
@_exported import CoreData

/// OpenCoreData's `@Managed("key")` on Apple's systems: the property reads and writes the managed
/// object's value for `key`, with Core Data's change notifications, as an `@NSManaged` property does.
@propertyWrapper
public struct Managed<Value> {
    let key: String

    public init(_ key: String) { self.key = key }

    @available(*, unavailable, message: "@Managed works only on NSManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<Object: NSManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            let key = object[keyPath: storageKeyPath].key
            object.willAccessValue(forKey: key)
            defer { object.didAccessValue(forKey: key) }
            return object.primitiveValue(forKey: key) as! Value
        }
        set {
            let key = object[keyPath: storageKeyPath].key
            object.willChangeValue(forKey: key)
            defer { object.didChangeValue(forKey: key) }
            object.setPrimitiveValue(newValue, forKey: key)
        }
    }
}

extension NSManagedObjectModel {
    /// The compiled model `name.momd` in `bundle`.
    static func named(_ name: String, in bundle: Bundle) throws -> NSManagedObjectModel {
        guard let url = bundle.url(forResource: name, withExtension: "momd"),
              let model = NSManagedObjectModel(contentsOf: url) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name).momd"])
        }
        return model
    }

    /// The version `version` of the compiled model `name.momd` in `bundle`.
    static func version(_ version: String, ofModel name: String, in bundle: Bundle) throws -> NSManagedObjectModel {
        guard let url = bundle.url(forResource: version, withExtension: "mom", subdirectory: "\(name).momd"),
              let model = NSManagedObjectModel(contentsOf: url) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name).momd/\(version).mom"])
        }
        return model
    }
}
#else
@_exported import OpenCoreData

public typealias NSManagedObject = ManagedObject
public typealias NSManagedObjectID = ManagedObjectID
public typealias NSManagedObjectContext = ManagedObjectContext
public typealias NSManagedObjectModel = ManagedObjectModel
public typealias NSPersistentContainer = PersistentContainer
public typealias NSPersistentStoreDescription = PersistentStoreDescription
public typealias NSFetchRequest<ResultType> = FetchRequest<ResultType>
public typealias NSFetchedResultsController<ResultType: ManagedObject> = FetchedResultsController<ResultType>
public typealias NSPredicate = QueryPredicate
public typealias NSSortDescriptor = QuerySortDescriptor
public typealias NSExpression = QueryExpression
public typealias NSPersistentStoreCoordinator = PersistentStoreCoordinator
public typealias NSMigrationManager = MigrationManager
public typealias NSMappingModel = MappingModel
public typealias NSEntityMigrationPolicy = EntityMigrationPolicy
public typealias NSEntityMapping = EntityMapping
public let NSSQLiteStoreType = SQLiteStoreType
public let NSSQLitePragmasOption = SQLitePragmasOption

extension Notification.Name {
    public static let NSManagedObjectContextObjectsDidChange = ManagedObjectContext.didChangeObjectsNotification
    public static let NSManagedObjectContextDidSave = ManagedObjectContext.didSaveObjectsNotification
    public static let NSManagedObjectContextDidSaveObjectIDs = ManagedObjectContext.didSaveObjectIDsNotification
}

extension NSManagedObjectModel {
    /// The model source `name.xcdatamodeld` in `bundle`.
    static func named(_ name: String, in bundle: Bundle) throws -> NSManagedObjectModel {
        try ManagedObjectModel(named: name, in: bundle)
    }

    /// The version `version` of the model source `name.xcdatamodeld` in `bundle`.
    static func version(_ version: String, ofModel name: String, in bundle: Bundle) throws -> NSManagedObjectModel {
        let current = try ManagedObjectModel(named: name, in: bundle)
        guard let folder = current.versionBundleURL else { return current }
        return try ManagedObjectModel(contentsOf: folder, version: version)
    }
}
#endif
