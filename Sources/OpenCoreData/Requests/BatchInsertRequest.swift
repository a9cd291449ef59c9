import Foundation

/// Inserts rows straight into the store from dictionaries, without making objects: primary keys are
/// reserved in one block, every row is checked (unknown keys, types, required attributes) before any is
/// written, and a failure inserts nothing.
///
/// ```swift
/// let rows: [[String: Any]] = (0..<1000).map { ["name": "Item \($0)", "createdAt": Date()] }
/// let request = BatchInsertRequest(entityName: "Item", objects: rows)
/// request.resultType = .count
/// let inserted = (try context.execute(request) as! BatchInsertResult).count
/// ```
///
/// Attributes only: relationships are not set by a batch insert (as in Core Data).
public final class BatchInsertRequest: PersistentStoreRequest, @unchecked Sendable {
    // @unchecked Sendable: configured, then executed; not mutated during execution.

    /// The entity of the new rows (not abstract).
    public var entityName: String
    /// The rows, as attribute name → value.
    public var objectsToInsert: [[String: Any]]?
    /// Called with an empty dictionary to fill until it returns `true` (stop).
    public var dictionaryHandler: ((inout [String: Any]) -> Bool)?
    /// Called with a scratch object to fill until it returns `true` (stop).
    public var managedObjectHandler: ((ManagedObject) -> Bool)?
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly
    /// The stores the request applies to (empty: every store of the coordinator).
    public var affectedStores: [PersistentStore] = []

    /// Inserts these rows.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objectsToInsert = objects
    }

    /// Inserts rows a handler produces, until it says stop.
    public init(entityName: String, dictionaryHandler: @escaping (inout [String: Any]) -> Bool) {
        self.entityName = entityName
        self.dictionaryHandler = dictionaryHandler
    }

    /// Inserts rows filled into scratch objects, until the handler says stop.
    public init(entityName: String, managedObjectHandler: @escaping (ManagedObject) -> Bool) {
        self.entityName = entityName
        self.managedObjectHandler = managedObjectHandler
    }
}
