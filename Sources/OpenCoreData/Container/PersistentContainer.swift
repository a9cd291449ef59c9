import Foundation

/// The usual set-up in one object: a model, a coordinator, its stores, a main-queue view context, and
/// background contexts on demand.
///
/// ```swift
/// let container = PersistentContainer(name: "Todo", managedObjectModel: model)
/// container.persistentStoreDescriptions = [PersistentStoreDescription(url: URL(fileURLWithPath: "Todo.sqlite"))]
/// try container.loadPersistentStores()
/// let context = container.viewContext
/// ```
public final class PersistentContainer: @unchecked Sendable {
    // @unchecked Sendable: `persistentStoreDescriptions` is configured before loading; the rest is
    // immutable or Sendable itself.

    /// The container's name: the default store file is `<name>.sqlite` in ``defaultDirectoryURL()``.
    public let name: String
    /// The model.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The stores `loadPersistentStores` opens.
    public var persistentStoreDescriptions: [PersistentStoreDescription]
    /// The main-queue context for the user interface.
    public let viewContext: ManagedObjectContext

    /// Creates a container. The default description is a file `<name>.sqlite` in the default folder.
    public init(name: String, managedObjectModel: ManagedObjectModel) {
        self.name = name
        self.managedObjectModel = managedObjectModel
        self.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: managedObjectModel)
        self.persistentStoreDescriptions = [PersistentStoreDescription(
            url: Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite"))]
        self.viewContext = ManagedObjectContext(concurrencyType: .mainQueue)
        viewContext.persistentStoreCoordinator = persistentStoreCoordinator
        viewContext.name = "viewContext"
    }

    /// Creates a container for the Xcode data model named `name` in `bundle` (see
    /// ``ManagedObjectModel/init(named:in:subdirectory:)``), as `NSPersistentContainer(name:)` does; the
    /// default store is `<name>.sqlite` in ``defaultDirectoryURL()``. A missing or malformed model is a
    /// ``ModelError`` naming it and where it was looked for.
    ///
    /// ```swift
    /// let container = try PersistentContainer(name: "Todo", bundle: .module)
    /// try container.loadPersistentStores()
    /// ```
    ///
    /// - Throws: what ``ManagedObjectModel/init(named:in:subdirectory:)`` throws:
    ///   ``ModelError/modelNotFound(name:searched:)`` when no model of that name is found, another
    ///   ``ModelError`` when it is malformed.
    public convenience init(name: String, bundle: Bundle = .main, subdirectory: String? = nil) throws {
        self.init(name: name, managedObjectModel: try ManagedObjectModel(named: name, in: bundle, subdirectory: subdirectory))
    }

    /// Where store files go by default: `$OCD_STORE_DIRECTORY`, else the current directory.
    public class func defaultDirectoryURL() -> URL {
        if let path = ProcessInfo.processInfo.environment["OCD_STORE_DIRECTORY"] {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    }

    /// Opens every described store, calling `completion` once per store with nil or the error.
    public func loadPersistentStores(completionHandler completion: (PersistentStoreDescription, Error?) -> Void) {
        for description in persistentStoreDescriptions {
            do {
                try persistentStoreCoordinator.addPersistentStore(type: description.type, at: description.url,
                                                                  options: description.options)
                completion(description, nil)
            } catch {
                completion(description, error)
            }
        }
    }

    /// Opens every described store, throwing the first error.
    ///
    /// - Throws: the first error ``PersistentStoreCoordinator/addPersistentStore(type:at:options:)`` throws for
    ///   a description (``StoreError``, ``MigrationError``, ``ModelError``,
    ///   ``ObjectGraphError/missingStoreURL``); every description is tried, and the stores that open stay
    ///   open.
    public func loadPersistentStores() throws {
        var firstError: Error?
        loadPersistentStores { _, error in if firstError == nil { firstError = error } }
        if let firstError { throw firstError }
    }

    /// A new private-queue context on the coordinator.
    public func newBackgroundContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new private-queue context.
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new private-queue context and returns its result; like Core Data's, it throws
    /// only when `block` throws.
    ///
    /// - Throws: what `block` throws.
    public func performBackgroundTask<T, Failure: Error>(
        _ block: @escaping @Sendable (ManagedObjectContext) throws(Failure) -> sending T
    ) async throws(Failure) -> sending T {
        let context = newBackgroundContext()
        return try await context.perform { () throws(Failure) -> sending T in try block(context) }
    }
}
