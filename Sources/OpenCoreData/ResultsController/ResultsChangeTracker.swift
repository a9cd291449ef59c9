import Foundation

/// The controller's rows and sections, and the incremental step that applies a set of changed rows to
/// them and says what moved where.
///
/// Applying k changes to n rows costs O(k log n): each changed row is found by its handle (a dictionary
/// lookup, then a count over the chunk index), removed, and re-inserted by binary search over its sort
/// keys; section positions come from a counted index over section sizes. A section that appears or
/// vanishes costs O(number of sections) on top.
struct ResultsChangeTracker {
    struct Section {
        var key: StoreValue
        var name: String
        var uid: Int
    }

    /// One object to re-place: where it was (its handle, if the controller holds it) and where it
    /// belongs now (nil when it no longer matches or is deleted).
    struct Candidate {
        var oldHandle: Int64?
        var new: (handle: Int64, entity: Int32, keys: [StoreValue], id: ManagedObjectID)?
        var object: ManagedObject?
        var oldID: ManagedObjectID?
    }

    /// What an application of candidates did, in the table-view contract's terms.
    struct Outcome {
        enum Kind { case insert, delete, move, update }
        struct Item {
            var candidate: Int
            var kind: Kind
            var oldIndexPath: IndexPath?
            var newIndexPath: IndexPath?
        }
        var items: [Item] = []
        var deletedSections: [(index: Int, name: String)] = []
        var insertedSections: [(index: Int, name: String)] = []
        var isEmpty: Bool { items.isEmpty && deletedSections.isEmpty && insertedSections.isEmpty }
    }

    let ordering: ResultsOrdering
    let hasSections: Bool
    let model: ManagedObjectModel
    let fallbackEntity: EntityDescription
    let storeIdentity: StoreIdentity
    private(set) var rows: RowList
    private(set) var sections: [Section] = []
    private(set) var sizes = CountedIndex()
    private var nextUID = 0
    /// Unsaved objects' IDs, by their (negative) handles.
    private(set) var temporaryIDs: [Int64: ManagedObjectID] = [:]

    init(ordering: ResultsOrdering, hasSections: Bool, snapshot: ResultsCache.Snapshot, model: ManagedObjectModel,
         entity: EntityDescription, storeIdentity: StoreIdentity) {
        self.ordering = ordering
        self.hasSections = hasSections
        self.model = model
        self.fallbackEntity = entity
        self.storeIdentity = storeIdentity
        rows = RowList(keyCount: ordering.keys.count, sortedHandles: snapshot.handles, entities: snapshot.entities,
                       soleEntity: snapshot.soleEntity, keys: snapshot.keys)
        if hasSections {
            var start = 0
            for count in snapshot.sectionCounts where count > 0 {
                let key = snapshot.keys[0][start]
                sections.append(Section(key: key, name: ordering.sectionName(for: key), uid: nextUID))
                nextUID += 1
                start += count
            }
            sizes.reset(snapshot.sectionCounts.filter { $0 > 0 })
        } else {
            sections = [Section(key: .null, name: "", uid: 0)]
            nextUID = 1
            sizes.reset([snapshot.handles.count])
        }
    }

    // MARK: Identity

    /// A row's handle: its primary key, or minus the temporary key of an unsaved object.
    static func handle(for id: ManagedObjectID) -> Int64 {
        id.isTemporaryID ? -Int64(truncatingIfNeeded: id.temporaryKey & 0x7fff_ffff_ffff_ffff) : id.primaryKey
    }

    /// The ID a handle stands for.
    // Inlined: called on the controller's stored tracker, a call first copies the whole tracker to the stack
    // to pass it.
    @inline(__always)
    func objectID(handle: Int64, entity: Int32) -> ManagedObjectID? {
        if handle < 0 { return temporaryIDs[handle] }
        return ManagedObjectID(entity: model.entity(number: Int(entity)) ?? fallbackEntity, primaryKey: handle,
                               store: storeIdentity)
    }

    // MARK: Positions

    var count: Int { rows.count }

    func indexPath(forPosition position: Int) -> IndexPath? {
        guard let (section, item) = sizes.locate(position) else { return nil }
        return IndexPath(item: item, section: section)
    }

    @inline(__always)   // See objectID(handle:entity:).
    func position(of indexPath: IndexPath) -> Int? {
        // Each of IndexPath's accessors is a call into Foundation: its count once, then the two indexes
        // (`section` and `item` would each ask for the count again).
        let count = indexPath.count
        let section = count > 0 ? indexPath[0] : 0, item = count > 1 ? indexPath[1] : 0
        guard sections.indices.contains(section), item >= 0, item < sizes.counts[section] else { return nil }
        return sizes.prefix(section) + item
    }

    func sectionRange(_ section: Int) -> Range<Int>? {
        guard sections.indices.contains(section) else { return nil }
        let start = sizes.prefix(section)
        return start..<(start + sizes.counts[section])
    }

    /// The index of the first section not before `key`, and whether it is `key`'s section.
    func sectionSlot(for key: StoreValue) throws -> (index: Int, found: Bool) {
        guard hasSections else { return (0, true) }
        var low = 0, high = sections.count
        while low < high {
            let mid = (low + high) / 2
            if try ordering.sectionOrder(sections[mid].key, key) == .orderedAscending { low = mid + 1 } else { high = mid }
        }
        let found = try low < sections.count && ordering.sameSection(sections[low].key, key)
        return (low, found)
    }

