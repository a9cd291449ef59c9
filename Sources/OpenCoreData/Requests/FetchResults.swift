import Foundation

/// The result of a fetch: a random-access collection of the request's result type.
///
/// With a ``FetchRequest/fetchBatchSize`` it holds only the IDs, in order, and reads the objects a batch at
/// a time as they are used (`Z_PK IN (…)`), so a million-row result costs a million IDs, not a million
/// objects. Use it on the context's queue, like the objects it hands out.
public struct FetchResults<Element>: RandomAccessCollection {
    // Element access is inlinable so it is specialized in the caller: a `FetchResults<ManagedObject>` then
    // hands out batched objects with no generic copy, cast or extra retain.
    @usableFromInline
    enum Storage {
        case materialized([Element])
        case batched(BatchedObjects)
    }

    @usableFromInline
    let storage: Storage

    init(_ elements: [Element]) { storage = .materialized(elements) }
    init(batched: BatchedObjects) { storage = .batched(batched) }

    /// 0.
    @inlinable
    public var startIndex: Int { 0 }
    /// The number of results.
    @inlinable
    public var endIndex: Int {
        switch storage {
        case .materialized(let elements): return elements.count
        case .batched(let batched): return batched.count
        }
    }

    /// The result at `position`. In a batched result, the batch holding it is read from the store first; when
    /// that read fails, the object comes back as a fault that reports the error when used.
    @inlinable
    public subscript(position: Int) -> Element {
        switch storage {
        case .materialized(let elements): return elements[position]
        case .batched(let batched):
            let object = batched.object(at: position)
            // The common `FetchRequest<ManagedObject>` needs no runtime cast; a typed request's class was
            // checked when it was fetched.
            // Safe: `Element` is `ManagedObject`, checked in the same line (`fetch-batched-first-100`).
            if Element.self == ManagedObject.self { return unsafeBitCast(object, to: Element.self) }
            return object as! Element
        }
    }

    /// The object IDs, in order, without reading any object.
    public var objectIDs: [ManagedObjectID]? {
        if case .batched(let batched) = storage { return batched.ids }
        return nil
    }
}

/// The IDs of a batched fetch, and the objects read so far.
@usableFromInline
final class BatchedObjects {
    /// The keys in order: full IDs, or — for an entity alone in its table — just the primary keys
    /// (8 bytes a row instead of an ID's 32).
    private enum Keys {
        case ids([ManagedObjectID])
        case primaryKeys([Int64], entity: EntityDescription, store: StoreIdentity?)
    }
    private let keys: Keys
    @usableFromInline
    let count: Int

    /// The IDs, in order.
    var ids: [ManagedObjectID] {
        switch keys {
        case .ids(let ids): return ids
        case .primaryKeys(let keys, let entity, let store):
            return keys.map { ManagedObjectID(entity: entity, primaryKey: $0, store: store) }
        }
    }

    func id(at index: Int) -> ManagedObjectID {
        switch keys {
        case .ids(let ids): return ids[index]
        case .primaryKeys(let keys, let entity, let store):
            return ManagedObjectID(entity: entity, primaryKey: keys[index], store: store)
        }
    }
    let batchSize: Int
    /// The objects read so far, by position (nil: not read). Memory of its own rather than an array: the
    /// context's materializer writes a batch straight into it and then runs the batch's awake hooks, which
    /// may read this result again (an array would be inside an exclusive access then).
    /// Unsafe: allocated and initialized for `count` slots in `init`, deinitialized and freed in `deinit`;
    /// every access is within `0..<count` (`fetch-batched-first-100`).
    let objects: UnsafeMutablePointer<ManagedObject?>
    private let contextReference: ContextReference
    // Unchecked (these two and the batch bits below): a result is used on its context's queue only, and each
    // access is instantaneous (a read, or a bit set), never open while a batch's awake hooks run. Skips a
    // `swift_beginAccess` on each element read (`load-batch-by-id`, `fetch-batched-first-100`).
    /// Called when an object cannot be read (its row is gone); the object stays a fault.
    @exclusivity(unchecked) var loadError: Error?

