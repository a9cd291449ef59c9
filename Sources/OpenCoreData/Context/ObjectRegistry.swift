/// A context's objects by ID.
///
/// Saved objects are found by primary key in a paged array per store table: store primary keys are handed
/// out counting up from 1, so the keys a context holds mostly sit close together. A page holds 64
/// consecutive keys (8 bytes a slot) and exists only once one of its keys is registered, so a context that
/// holds scattered batches (random rows of a large table) pays a page per batch, not an array as long as
/// the largest key; a hash table entry (a 28-byte ID key, the object, the load factor's slack) costs about
/// 80 bytes. Registering a million fetched objects then writes pages in key order instead of hashing into
/// a table ten times its size. Temporary IDs, and keys too scattered for their table's pages, go into a
/// dictionary.
///
/// Pages are objects shared by copies of the registry: a context owns its one registry and never mutates a
/// copy, and ``values`` reads the pages live.
///
/// An entry's key is always its object's `objectID` while the entry is in a page (the page finds an
/// object by key and confirms it by comparing the object's ID). An object whose ID changes is removed
/// under its old ID first; temporary IDs, the only ones that change, live in the dictionary.
///
/// Five counts are kept in step by hand (`count`, `savedInOthers`, each table's `filled` and `pageCount`,
/// each page's `filled`): ``checkInvariants()`` (ObjectRegistry+Testing.swift) recounts them, and the tests
/// that drive the registry call it.
struct ObjectRegistry {
    /// The objects of one store table, by primary key: `pages[key >> pageShift][key & pageMask]`.
    struct PagedTable {
        let storeIndex: UInt32
        let rootEntityNumber: Int
        /// Nil for a page no key of which is registered.
        var pages: ContiguousArray<SlotPage?> = []
        /// How many objects the pages hold.
        var filled = 0
        /// How many pages are allocated.
        var pageCount = 0
        /// `pageCount` when dictionary entries were last moved into pages.
        var pageCountAtAdoption = 0
    }

    /// 64 slots of consecutive keys, written in place (no copy-on-write check per registration), with a
    /// count of the filled ones.
    final class SlotPage: ManagedBuffer<Int, ManagedObject?> {
        static func make() -> SlotPage {
            // `SlotPage.create` makes a SlotPage (ManagedBuffer.create returns the base type): the downcast only
            // skips the runtime's check, once per page.
            let page = unsafeDowncast(SlotPage.create(minimumCapacity: pageSize) { _ in 0 }, to: SlotPage.self)
            page.withUnsafeMutablePointerToElements { $0.initialize(repeating: nil, count: pageSize) }
            return page
        }

