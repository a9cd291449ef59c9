import Foundation

/// Lookups the controller makes on every `object(at:)`, called through its optional `tracker` property.
/// They are `mutating` (though they change nothing) so the call works on the stored tracker in place: a
/// non-mutating call, like binding it to a local, copies the whole tracker, retaining everything it holds,
/// on every call.
extension ResultsChangeTracker {
    /// The position and object ID at an index path, or nil when it is out of range.
    mutating func objectID(at indexPath: IndexPath) -> (position: Int, id: ManagedObjectID)? {
        guard let position = position(of: indexPath),
              let row = rows.handles(in: position..<(position + 1)).first,
              let id = objectID(handle: row.handle, entity: row.entity) else { return nil }
        return (position, id)
    }

    /// The object IDs at a range of positions, in order.
    mutating func objectIDs(in range: Range<Int>) -> [ManagedObjectID] {
        rows.handles(in: range.clamped(to: 0..<count)).compactMap { objectID(handle: $0.handle, entity: $0.entity) }
    }
}
