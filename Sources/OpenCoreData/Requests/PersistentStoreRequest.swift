import Foundation

/// A request a context executes with ``ManagedObjectContext/execute(_:)``: fetches, asynchronous
/// fetches, batch updates, deletes and inserts.
public protocol PersistentStoreRequest: AnyObject, Sendable {
    /// The stores the request applies to (empty: every store of the coordinator).
    var affectedStores: [PersistentStore] { get set }
}

/// What ``ManagedObjectContext/execute(_:)`` returns; cast it to the request's result type.
public protocol PersistentStoreResult: AnyObject {}
