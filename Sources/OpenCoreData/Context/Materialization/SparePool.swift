/// Objects a batch holder let go of, kept for the next fresh batch read (see
/// ``ObjectMaterializer/letGo(of:keepingSpares:)``): each is either given another row instead of being freed,
/// or freed just before that read allocates its next object. Empty outside that read.
///
/// Which objects may be given another row is a contract the library controls: an instance of a class whose
/// ``ManagedObject/allowsInstanceReuse`` is true (a subclass that opts in; weak and unowned references, which
/// the library cannot see, are the class's promise), that nobody holds strongly any more (the registry's
/// uniqueness check) and that holds nothing beyond its row (no to-many contents, transient values or fault
/// batch). Reusing one saves freeing one object and allocating the next, and the retains and releases of its
/// entity and context.
///
/// Every other spare (a plain `ManagedObject` among them) is forgotten when it is let go of, as it would be
/// if freed then, and is only freed later: one right before each new object is allocated. The allocator then
/// hands the memory just freed back from its per-thread cache; freeing a whole batch and then allocating one
/// overflows that cache (glibc's holds 7 chunks of a size) into slower bins both ways.
struct SparePool {
    /// The spares, most recently let go of last: those kept for reuse still flagged registered, the others
    /// forgotten. (Filled by the registry as it lets objects go:
    /// ``ObjectRegistry/letGo(of:where:forget:spares:isSpare:)``, then ``admit(from:)``.)
    var objects: [ManagedObject] = []
    /// Spares given another row so far (tests and diagnostics).
    private(set) var reusedCount = 0
    /// Spares freed right before an object was allocated so far (tests and diagnostics).
    private(set) var freedBeforeMakingCount = 0

    var isEmpty: Bool { objects.isEmpty }

    /// Whether an object nobody else holds, with nothing unsaved, may be given another row.
    static func accepts(_ object: ManagedObject) -> Bool {
        !object.hasExtras && type(of: object).allowsInstanceReuse
    }

    /// Takes in the objects the registry just let go of into `objects[start...]`: those that may not be
    /// given another row are forgotten now, as letting go does, and kept only to be freed.
    mutating func admit(from start: Int) {
        for index in start..<objects.count where !Self.accepts(objects[index]) {
            ManagedObjectContext.markForgotten(objects[index])
        }
    }

    /// Keeps a spare for reuse.
    mutating func add(_ object: consuming ManagedObject) {
        objects.append(object)
    }

    /// The last spare, when it is kept for reuse and of exactly `objectClass`, `entity` and store (only its
    /// key then changes), taken out of the pool; nil otherwise. A last spare kept only to be freed is freed
    /// here: call this right before allocating an object.
    @inline(__always)
    mutating func take(_ objectClass: ManagedObject.Type, entity: EntityDescription, storeIndex: UInt32) -> ManagedObject? {
        guard !objects.isEmpty else { return nil }
        // Taken out before it is looked at: bound in place, it would be retained and released.
        let spare = objects.removeLast()
        guard spare.flags.contains(.registered) else {
            // Forgotten when let go of: its last reference ends here, and its memory goes to the allocation
            // that follows.
            freedBeforeMakingCount &+= 1
            return nil
        }
        if type(of: spare) == objectClass && spare.objectID.entity === entity && spare.objectID.storeIndex == storeIndex {
            reusedCount &+= 1
            return spare
        }
        objects.append(consume spare)
        return nil
    }

    /// Frees the spares nothing reused.
    mutating func drain() {
        if !objects.isEmpty { objects.removeAll(keepingCapacity: true) }
    }
}
