import Foundation

/// Deletes every matching row straight in the store, keeping it consistent: join rows of many-to-many
/// relationships go, cascades reach related rows, foreign keys that pointed at deleted rows are nulled,
/// and a `deny` rule that would be broken refuses the whole request. (Core Data's batch delete does
/// only part of this; see the DocC article BatchRequests.md.)
///
/// ```swift
/// let request = BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item"))
/// request.resultType = .objectIDs
/// let result = try context.execute(request) as! BatchDeleteResult
/// ```
public final class BatchDeleteRequest: PersistentStoreRequest, @unchecked Sendable {
    // @unchecked Sendable: configured, then executed; not mutated during execution.

    /// Which rows, when made from a fetch request.
    public let fetchRequest: FetchRequest<ManagedObject>?
    /// Which rows, when made from IDs.
    public let objectIDs: [ManagedObjectID]?
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly
    /// The stores the request applies to (empty: every store of the coordinator).
    public var affectedStores: [PersistentStore] = []
    /// After execution: rows outside the delete whose foreign keys were nulled because they pointed at
    /// deleted rows (merge them as updated).
    public internal(set) var lastNullifiedObjectIDs: [ManagedObjectID] = []

    /// Deletes what a fetch request matches (its predicate and entity; sorting is ignored).
    public init(fetchRequest: FetchRequest<ManagedObject>) {
        self.fetchRequest = fetchRequest
        self.objectIDs = nil
    }

    /// Deletes these objects.
    public init(objectIDs: [ManagedObjectID]) {
        self.fetchRequest = nil
        self.objectIDs = objectIDs
    }
}
