import Foundation

/// A uniqueness-constraint conflict found at save (Core Data's `NSConstraintConflict`): objects of this
/// save that share the values of one of their entity's `uniquenessConstraints` with each other or with a
/// row already in the store.
///
/// It holds the context's objects, as Core Data's does: read them on that context's queue only, like any
/// of its objects.
public struct ConstraintConflict: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: the objects are confined to their context's queue by the context's contract; the
    // rest are value types and Sendable IDs.

    /// The entity that declares the constraint (its sub-entities share it).
    public let entity: String
    /// The constraint's keys, as the model lists them.
    public let constraint: [String]
    /// The shared values, by key, as the store writes them.
    public let constraintValues: [String: String]
    /// The object of the row already in the store with these values, if there is one.
    public let databaseObject: ManagedObject?
    /// The row's values in the store, by key (nil without a stored row).
    public let databaseSnapshot: [String: String]?
    /// The objects of this save with these values, in the order they were inserted (new objects first).
    public let conflictingObjects: [ManagedObject]
    /// Each conflicting object's committed values, by key (empty for a new object), in the same order.
    public let conflictingSnapshots: [[String: String]]

    /// The IDs of ``conflictingObjects``, in the same order.
    public var conflictingObjectIDs: [ManagedObjectID] { conflictingObjects.map(\.objectID) }

    /// The entity, keys and values, and who holds them.
    public var description: String {
        let values = constraint.map { "\($0) = \(constraintValues[$0] ?? "?")" }.joined(separator: ", ")
        let stored = databaseObject.map { ", and the stored row \($0.objectID)" } ?? ""
        return "\(entity) (\(values)) is held by \(conflictingObjects.count) object(s) of the save\(stored)"
    }
}
