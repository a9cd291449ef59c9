import Foundation

/// What a batch request returns.
public enum BatchResultType: Sendable, Hashable {
    /// Only whether it succeeded (`true`).
    case statusOnly
    /// The number of rows affected.
    case count
    /// The IDs of the rows affected, to merge into live contexts.
    case objectIDs
}

/// Changes attributes of every matching row straight in the store: one SQL `UPDATE`, no objects loaded
/// (seed 003). Live contexts learn of it only when you merge the result's IDs into them.
///
/// ```swift
/// let request = BatchUpdateRequest(entityName: "Item")
/// request.predicate = try QueryPredicate(format: "done == NO")
/// request.propertiesToUpdate = ["done": true]
/// request.resultType = .objectIDs
/// let result = try context.execute(request) as! BatchUpdateResult
/// ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextDidSave(updated: Set(result.objectIDs)),
///                                   into: [container.viewContext])
/// ```
///
/// Checked before any row changes: unknown keys, relationship keys, and values whose type cannot fit
/// the attribute. Not checked (as in Core Data): validation rules, inverse relationships. New values that
/// would give two objects the same uniqueness-constraint values refuse the whole update with
/// ``ObjectGraphError/validationFailed(_:)`` (rule `uniquenessViolation`, naming the entity and the keys).
public final class BatchUpdateRequest: PersistentStoreRequest, @unchecked Sendable {
    // @unchecked Sendable: configured, then executed; not mutated during execution.

    /// The entity whose rows change.
    public var entityName: String
    /// Which rows: nil for all.
    public var predicate: QueryPredicate?
    /// Attribute name → new value: a constant, or a `QueryExpression` (`count + 1`, `price * 1.1`).
    public var propertiesToUpdate: [String: Any] = [:]
    /// Whether rows of sub-entities change too.
    public var includesSubentities = true
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly
    /// The stores the request applies to (empty: every store of the coordinator).
    public var affectedStores: [PersistentStore] = []

    /// An update of every row of `entityName` (set ``predicate`` to choose rows, ``propertiesToUpdate`` for the
    /// new values).
    public init(entityName: String) { self.entityName = entityName }
}

/// The result of a batch update, delete or insert.
public final class BatchResult: PersistentStoreResult, @unchecked Sendable {
    // @unchecked Sendable: immutable; `result` holds a Bool, an Int or [ManagedObjectID].

    /// What was asked for.
    public let resultType: BatchResultType
    /// `true`, the count, or the `[ManagedObjectID]`, per ``resultType``.
    public let result: Any
    /// The number of rows affected (always known).
    public let count: Int
    /// The affected IDs (empty unless ``resultType`` is `.objectIDs`).
    public let objectIDs: [ManagedObjectID]

    init(resultType: BatchResultType, count: Int, objectIDs: [ManagedObjectID]) {
        self.resultType = resultType
        self.count = count
        self.objectIDs = objectIDs
        switch resultType {
        case .statusOnly: result = true
        case .count: result = count
        case .objectIDs: result = objectIDs
        }
    }
}

/// Core Data's name for a batch update's result.
public typealias BatchUpdateResult = BatchResult
/// Core Data's name for a batch delete's result.
public typealias BatchDeleteResult = BatchResult
/// Core Data's name for a batch insert's result.
public typealias BatchInsertResult = BatchResult
