import Foundation

/// Objects changed in a context since its last `processPendingChanges()`.
struct ChangeRecord {
    var inserted: Set<ManagedObject> = []
    var updated: Set<ManagedObject> = []
    var deleted: Set<ManagedObject> = []
    /// Temporary IDs replaced by permanent ones (old → new).
    var renamed: [ManagedObjectID: ManagedObjectID] = [:]
    /// The slots each updated object changed in since the last report; nil for an object changed in ways
    /// not told slot by slot (a child's save pushed in).
    var changedSlots: [ObjectIdentifier: Set<Int>?] = [:]

    /// Records that `object` changed in `slot` (nil: in slots not told).
    mutating func noteChange(of object: ManagedObject, slot: Int?) {
        let identity = ObjectIdentifier(object)
        guard let slot else { changedSlots[identity] = .some(nil); return }
        switch changedSlots[identity] {
        case .none: changedSlots[identity] = [slot]
        case .some(.some(var slots)):
            slots.insert(slot)
            changedSlots[identity] = slots
        case .some(.none): break
        }
    }
    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && renamed.isEmpty }
}

/// What changed in a context's objects (Core Data's objects-did-change notification).
public struct ObjectsDidChange {
    /// Objects inserted into the context.
    public var inserted: Set<ManagedObject> = []
    /// Objects whose values changed.
    public var updated: Set<ManagedObject> = []
    /// Objects deleted from the context.
    public var deleted: Set<ManagedObject> = []
    /// Objects re-read from the store (merged saves, refreshes).
    public var refreshed: Set<ManagedObject> = []
    /// Every object may have changed (rollback, reset).
    public var invalidatedAll = false
    /// Temporary IDs that became permanent since the last report (old → new).
    public var renamedObjectIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// For a merge (`mergeChanges(fromContextDidSave:)`): every ID the merged save touched, including
    /// objects this context does not hold or holds as faults (which are not in the sets above).
    public var mergedChanges: ContextDidSave?
    /// For the updated objects of a context's own edits: the keys each changed since the last report
    /// (absent when not known).
    var changedKeysByObject: [ObjectIdentifier: Set<String>] = [:]

    /// The keys `object` changed in this report, as far as known; nil when unknown (or any key may have
    /// changed: the object is new, or a merged save did not say).
    func changedKeys(of object: ManagedObject) -> Set<String>? {
        if inserted.contains(object) { return nil }
        if let merged = mergedChanges {
            let id = object.objectID
            if merged.insertedObjectIDs.contains(id) { return nil }
            guard merged.updatedObjectIDs.contains(id), let keys = merged.changedKeys[id], !keys.isEmpty else { return nil }
            // Unsaved changes of this context stay on top of the merged values; they did not change now.
            return keys
        }
        return changedKeysByObject[ObjectIdentifier(object)]
    }
}

/// What a save wrote: the IDs of inserted, updated and deleted objects. It is `Sendable`, so it travels
/// between contexts (`mergeChanges(fromContextDidSave:)`) and through notifications.
public struct ContextDidSave: Sendable {
    /// The objects the save inserted (their permanent IDs).
    public var insertedObjectIDs: Set<ManagedObjectID> = []
    /// The objects whose changed values the save wrote.
    public var updatedObjectIDs: Set<ManagedObjectID> = []
    /// The objects the save deleted.
    public var deletedObjectIDs: Set<ManagedObjectID> = []
    /// For each updated object, the keys that changed (empty when unknown, as after batch updates).
    public var changedKeys: [ManagedObjectID: Set<String>] {
        get { changedKeyGroups.dictionary }
        _modify {
            var dictionary = changedKeyGroups.takeDictionary()
            defer { changedKeyGroups = ChangedKeyGroups(dictionary) }
            yield &dictionary
        }
    }
    /// `changedKeys` as a save records it: cheap to build, turned into the dictionary when first read.
    var changedKeyGroups = ChangedKeyGroups()

    /// A report of these inserted, updated and deleted objects (with no changed keys known), for merging
    /// changes made elsewhere, such as a batch request's.
    public init(inserted: Set<ManagedObjectID> = [], updated: Set<ManagedObjectID> = [],
                deleted: Set<ManagedObjectID> = []) {
        insertedObjectIDs = inserted
        updatedObjectIDs = updated
        deletedObjectIDs = deleted
    }

    /// Whether the save wrote nothing.
    public var isEmpty: Bool { insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty }
}

/// The changed keys of a save's updated objects, recorded as runs of objects that changed the same keys
/// (a save of many objects usually has one or a few), and made into a dictionary only when someone
/// reads it: most saves are reported to nobody who asks.
struct ChangedKeyGroups: Sendable {
    private enum Storage: Sendable {
        case dictionary([ManagedObjectID: Set<String>])
        case groups([(keys: Set<String>, ids: [ManagedObjectID])], Memo)
    }

    /// The dictionary made from the groups, shared by copies (the groups it was made from never change:
    /// appending makes a new memo).
    final class Memo: @unchecked Sendable {
        // @unchecked Sendable: `dictionary` is guarded by `lock`.
        private let lock = NSLock()
        private var dictionary: [ManagedObjectID: Set<String>]?
        func clear() { lock.withLock { dictionary = nil } }
        func value(_ make: () -> [ManagedObjectID: Set<String>]) -> [ManagedObjectID: Set<String>] {
            lock.withLock {
                if let dictionary { return dictionary }
                let made = make()
                dictionary = made
                return made
            }
        }
    }

    private var storage: Storage

