import Foundation

/// Objects changed in a context since its last `processPendingChanges()`.
struct ChangeRecord {
    var inserted: Set<ManagedObject> = []
    var updated: Set<ManagedObject> = []
    var deleted: Set<ManagedObject> = []
    /// Temporary IDs replaced by permanent ones (old → new).
    var renamed: [ManagedObjectID: ManagedObjectID] = [:]
    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && renamed.isEmpty }
}

/// What changed in a context's objects (Core Data's objects-did-change notification).
public struct ObjectsDidChange {
    public var inserted: Set<ManagedObject> = []
    public var updated: Set<ManagedObject> = []
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
}

/// What a save wrote: the IDs of inserted, updated and deleted objects. It is `Sendable`, so it travels
/// between contexts (`mergeChanges(fromContextDidSave:)`) and through notifications.
public struct ContextDidSave: Sendable {
    public var insertedObjectIDs: Set<ManagedObjectID> = []
    public var updatedObjectIDs: Set<ManagedObjectID> = []
    public var deletedObjectIDs: Set<ManagedObjectID> = []
    /// For each updated object, the keys that changed (empty when unknown, as after batch updates).
    public var changedKeys: [ManagedObjectID: Set<String>] = [:]

    public init(inserted: Set<ManagedObjectID> = [], updated: Set<ManagedObjectID> = [],
                deleted: Set<ManagedObjectID> = []) {
        insertedObjectIDs = inserted
        updatedObjectIDs = updated
        deletedObjectIDs = deleted
    }

    public var isEmpty: Bool { insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty }
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
    /// Posted after a save, with `object` the context and `userInfo[ManagedObjectContext.didSaveKey]`
    /// the ``ContextDidSave``.
    public static let didSaveObjectIDsNotification = Notification.Name("OpenCoreData.ManagedObjectContextDidSaveObjectIDs")
    /// The `userInfo` key holding a ``ContextDidSave``.
    public static let didSaveKey = "changes"
    /// Posted by `processPendingChanges()` when objects changed; `userInfo[didChangeKey]` holds an
    /// ``ObjectsDidChange`` (read it on the context's queue).
    public static let objectsDidChangeNotification = Notification.Name("OpenCoreData.ManagedObjectContextObjectsDidChange")
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
        guard !pendingChangeRecord.isEmpty else { return }
        let record = pendingChangeRecord
        pendingChangeRecord = ChangeRecord()
        notifyObservers(ObjectsDidChange(inserted: record.inserted, updated: record.updated.subtracting(record.inserted),
                                         deleted: record.deleted, renamedObjectIDs: record.renamed))
    }

    func notifyObservers(_ change: ObjectsDidChange) {
        for observer in changeObservers.values { observer(self, change) }
        if postsObjectsDidChangeNotifications {
            NotificationCenter.default.post(name: Self.objectsDidChangeNotification, object: self,
                                            userInfo: [Self.didChangeKey: change])
        }
    }
}
