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
/// overflows that cache (glibc's holds 7 chunks of a size) into slower bins both ways. Such a spare keeps its
/// context reference until then, and hands it to the object allocated next (one atomic decrement and one
/// increment fewer an object): no code but the read runs in between, so nothing sees the forgotten object
/// still naming the context, and it names none by the time it is freed.
struct SparePool {
    /// The spares, most recently let go of last: those kept for reuse still flagged registered, the others
    /// forgotten. (Filled by the registry as it lets objects go:
    /// ``ObjectRegistry/letGo(of:where:forget:spares:isSpare:)``, then ``admit(from:)``.)
    var objects: [ManagedObject] = []
    /// Spares given another row so far (tests and diagnostics).
    private(set) var reusedCount = 0
    /// Spares freed right before an object was allocated so far (tests and diagnostics).
    private(set) var freedBeforeMakingCount = 0
    /// Context references a freed spare handed to the object made after it, so far (see ``take(_:entity:storeIndex:handingOver:to:)``).
    private(set) var handedOverCount = 0

    var isEmpty: Bool { objects.isEmpty }

    /// Whether an object nobody else holds, with nothing unsaved, may be given another row.
    static func accepts(_ object: ManagedObject) -> Bool {
        !object.hasExtras && type(of: object).allowsInstanceReuse
    }

    /// Takes in the objects the registry just let go of into `objects[start...]`: those that may not be
    /// given another row are forgotten now, as letting go does, and kept only to be freed; each keeps its
    /// context reference for the object made when it is freed (``take(_:entity:storeIndex:handingOver:to:)``,
    /// or ``drain()`` lets it go).
    mutating func admit(from start: Int) {
        for index in start..<objects.count where !Self.accepts(objects[index]) {
            objects[index].flags.remove(.registered)
        }
        #if DEBUG
        InvariantCheck.verify("SparePool", after: "admit", invariantViolations())
        #endif
    }

    /// Keeps a spare for reuse.
    mutating func add(_ object: consuming ManagedObject) {
        objects.append(object)
    }

    /// The last spare, when it is kept for reuse and of exactly `objectClass`, `entity` and store (only its
    /// key then changes), taken out of the pool; nil otherwise. A last spare kept only to be freed is freed
    /// here: call this right before allocating an object, which then gets the freed spare's reference to
    /// `contextReference` in `handedOver` (nil when it had none to give).
    @inline(__always)
    mutating func take(_ objectClass: ManagedObject.Type, entity: EntityDescription, storeIndex: UInt32,
                       handingOver handedOver: inout ContextReference?, to contextReference: ContextReference) -> ManagedObject? {
        guard !objects.isEmpty else { return nil }
        // Taken out before it is looked at: bound in place, it would be retained and released.
        let spare = objects.removeLast()
        guard spare.flags.contains(.registered) else {
            // Forgotten when let go of: its last reference ends here, and its memory goes to the allocation
            // that follows, its context reference (moved out, not released) to the object made there.
            freedBeforeMakingCount &+= 1
            if spare.contextReference === contextReference {
                handedOver = spare.contextReference.take()
                handedOverCount &+= 1
            }
            return nil
        }
        if type(of: spare) == objectClass && spare.objectID.entity === entity && spare.objectID.storeIndex == storeIndex {
            reusedCount &+= 1
            return spare
        }
        objects.append(consume spare)
        return nil
    }

    /// Frees the spares nothing reused; those forgotten let go of their context reference first.
    mutating func drain() {
        guard !objects.isEmpty else { return }
        for object in objects where !object.flags.contains(.registered) { object.contextReference = nil }
        objects.removeAll(keepingCapacity: true)
        #if DEBUG
        InvariantCheck.verify("SparePool", after: "drain", invariantViolations())
        #endif
    }
}