    init(_ dictionary: [ManagedObjectID: Set<String>] = [:]) { storage = .dictionary(dictionary) }

    /// Records that `id` changed `keys`; `sameAsPrevious` says they are the keys of the previous call.
    mutating func append(_ id: ManagedObjectID, keys: Set<String>, sameAsPrevious: Bool) {
        var groups: [(keys: Set<String>, ids: [ManagedObjectID])]
        var memo: Memo
        switch storage {
        case .groups(let existing, let existingMemo): (groups, memo) = (existing, existingMemo)
        case .dictionary(let dictionary): (groups, memo) = (dictionary.map { ($0.value, [$0.key]) }, Memo())
        }
        storage = .dictionary([:])  // so `groups` and `memo` are held here only, and change in place
        if sameAsPrevious, !groups.isEmpty {
            groups[groups.count - 1].ids.append(id)
        } else {
            groups.append((keys, [id]))
        }
        // A memo no copy shares is cleared and kept; one a copy shares stays with that copy.
        if isKnownUniquelyReferenced(&memo) { memo.clear() } else { memo = Memo() }
        storage = .groups(groups, memo)
    }

    var dictionary: [ManagedObjectID: Set<String>] {
        switch storage {
        case .dictionary(let dictionary): return dictionary
        case .groups(let groups, let memo):
            return memo.value {
                var dictionary: [ManagedObjectID: Set<String>] = [:]
                dictionary.reserveCapacity(groups.reduce(0) { $0 + $1.ids.count })
                for group in groups { for id in group.ids { dictionary[id] = group.keys } }
                return dictionary
            }
        }
    }

    /// The dictionary, leaving this value empty, so that the caller holds the only reference to it.
    mutating func takeDictionary() -> [ManagedObjectID: Set<String>] {
        let taken = dictionary
        storage = .dictionary([:])
        return taken
    }
}

/// Continuations of the AsyncStreams a context hands out.
final class ContinuationStore<Element: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `continuations` is guarded by `lock`.
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<Element>.Continuation] = [:]

    func makeStream() -> AsyncStream<Element> {
        AsyncStream { continuation in
            let id = UUID()
            lock.lock()
            continuations[id] = continuation
            lock.unlock()
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.lock()
                self.continuations.removeValue(forKey: id)
                self.lock.unlock()
            }
        }
    }

    func finish() {
        lock.lock()
        let current = Array(continuations.values)
        continuations = [:]
        lock.unlock()
        for continuation in current { continuation.finish() }
    }

    func yield(_ element: Element) {
        lock.lock()
        let current = Array(continuations.values)
        lock.unlock()
        for continuation in current { continuation.yield(element) }
    }
}

extension ManagedObjectContext {
    /// Posted after a save, with `object` the context, `userInfo[ManagedObjectContext.didSaveKey]` the
    /// ``ContextDidSave`` and the IDs under ``NotificationKey``'s ID keys (Core Data's
    /// `didSaveObjectIDsNotification`).
    public static let didSaveObjectIDsNotification = Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")
    /// The `userInfo` key holding a ``ContextDidSave``.
    public static let didSaveKey = "changes"
    /// Posted by `processPendingChanges()` when objects changed (Core Data's objects-did-change
    /// notification): the objects under ``NotificationKey``'s object keys and the whole
    /// ``ObjectsDidChange`` under `didChangeKey` (read them on the context's queue).
    public static let objectsDidChangeNotification = Notification.Name("NSObjectsChangedInManagingContextNotification")
    /// The `userInfo` key holding the ``ObjectsDidChange`` of an ``objectsDidChangeNotification``.
    public static let didChangeKey = "changes"

    /// Every save of this context, as an AsyncSequence.
    public var didSaveChanges: AsyncStream<ContextDidSave> { didSaveContinuations.makeStream() }

    /// Observes this context's object changes on its queue; returns a token for ``removeChangeObserver(_:)``.
    @discardableResult
    public func addChangeObserver(_ observer: @escaping (ManagedObjectContext, ObjectsDidChange) -> Void) -> UUID {
        let token = UUID()
        changeObservers[token] = observer
        return token
    }

    /// Stops an observer added with ``addChangeObserver(_:)``.
    public func removeChangeObserver(_ token: UUID) {
        changeObservers.removeValue(forKey: token)
    }

    /// Delivers the changes made since the last call to observers (fetched results controllers among them).
    public func processPendingChanges() {
        QueueCheck.use(of: self, "processPendingChanges()")
        // The end of an event: the undo group its changes opened closes.
        if let undoRecorder { undoRecorder.manager.endEventGroup() }
        guard !pendingChangeRecord.isEmpty else { return }
        let record = pendingChangeRecord
        pendingChangeRecord = ChangeRecord()
        var change = ObjectsDidChange(inserted: record.inserted, updated: record.updated.subtracting(record.inserted),
                                      deleted: record.deleted, renamedObjectIDs: record.renamed)
        for object in change.updated {
            guard case .some(.some(let slots)) = record.changedSlots[ObjectIdentifier(object)] else { continue }
            let properties = object.entity.allProperties
            change.changedKeysByObject[ObjectIdentifier(object)] = Set(slots.map { properties[$0].name })
        }
        notifyObservers(change)
    }

    func notifyObservers(_ change: ObjectsDidChange) {
        for observer in changeObservers.values { observer(self, change) }
        if postsObjectsDidChangeNotifications {
            NotificationCenter.default.post(name: Self.objectsDidChangeNotification, object: self,
                                            userInfo: objectsDidChangeUserInfo(change))
        }
    }
}
