import Foundation

/// The result of a fetch: a random-access collection of the request's result type.
///
/// With a ``FetchRequest/fetchBatchSize`` it holds only the IDs, in order, and reads the objects a batch at
/// a time as they are used (`Z_PK IN (…)`), so a million-row result costs a million IDs, not a million
/// objects. Use it on the context's queue, like the objects it hands out.
public struct FetchResults<Element>: RandomAccessCollection {
    enum Storage {
        case materialized([Element])
        case batched(BatchedObjects)
    }

    let storage: Storage

    init(_ elements: [Element]) { storage = .materialized(elements) }
    init(batched: BatchedObjects) { storage = .batched(batched) }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        switch storage {
        case .materialized(let elements): return elements.count
        case .batched(let batched): return batched.ids.count
        }
    }

    public subscript(position: Int) -> Element {
        switch storage {
        case .materialized(let elements): return elements[position]
        case .batched(let batched): return batched.object(at: position) as! Element
        }
    }

    /// The object IDs, in order, without reading any object.
    public var objectIDs: [ManagedObjectID]? {
        if case .batched(let batched) = storage { return batched.ids }
        return nil
    }
}

/// The IDs of a batched fetch, and the objects read so far.
final class BatchedObjects {
    let ids: [ManagedObjectID]
    let batchSize: Int
    private var objects: [ManagedObject?]
    private let contextReference: ContextReference
    /// Called when an object cannot be read (its row is gone); the object stays a fault.
    var loadError: Error?

    /// Relationships read along with each batch.
    var prefetchKeyPaths: [String] = []

    init(ids: [ManagedObjectID], batchSize: Int, context: ManagedObjectContext) {
        self.ids = ids
        self.batchSize = max(1, batchSize)
        self.objects = Array(repeating: nil, count: ids.count)
        self.contextReference = context.reference
    }

    func object(at index: Int) -> ManagedObject {
        if let object = objects[index] { return object }
        let start = index - index % batchSize
        let range = start..<min(start + batchSize, ids.count)
        if let context = contextReference.context {
            do {
                let loaded = try context.materializeBatch(Array(ids[range]))
                if !prefetchKeyPaths.isEmpty { try context.prefetch(prefetchKeyPaths, for: loaded) }
                for (offset, object) in loaded.enumerated() { objects[range.lowerBound + offset] = object }
            } catch {
                loadError = error
            }
        }
        if let object = objects[index] { return object }
        // The context is gone or the store refused: hand out a fault that reports the problem when used.
        let fault = ids[index].entity.managedObjectClass.init(entity: ids[index].entity, id: ids[index])
        objects[index] = fault
        return fault
    }
}
