/// A context's objects by ID.
///
/// Saved objects are found by primary key in a dense array per store table: store primary keys are handed
/// out counting up from 1, so the keys a context holds are mostly close together, and an array slot costs
/// 8 bytes where a hash table entry (a 28-byte ID key, the object, the load factor's slack) costs about 80.
/// Registering a million fetched objects then writes one array in key order instead of hashing into a
/// table ten times its size. Temporary IDs, and keys too sparse for their table's array, go into a
/// dictionary.
///
/// An entry's key is always its object's `objectID` while the entry is in the array (the array finds an
/// object by key and confirms it by comparing the object's ID). An object whose ID changes is removed
/// under its old ID first; temporary IDs, the only ones that change, live in the dictionary.
struct ObjectRegistry {
    /// The objects of one store table, by primary key.
    private struct DenseTable {
        let storeIndex: UInt32
        let rootEntityNumber: Int
        var slots: ContiguousArray<ManagedObject?> = []
        var filled = 0
    }

    private var tables: [DenseTable] = []
    private var others: [ManagedObjectID: ManagedObject] = [:]
    /// How many of `others` have saved IDs: while none do, a saved ID is looked up in the arrays alone.
    private var savedInOthers = 0
    /// How many objects are expected soon (``reserveCapacity(_:)``): lets a table grow to their keys at once.
    private var expected = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// A table array may hold this many slots per object it holds (plus a floor), so sparse keys cost at
    /// most about what the dictionary would.
    private static let slotsPerObject = 8
    private static let slotFloor = 4_096

    @inline(__always)
    private func tableIndex(for id: ManagedObjectID) -> Int? {
        let root = id.entity.rootEntityNumber
        for index in tables.indices where tables[index].rootEntityNumber == root && tables[index].storeIndex == id.storeIndex {
            return index
        }
        return nil
    }