    /// Relationships read along with each batch.
    @exclusivity(unchecked) var prefetchKeyPaths: [String] = []

    convenience init(primaryKeys: [Int64], entity: EntityDescription, store: StoreIdentity?, batchSize: Int,
                     context: ManagedObjectContext) {
        self.init(keys: .primaryKeys(primaryKeys, entity: entity, store: store), count: primaryKeys.count,
                  batchSize: batchSize, context: context)
    }

    convenience init(ids: [ManagedObjectID], batchSize: Int, context: ManagedObjectContext) {
        self.init(keys: .ids(ids), count: ids.count, batchSize: batchSize, context: context)
    }

    private init(keys: Keys, count: Int, batchSize: Int, context: ManagedObjectContext) {
        self.keys = keys
        self.count = count
        self.batchSize = max(1, batchSize)
        self.objects = .allocate(capacity: count)
        self.objects.initialize(repeating: nil, count: count)
        self.loadedBatches = Array(repeating: 0, count: (count / max(1, batchSize) + 64) / 64)
        self.writtenBatches = loadedBatches
        self.contextReference = context.reference
    }

    deinit {
        objects.deinitialize(count: count)
        objects.deallocate()
    }

    /// A bit per batch, set once the batch is read: a batch not read yet is read without first looking at
    /// its slots, which in a large result are a cache and TLB miss away (this stays in cache).
    @exclusivity(unchecked) private(set) var loadedBatches: [UInt64]
    /// A bit per batch, set once any of its slots is written: the slots of a batch never written are all nil,
    /// so they are initialized without loading the old values (a write the processor need not wait for).
    @exclusivity(unchecked) private(set) var writtenBatches: [UInt64]

    private static func bit(_ batch: Int, in bits: [UInt64]) -> Bool { bits[batch >> 6] & (1 << UInt64(batch & 63)) != 0 }
    private static func set(_ batch: Int, in bits: inout [UInt64]) { bits[batch >> 6] |= 1 << UInt64(batch & 63) }

    @usableFromInline
    func object(at index: Int) -> ManagedObject {
        let batch = index / batchSize
        if Self.bit(batch, in: loadedBatches), let object = objects[index] { return object }
        let start = index - index % batchSize
        let range = start..<min(start + batchSize, count)
        if let context = contextReference.context {
            do {
                // Straight into the result's slots: no intermediate array of the batch's objects. The slots
                // of a batch never written are all nil: each is stored once, without releasing the old value.
                let fresh = !Self.bit(batch, in: writtenBatches)
                Self.set(batch, in: &writtenBatches)
                let materializer = context.materializer
                var loadedByKey = false
                if case .primaryKeys(let keys, let entity, let storeIdentity) = keys {
                    loadedByKey = try materializer.loadFreshBatch(entity: entity, storeIndex: storeIdentity?.index ?? 0,
                                                                  keys: keys[range], into: objects + start,
                                                                  slotsHoldNothing: fresh)
                }
                if !loadedByKey {
                    try materializer.loadBatch(range.map(id(at:)), into: objects + start, slotsHoldNothing: fresh)
                }
                Self.set(batch, in: &loadedBatches)
                #if DEBUG
                InvariantCheck.verify("BatchedObjects", after: "reading a batch",
                                      invariantViolations(batches: batch..<batch + 1))
                #endif
                if !prefetchKeyPaths.isEmpty {
                    try context.prefetch(prefetchKeyPaths, for: range.compactMap { objects[$0] })
                }
            } catch {
                loadError = error
            }
        }
        if let object = objects[index] { return object }
        // The store refused the batch: hand out the context's fault, which reads its row again when used
        // and then throws the store's own error (an unreadable value is not a missing object). Without a
        // context, a fault that reports the object as gone.
        let id = id(at: index)
        let fault = (try? contextReference.context?.object(with: id)) ?? id.entity.managedObjectClass.init(entity: id.entity, id: id)
        Self.set(batch, in: &writtenBatches)
        objects[index] = fault
        return fault
    }
}