        deinit {
            // A page goes mostly once emptied: nil slots need no release each.
            guard filled > 0 else { return }
            _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: pageSize) }
        }

        /// Through the header's pointer: the `header` property would be checked for exclusive access at run
        /// time on every registration.
        var filled: Int {
            @inline(__always) get { withUnsafeMutablePointerToHeader { $0.pointee } }
            @inline(__always) set { withUnsafeMutablePointerToHeader { $0.pointee = newValue } }
        }

        subscript(slot: Int) -> ManagedObject? {
            @inline(__always) get { withUnsafeMutablePointerToElements { $0[slot] } }
            @inline(__always) set { withUnsafeMutablePointerToElements { $0[slot] = newValue } }
        }

        /// For ``ObjectRegistry/forgetUnreferenced(where:)``: whether only this page holds the slot's object.
        func holdsOnlyReference(at slot: Int) -> Bool {
            withUnsafeMutablePointerToElements { slots in
                // An empty slot is a null reference: tested by loading the word, no runtime call (a trim
                // passes every slot of every page).
                guard UnsafeRawPointer(slots + slot).load(as: UInt.self) != 0 else { return false }
                return isKnownUniquelyReferenced(&slots[slot])
            }
        }
    }

    static let pageShift = 6
    static let pageSize = 1 << pageShift
    static let pageMask = pageSize - 1

    // Readable outside this file only for `checkInvariants()` (ObjectRegistry+Testing.swift).
    private(set) var tables: [PagedTable] = []
    private(set) var others: [ManagedObjectID: ManagedObject] = [:]
    /// How many of `others` have saved IDs: while none do, a saved ID is looked up in the pages alone.
    private(set) var savedInOthers = 0
    /// How many objects are expected soon (``reserveCapacity(_:)``): lets a table allocate their pages at once.
    private var expected = 0
    private(set) var count = 0
    /// The last page emptied, kept for the next page needed: a results controller moving through a list
    /// empties a page and needs a new one for about every batch, and reusing it saves an allocation, its
    /// clearing and its release each time.
    private(set) var sparePage: SlotPage?

    var isEmpty: Bool { count == 0 }

    /// A table's pages may hold this many slots per object it holds (plus a floor), so scattered keys cost
    /// at most about what the dictionary would.
    private static let slotsPerObject = 8
    private static let slotFloor = 4_096
    /// The page directory (8 bytes per 64 keys) may always cover this many pages: keys up to about four
    /// million, in at most 512 KB, so the batches of a large table are paged from the first one.
    private static let directoryFloor = 1 << 16

    @inline(__always)
    func tableIndex(for id: ManagedObjectID) -> Int? {
        let root = id.entity.rootEntityNumber
        for index in tables.indices where tables[index].rootEntityNumber == root && tables[index].storeIndex == id.storeIndex {
            return index
        }
        return nil
    }

    /// The object in a table's page slot for `key`, if that page exists.
    @inline(__always)
    private func pagedObject(table: Int, key: Int) -> ManagedObject? {
        guard let page = pageSlots(table: table, pageIndex: key >> Self.pageShift) else { return nil }
        return page.slots[key & Self.pageMask]
    }

    /// Whether a table's slot for `key` holds an object, read without retaining anything.
    @inline(__always)
    private func isOccupied(table: Int, key: Int) -> Bool {
        guard let page = pageSlots(table: table, pageIndex: key >> Self.pageShift) else { return false }
        // An optional class reference is one word, zero for nil: testing the word needs no retain.
        return UnsafeRawPointer(page.slots + (key & Self.pageMask)).load(as: UInt.self) != 0
    }

    /// A page's filled count and slots, reached without retaining the page (a retain and a release are
    /// atomic operations, on every registration and lookup). Valid while the page stays in its table's
    /// directory: only a removal that empties it, or a trim, takes it out, and neither runs while these
    /// are in use.
    /// Unsafe, behind the registry's methods only: saves a retain and a release of the page per registration
    /// and lookup (`fetch-all`, `load-batch-by-id`).
    private struct PageSlots {
        let filled: UnsafeMutablePointer<Int>
        let slots: UnsafeMutablePointer<ManagedObject?>
    }

    @inline(__always)
    private func pageSlots(table: Int, pageIndex: Int) -> PageSlots? {
        tables[table].pages.withUnsafeBufferPointer { pages -> PageSlots? in
            // A `SlotPage?` entry is one word, zero for nil, loaded without retaining the page; the page is
            // held by the directory while it is used (see `PageSlots`).
            guard pageIndex < pages.count,
                  let bits = UnsafeRawPointer(pages.baseAddress.unsafelyUnwrapped + pageIndex).load(as: UnsafeRawPointer?.self)
            else { return nil }
            return Unmanaged<SlotPage>.fromOpaque(bits)._withUnsafeGuaranteedRef { page in
                page.withUnsafeMutablePointers { PageSlots(filled: $0, slots: $1) }
            }
        }
    }

    subscript(id: ManagedObjectID) -> ManagedObject? {
        get {
            if Self.isSaved(id), let table = tableIndex(for: id),
               let object = pagedObject(table: table, key: Int(id.primaryKey)), object.objectID == id {
                return object
            }
            return savedInOthers == 0 && Self.isSaved(id) || others.isEmpty ? nil : others[id]
        }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(forKey: id) }
            #if DEBUG
            InvariantCheck.verify("ObjectRegistry", after: "registering", invariantViolations(around: id))
            #endif
        }
    }

    /// Whether an object of `entity` (alone in its table) with one of `keys` in the store is registered:
    /// a batch check that builds no IDs while no saved ID sits in the dictionary.
    func containsAny(entity: EntityDescription, storeIndex: UInt32, keys: ArraySlice<Int64>) -> Bool {
        let root = entity.rootEntityNumber
        if let table = tables.firstIndex(where: { $0.rootEntityNumber == root && $0.storeIndex == storeIndex }) {
            for key in keys where key > 0 && isOccupied(table: table, key: Int(key)) { return true }
        }
        guard savedInOthers > 0 else { return false }
        return keys.contains { others[ManagedObjectID(entity: entity, primaryKey: $0, storeIndex: storeIndex)] != nil }
    }

    @inline(__always)
    private static func isSaved(_ id: ManagedObjectID) -> Bool { isSaved(storeIndex: id.storeIndex, primaryKey: id.primaryKey) }
    static func isSaved(storeIndex: UInt32, primaryKey: Int64) -> Bool { storeIndex != 0 && primaryKey > 0 }

    private mutating func insert(_ object: ManagedObject, for id: ManagedObjectID) {
        if Self.isSaved(id), object.objectID == id {
            let key = Int(id.primaryKey)
            var table = tableIndex(for: id)
            if table == nil {
                tables.append(PagedTable(storeIndex: id.storeIndex, rootEntityNumber: id.entity.rootEntityNumber))
                table = tables.count - 1
            }
            if let table, placePaged(object, key: key, table: table) {
                // The same ID may sit in the dictionary from when its key was too scattered for the pages.
                if savedInOthers > 0, others.removeValue(forKey: id) != nil { count -= 1; savedInOthers -= 1 }
                return
            }
        }
        if others.updateValue(object, forKey: id) == nil {
            count += 1
            if Self.isSaved(id) { savedInOthers += 1 }
        }
    }

    /// The table of saved objects whose entity's root is `rootEntityNumber` in a store, made if missing: found
    /// once for a batch of ``insertSaved(_:key:table:)``.
    mutating func table(rootEntityNumber: Int, storeIndex: UInt32) -> Int {
        if let index = tables.firstIndex(where: { $0.rootEntityNumber == rootEntityNumber && $0.storeIndex == storeIndex }) {
            return index
        }
        tables.append(PagedTable(storeIndex: storeIndex, rootEntityNumber: rootEntityNumber))
        return tables.count - 1
    }

    /// Registers an object whose ID is saved, with primary key `key`, in a table from
    /// ``table(rootEntityNumber:storeIndex:)``, without copying its ID. False when its key is too scattered
    /// for the pages or its slot holds another object: then register it by ID.
    mutating func insertSaved(_ object: ManagedObject, key: Int64, table: Int) -> Bool {
        guard key > 0, placePaged(object, key: Int(key), table: table) else { return false }
        if savedInOthers > 0, others.removeValue(forKey: object.objectID) != nil { count -= 1; savedInOthers -= 1 }
        #if DEBUG
        InvariantCheck.verify("ObjectRegistry", after: "insertSaved", invariantViolations(around: object.objectID))
        #endif
        return true
    }

    /// Moves a table's entries that were too scattered for its pages, and whose pages now exist, from the
    /// dictionary into them.
    private mutating func adoptFittingEntries(into table: Int) {
        let root = tables[table].rootEntityNumber, store = tables[table].storeIndex
        var fitting: [(ManagedObjectID, ManagedObject)] = []
        for (id, object) in others where Self.isSaved(id) && id.storeIndex == store
            && id.entity.rootEntityNumber == root && object.objectID == id {
            let page = Int(id.primaryKey) >> Self.pageShift
            if page < tables[table].pages.count, tables[table].pages[page] != nil { fitting.append((id, object)) }
        }
        for (id, object) in fitting {
            let key = Int(id.primaryKey)
            guard let page = tables[table].pages[key >> Self.pageShift], page[key & Self.pageMask] == nil else { continue }
            page[key & Self.pageMask] = object
            page.filled += 1
            tables[table].filled += 1
            others.removeValue(forKey: id)
            savedInOthers -= 1
        }
    }

    /// Puts the object in its table's page for the key (allocating the page if that keeps the table dense
    /// enough) when the slot is free or already holds the same ID.
    private mutating func placePaged(_ object: ManagedObject, key: Int, table: Int) -> Bool {
        let pageIndex = key >> Self.pageShift, slot = key & Self.pageMask
        let page: PageSlots
        if let existing = pageSlots(table: table, pageIndex: pageIndex) {
            page = existing
        } else {
            let allowed = Self.slotsPerObject * (tables[table].filled + 1 + expected) + Self.slotFloor
            // The page directory costs 8 bytes per page of keys, so it obeys the same bound in pages.
            guard (tables[table].pageCount + 1) * Self.pageSize <= allowed,
                  pageIndex < max(allowed, Self.directoryFloor) else { return false }
            if pageIndex >= tables[table].pages.count {
                // At least doubling, so growth stays amortized.
                let grown = max(pageIndex + 1, tables[table].pages.count * 2, 16)
                tables[table].pages.reserveCapacity(grown)
                tables[table].pages.append(contentsOf: repeatElement(nil, count: grown - tables[table].pages.count))
            }
            // An emptied page holds only nil slots, as a new one does.
            let made = sparePage.take() ?? SlotPage.make()
            tables[table].pages[pageIndex] = made
            page = made.withUnsafeMutablePointers { PageSlots(filled: $0, slots: $1) }
            tables[table].pageCount += 1
            // Scattered entries move into pages made since, each time the page count doubles: a scan of the
            // dictionary per new page would cost as much as the dictionary per registration.
            if savedInOthers > 0, tables[table].pageCount >= 2 * max(8, tables[table].pageCountAtAdoption) {
                adoptFittingEntries(into: table)
                tables[table].pageCountAtAdoption = tables[table].pageCount
            }
        }
        // Occupied? Tested by loading the slot's word (zero for nil): no retain and release of what it holds.
        if UnsafeRawPointer(page.slots + slot).load(as: UInt.self) != 0 {
            guard page.slots[slot]?.objectID == object.objectID else { return false }
        } else {
            page.filled.pointee += 1
            tables[table].filled += 1
            count += 1
        }
        page.slots[slot] = object
        return true
    }

    @discardableResult
    mutating func removeValue(forKey id: ManagedObjectID) -> ManagedObject? {
        #if DEBUG
        defer { InvariantCheck.verify("ObjectRegistry", after: "removeValue", invariantViolations(around: id)) }
        #endif
        if Self.isSaved(id), let table = tableIndex(for: id) {
            let key = Int(id.primaryKey)
            if let object = pagedObject(table: table, key: key), object.objectID == id,
               let page = tables[table].pages[key >> Self.pageShift] {
                page[key & Self.pageMask] = nil
                page.filled -= 1
                tables[table].filled -= 1
                count -= 1
                releasePageIfEmpty(table: table, page: key >> Self.pageShift)
                return object
            }
        }
        guard !others.isEmpty, let object = others.removeValue(forKey: id) else { return nil }
        count -= 1
        if Self.isSaved(id) { savedInOthers -= 1 }
        return object
    }

    /// Gives an emptied page's memory back.
    private mutating func releasePageIfEmpty(table: Int, page: Int) {
        guard let slots = tables[table].pages[page], slots.filled == 0 else { return }
        tables[table].pages[page] = nil
        tables[table].pageCount -= 1
        if sparePage == nil { sparePage = slots }
    }

    /// Expects `count` more objects: tables may grow to their keys in one step, the dictionary is sized once.
    mutating func reserveCapacity(_ additional: Int) {
        expected = additional
    }

    /// Every registered object (pages first, in key order).
    var values: Values { Values(registry: self) }

    /// Removes the objects `shouldForget` picks among those the registry alone holds, handing each to
    /// `forget` just before letting it go: an object is let go (and, held by nobody, freed) while its memory
    /// is still in cache from the check, not after the whole scan. The uniqueness check comes before any
    /// other reference is taken, which would count as a second holder. Returns how many were forgotten.
    @discardableResult
    mutating func forgetUnreferenced(where shouldForget: (ManagedObject) -> Bool,
                                     forget: (ManagedObject) -> Void = { _ in }) -> Int {
        #if DEBUG
        // Already a scan of every object: the whole registry is checked.
        defer { InvariantCheck.verify("ObjectRegistry", after: "forgetUnreferenced", invariantViolations()) }
        #endif
        var forgotten = 0
        for table in tables.indices {
            for pageIndex in tables[table].pages.indices {
                guard let page = tables[table].pages[pageIndex] else { continue }
                for slot in 0..<Self.pageSize where page.holdsOnlyReference(at: slot) {
                    guard let object = page[slot], shouldForget(object) else { continue }
                    forget(object)
                    page[slot] = nil
                    page.filled -= 1
                    tables[table].filled -= 1
                    count -= 1
                    forgotten += 1
                }
                releasePageIfEmpty(table: table, page: pageIndex)
            }
            // A table left empty gives its directory back.
            if tables[table].filled == 0 { tables[table].pages = [] }
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
                forget(object)
                forgotten += 1
                count -= 1
                if Self.isSaved(id) { savedInOthers -= 1 }
            }
        }
        return forgotten
    }

    /// ``forgetUnreferenced(where:forget:)`` for a few objects a holder is letting go of, rather than for the
    /// whole registry: takes each object out of `objects` (leaving nil) and forgets it if the registry is then
    /// its only holder and `shouldForget` picks it. A holder of short-lived objects (a results controller's
    /// previous batch) so frees them at once, while their memory is still in cache, instead of leaving them
    /// to the next trim. Returns how many were forgotten.
    ///
    /// A forgotten object that `isSpare` picks goes to `spares` instead of being forgotten: taken out of the
    /// registry, nobody else's, for the caller to give another row (see
    /// ``ObjectMaterializer``) or drop.
    @discardableResult
    mutating func letGo(of objects: inout [ManagedObject?], where shouldForget: (ManagedObject) -> Bool,
                        forget: (ManagedObject) -> Void, spares: inout [ManagedObject],
                        isSpare: (ManagedObject) -> Bool) -> Int {
        #if DEBUG
        defer { InvariantCheck.verify("ObjectRegistry", after: "letGo", countViolations()) }
        #endif
        var forgotten = 0
        var table: Int?
        for index in objects.indices {
            // Moved out, not copied: a copy would be one more holder to the uniqueness check below.
            guard let object = objects[index].take() else { continue }
            // The ID's parts are read in place: a copy of the ID retains and releases its entity.
            let storeIndex = object.objectID.storeIndex, primaryKey = object.objectID.primaryKey
            guard Self.isSaved(storeIndex: storeIndex, primaryKey: primaryKey) else {
                letGoInDictionary(consume object, where: shouldForget, forget: forget, spares: &spares, isSpare: isSpare,
                                  forgotten: &forgotten)
                continue
            }
            if table == nil || tables[table.unsafelyUnwrapped].storeIndex != storeIndex
                || tables[table.unsafelyUnwrapped].rootEntityNumber != object.objectID.entity.rootEntityNumber {
                table = tableIndex(for: object.objectID)
            }
            let key = Int(primaryKey)
            guard let table, let page = pageSlots(table: table, pageIndex: key >> Self.pageShift),
                  // The slot's reference compared by address, without retaining either object.
                  UnsafeRawPointer(page.slots + (key & Self.pageMask)).load(as: UnsafeRawPointer?.self)
                    == UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()) else {
                // Registered by ID (a key too scattered for the pages), or not registered at all.
                if savedInOthers > 0 {
                    letGoInDictionary(consume object, where: shouldForget, forget: forget, spares: &spares, isSpare: isSpare,
                                      forgotten: &forgotten)
                }
                continue
            }
            let slot = page.slots + (key & Self.pageMask)
            // The registry's reference is taken out and the caller's dropped: the registry's is then unique
            // exactly when nobody else holds the object.
            var held = slot.move()
            slot.initialize(to: nil)
            _ = consume object
            guard isKnownUniquelyReferenced(&held), let candidate = held.take() else {
                slot.pointee = held
                continue
            }
            guard shouldForget(candidate) else {
                slot.pointee = candidate
                continue
            }
            page.filled.pointee -= 1
            tables[table].filled -= 1
            count -= 1
            forgotten += 1
            // An empty page left in place would count against the table's density bound.
            if page.filled.pointee == 0 { releasePageIfEmpty(table: table, page: key >> Self.pageShift) }
            if isSpare(candidate) {
                spares.append(consume candidate)
            } else {
                forget(candidate)
            }
        }
        return forgotten
    }

    /// ``letGo(of:where:forget:spares:isSpare:)`` for an object registered in the dictionary, if it is.
    private mutating func letGoInDictionary(_ object: consuming ManagedObject, where shouldForget: (ManagedObject) -> Bool,
                                            forget: (ManagedObject) -> Void, spares: inout [ManagedObject],
                                            isSpare: (ManagedObject) -> Bool, forgotten: inout Int) {
        let id = object.objectID
        guard !others.isEmpty, var held = others.removeValue(forKey: id) else { return }
        guard held === object else {
            others[id] = held
            return
        }
        _ = consume object
        guard isKnownUniquelyReferenced(&held), shouldForget(held) else {
            others[id] = held
            return
        }
        forgotten += 1
        count -= 1
        if Self.isSaved(id) { savedInOthers -= 1 }
        if isSpare(held) { spares.append(consume held) } else { forget(held) }
    }

    /// The registered objects, as a sequence.
    struct Values: Sequence {
        fileprivate let registry: ObjectRegistry

        func makeIterator() -> AnyIterator<ManagedObject> {
            let tables = registry.tables
            var table = 0, page = 0, slot = 0
            var others = registry.others.values.makeIterator()
            return AnyIterator {
                while table < tables.count {
                    let pages = tables[table].pages
                    while page < pages.count {
                        if let slots = pages[page] {
                            while slot < ObjectRegistry.pageSize {
                                defer { slot += 1 }
                                if let object = slots[slot] { return object }
                            }
                        }
                        page += 1
                        slot = 0
                    }
                    table += 1
                    page = 0
                }
                return others.next()
            }
        }

        var underestimatedCount: Int { registry.count }
    }
}
