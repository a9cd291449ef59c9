import OrderedCollections

/// The state of a ``ManagedObject`` that only some objects have, kept apart so the others stay small.
final class ManagedObjectExtras {
    // Unchecked: part of its object's state, used on the same thread under the same rule (see the fields of
    // `ManagedObject`); skips the access check on each use of a to-many cache, transient value or fault batch.
    /// To-many contents as last read from the store, by slot.
    @exclusivity(unchecked) var committedToMany: [Int: OrderedSet<ManagedObjectID>] = [:]
    /// Transient values, by slot.
    @exclusivity(unchecked) var transientValues: [Int: Any] = [:]
    /// The batch a fault belongs to, so firing it loads its neighbours too.
    @exclusivity(unchecked) var faultBatch: FaultBatch?
    /// Fetched properties' results as last fetched, by name, until the object is refreshed.
    @exclusivity(unchecked) var fetchedResults: [String: [ManagedObjectID]] = [:]
}