    // MARK: Quiet changes (pending changes at fetch time)

    mutating func quietlyRemove(_ handle: Int64) throws {
        guard let found = rows.find(handle), let (section, _) = sizes.locate(found.position) else { return }
        rows.remove(handle)
        temporaryIDs.removeValue(forKey: handle)
        sizes.add(-1, at: section)
        if hasSections && sizes.counts[section] == 0 {
            sections.remove(at: section)
            sizes.removeSlots([section])
        }
    }

    mutating func quietlyInsert(handle: Int64, entity: Int32, keys: [StoreValue], id: ManagedObjectID) throws {
        let section = try placeSection(for: keys)
        try rows.insert(handle: handle, entity: entity, keys: keys, less: ordering.less)
        if handle < 0 { temporaryIDs[handle] = id }
        sizes.add(1, at: section.index)
    }

    /// The section for a row's keys, created (empty) if missing.
    private mutating func placeSection(for keys: [StoreValue]) throws -> (index: Int, created: Bool) {
        guard hasSections else { return (0, false) }
        let key = keys[0]
        let (index, found) = try sectionSlot(for: key)
        if found { return (index, false) }
        sections.insert(Section(key: key, name: ordering.sectionName(for: key), uid: nextUID), at: index)
        nextUID += 1
        sizes.insertSlot(0, at: index)
        return (index, true)
    }

    // MARK: Incremental changes

    /// Applies changed rows and reports, for each, its kind and its old and new index paths, plus the
    /// sections deleted (old indexes) and inserted (new indexes).
    mutating func apply(_ candidates: [Candidate]) throws -> Outcome {
        var outcome = Outcome()
        // Classify against the old state; old index paths come from it.
        struct Work { var candidate: Int; var kind: Outcome.Kind; var old: IndexPath?; var oldHandle: Int64? }
        var work: [Work] = []
        var touchedSections: [Int: (oldIndex: Int, key: StoreValue)] = [:]   // by uid
        for (index, candidate) in candidates.enumerated() {
            var old: (position: Int, keys: [StoreValue])?
            if let handle = candidate.oldHandle, let found = rows.find(handle) { old = (found.position, found.keys) }
            let kind: Outcome.Kind
            switch (old, candidate.new) {
            case (nil, nil): continue
            case (nil, _?): kind = .insert
            case (_?, nil): kind = .delete
            case (let old?, let new?):
                kind = (candidate.oldHandle == new.handle && old.keys.elementsEqual(new.keys) { $0.isStoreEqual(to: $1) })
                    ? .update : .move
            }
            var oldPath: IndexPath?
            if let old {
                oldPath = indexPath(forPosition: old.position)
                if let section = oldPath?.section, kind != .update {
                    touchedSections[sections[section].uid] = (section, sections[section].key)
                }
            }
            work.append(Work(candidate: index, kind: kind, old: oldPath, oldHandle: candidate.oldHandle))
        }
        guard !work.isEmpty else { return outcome }
        // Remove deleted and moving rows.
        for item in work where item.kind == .delete || item.kind == .move {
            guard let handle = item.oldHandle, let section = item.old?.section else { continue }
            rows.remove(handle)
            temporaryIDs.removeValue(forKey: handle)
            sizes.add(-1, at: section)
        }
        // Insert new and moving rows, creating sections as needed.
        var createdSections: [StoreValue] = []
        for item in work where item.kind == .insert || item.kind == .move {
            guard let new = candidates[item.candidate].new else { continue }
            let section = try placeSection(for: new.keys)
            if section.created { createdSections.append(new.keys[0]) }
            try rows.insert(handle: new.handle, entity: new.entity, keys: new.keys, less: ordering.less)
            if new.handle < 0 { temporaryIDs[new.handle] = new.id }
            sizes.add(1, at: section.index)
        }
        // Sections left empty go (only sections that lost rows can be empty).
        if hasSections {
            var emptied: [Int] = []
            for (uid, touched) in touchedSections {
                let (index, found) = try sectionSlot(for: touched.key)
                guard found, sections[index].uid == uid, sizes.counts[index] == 0 else { continue }
                outcome.deletedSections.append((touched.oldIndex, sections[index].name))
                emptied.append(index)
            }
            if !emptied.isEmpty {
                for index in emptied.sorted(by: >) { sections.remove(at: index) }
                sizes.removeSlots(emptied)
            }
            for key in createdSections {
                let (index, found) = try sectionSlot(for: key)
                if found { outcome.insertedSections.append((index, sections[index].name)) }
            }
            outcome.deletedSections.sort { $0.index < $1.index }
            outcome.insertedSections.sort { $0.index < $1.index }
        }
        // New index paths from the new state.
        for item in work {
            var newPath: IndexPath?
            if item.kind != .delete, let new = candidates[item.candidate].new, let found = rows.find(new.handle) {
                newPath = indexPath(forPosition: found.position)
            }
            outcome.items.append(Outcome.Item(candidate: item.candidate, kind: item.kind, oldIndexPath: item.old,
                                              newIndexPath: newPath))
        }
        return outcome
    }
}
