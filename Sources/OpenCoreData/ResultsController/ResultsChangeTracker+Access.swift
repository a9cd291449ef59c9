import Foundation

/// Lookups the controller makes on every `object(at:)`, called through its optional `tracker` property.
/// They are `mutating` (though they change nothing) so the call works on the stored tracker in place: a
/// non-mutating call, like binding it to a local, copies the whole tracker, retaining everything it holds,
/// on every call.
extension ResultsChangeTracker {
    /// The position and object ID at an index path, or nil when it is out of range.
    // Inlined: out of line, the caller destroys its optional result through generic metadata.
    @inline(__always)
    mutating func objectID(at indexPath: IndexPath) -> (position: Int, id: ManagedObjectID)? {
        guard let position = position(of: indexPath), let row = rows.row(at: position),
              let id = objectID(handle: row.handle, entity: row.entity) else { return nil }
        return (position, id)
    }

    /// The position of an index path, or nil when it is out of range.
    @inline(__always)
    mutating func checkedPosition(of indexPath: IndexPath) -> Int? { position(of: indexPath) }

    /// The object IDs at a range of positions (clamped to the rows), in order.
    mutating func objectIDs(in range: Range<Int>) -> [ManagedObjectID] {
        let range = range.clamped(to: 0..<count)
        var ids: [ManagedObjectID] = []
        ids.reserveCapacity(range.count)
        rows.forEachRow(in: range) { handle, entity in
            if let id = objectID(handle: handle, entity: entity) { ids.append(id) }
        }
        return ids
    }

    /// The primary keys at a range of positions, in order, when all are saved objects of one entity, with
    /// that entity: what loading a batch by key needs. Nil otherwise (take ``objectIDs(in:)``).
    mutating func uniformKeys(in range: Range<Int>) -> (entity: EntityDescription, keys: [Int64])? {
        let range = range.clamped(to: 0..<count)
        var keys: [Int64] = []
        keys.reserveCapacity(range.count)
        var entityNumber: Int32?
        var uniform = true
        rows.forEachRow(in: range) { handle, entity in
            if handle < 0 || (entityNumber != nil && entityNumber != entity) { uniform = false }
            entityNumber = entity
            keys.append(handle)
        }
        guard uniform, let entityNumber, let entity = model.entity(number: Int(entityNumber)) else { return nil }
        return (entity, keys)
    }
}