    subscript(id: ManagedObjectID) -> ManagedObject? {
        get {
            if Self.isSaved(id), let table = tableIndex(for: id) {
                let key = Int(id.primaryKey)
                if key < tables[table].slots.count, let object = tables[table].slots[key], object.objectID == id {
                    return object
                }
            }
            return savedInOthers == 0 && Self.isSaved(id) || others.isEmpty ? nil : others[id]
        }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(forKey: id) }
        }
    }

    @inline(__always)
    private static func isSaved(_ id: ManagedObjectID) -> Bool { id.storeIndex != 0 && id.primaryKey > 0 }

    private mutating func insert(_ object: ManagedObject, for id: ManagedObjectID) {
        if Self.isSaved(id), object.objectID == id {
            let key = Int(id.primaryKey)
            var table = tableIndex(for: id)
            if table == nil {
                tables.append(DenseTable(storeIndex: id.storeIndex, rootEntityNumber: id.entity.rootEntityNumber))
                table = tables.count - 1
            }
            if let table, placeDense(object, key: key, table: table) {
                // The same ID may sit in the dictionary from when its key was too sparse for the array.
                if savedInOthers > 0, others.removeValue(forKey: id) != nil { count -= 1; savedInOthers -= 1 }
                return
            }
        }
        if others.updateValue(object, forKey: id) == nil {
            count += 1
            if Self.isSaved(id) { savedInOthers += 1 }
        }
    }

    /// Moves a table's entries that were too sparse for its array, and now fit, from the dictionary into it.
    private mutating func adoptFittingEntries(into table: Int) {
        let size = tables[table].slots.count
        let root = tables[table].rootEntityNumber, store = tables[table].storeIndex
        var fitting: [(ManagedObjectID, ManagedObject)] = []
        for (id, object) in others where Self.isSaved(id) && id.storeIndex == store
            && id.entity.rootEntityNumber == root && Int(id.primaryKey) < size && object.objectID == id {
            fitting.append((id, object))
        }
        for (id, object) in fitting where tables[table].slots[Int(id.primaryKey)] == nil {
            tables[table].slots[Int(id.primaryKey)] = object
            tables[table].filled += 1
            others.removeValue(forKey: id)
            savedInOthers -= 1
        }
    }

    /// Puts the object in its table's array when the key fits (growing the array if that keeps it dense
    /// enough) and the slot is free or already holds the same ID.
    private mutating func placeDense(_ object: ManagedObject, key: Int, table: Int) -> Bool {
        let size = tables[table].slots.count
        if key >= size {
            let allowed = Self.slotsPerObject * (tables[table].filled + 1 + expected) + Self.slotFloor
            guard key < allowed else { return false }
            // At least doubling (or straight to the expected objects' keys), so growth stays amortized: growing
            // only to the density bound would regrow, copying the array, every few objects.
            let grown = max(key + 1, size * 2, tables[table].filled + expected + 1, 64)
            tables[table].slots.reserveCapacity(grown)
            tables[table].slots.append(contentsOf: repeatElement(nil, count: grown - size))
            if savedInOthers > 0 { adoptFittingEntries(into: table) }
        }
        if let existing = tables[table].slots[key] {
            guard existing.objectID == object.objectID else { return false }
        } else {
            tables[table].filled += 1
            count += 1
        }
        tables[table].slots[key] = object
        return true
    }

    @discardableResult
    mutating func removeValue(forKey id: ManagedObjectID) -> ManagedObject? {
        if Self.isSaved(id), let table = tableIndex(for: id) {
            let key = Int(id.primaryKey)
            if key < tables[table].slots.count, let object = tables[table].slots[key], object.objectID == id {
                tables[table].slots[key] = nil
                tables[table].filled -= 1
                count -= 1
                return object
            }
        }
        guard !others.isEmpty, let object = others.removeValue(forKey: id) else { return nil }
        count -= 1
        if Self.isSaved(id) { savedInOthers -= 1 }
        return object
    }

    /// Expects `count` more objects: tables may grow to their keys in one step, the dictionary is sized once.
    mutating func reserveCapacity(_ additional: Int) {
        expected = additional
    }

    /// Every registered object (tables first, in key order).
    var values: Values { Values(registry: self) }

    /// Removes the objects `shouldForget` picks among those the registry alone holds. The uniqueness check
    /// comes before any other reference is taken, which would count as a second holder.
    mutating func forgetUnreferenced(where shouldForget: (ManagedObject) -> Bool) -> [ManagedObject] {
        var forgotten: [ManagedObject] = []
        for table in tables.indices {
            for key in tables[table].slots.indices where isKnownUniquelyReferenced(&tables[table].slots[key]) {
                guard let object = tables[table].slots[key], shouldForget(object) else { continue }
                forgotten.append(object)
                tables[table].slots[key] = nil
                tables[table].filled -= 1
                count -= 1
            }
            // A table left mostly empty gives its memory back.
            if tables[table].filled == 0 { tables[table].slots = [] }
        }
        var index = others.values.startIndex
        var forgottenIDs: [ManagedObjectID] = []
        while index != others.values.endIndex {
            if isKnownUniquelyReferenced(&others.values[index]) {
                let object = others.values[index]
                if shouldForget(object) { forgottenIDs.append(object.objectID) }
            }
            others.values.formIndex(after: &index)
        }
        for id in forgottenIDs {
            if let object = others.removeValue(forKey: id) {
                forgotten.append(object)
                count -= 1
                if Self.isSaved(id) { savedInOthers -= 1 }
            }
        }
        return forgotten
    }

    /// The registered objects, as a sequence.
    struct Values: Sequence {
        fileprivate let registry: ObjectRegistry

        func makeIterator() -> AnyIterator<ManagedObject> {
            let tables = registry.tables
            var table = 0, key = 0
            var others = registry.others.values.makeIterator()
            return AnyIterator {
                while table < tables.count {
                    let slots = tables[table].slots
                    while key < slots.count {
                        defer { key += 1 }
                        if let object = slots[key] { return object }
                    }
                    table += 1
                    key = 0
                }
                return others.next()
            }
        }

        var underestimatedCount: Int { registry.count }
    }
}
