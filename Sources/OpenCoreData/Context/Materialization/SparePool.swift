/// Objects a batch holder let go of, kept for the next batch read to give other rows instead of freeing them
/// and allocating new ones (see ``ObjectMaterializer/letGo(of:keepingSpares:)``). Empty outside that read.
///
/// Which objects may be kept is a contract the library controls: an instance of a class whose
/// ``ManagedObject/allowsInstanceReuse`` is true (a subclass that opts in; weak and unowned references, which
/// the library cannot see, are the class's promise), that nobody holds strongly any more (the registry's uniqueness check) and that holds nothing beyond its row
/// (no to-many contents, transient values or fault batch). Reusing one saves freeing one object and
/// allocating the next, and the retains and releases of its entity and context.
struct SparePool {
    /// The spares, most recently let go of last.
    /// (Filled by the registry as it lets objects go: ``ObjectRegistry/letGo(of:where:forget:spares:isSpare:)``.)
    var objects: [ManagedObject] = []
    /// Spares given another row so far (tests and diagnostics).
    private(set) var reusedCount = 0

    var isEmpty: Bool { objects.isEmpty }

    /// Whether an object nobody else holds, with nothing unsaved, may be kept as a spare.
    static func accepts(_ object: ManagedObject) -> Bool {
        !object.hasExtras && type(of: object).allowsInstanceReuse
    }

    /// Keeps a spare.
    mutating func add(_ object: consuming ManagedObject) {
        objects.append(object)
    }

    /// The last spare, when it is of exactly `objectClass`, `entity` and store (only its key then changes),
    /// taken out of the pool; nil otherwise.
    @inline(__always)
    mutating func take(_ objectClass: ManagedObject.Type, entity: EntityDescription, storeIndex: UInt32) -> ManagedObject? {
        guard !objects.isEmpty else { return nil }
        // Taken out before it is looked at: bound in place, it would be retained and released.
        let spare = objects.removeLast()
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
