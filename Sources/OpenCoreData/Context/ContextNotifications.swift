import Foundation

/// Core Data's context notifications: their names and the `userInfo` keys of their payloads.
///
/// A context posts, on its own queue:
/// - ``ManagedObjectContext/didChangeObjectsNotification`` from `processPendingChanges()` (a save calls
///   it) and after a merge, rollback or reset, with the changed objects under ``NotificationKey``'s
///   object keys and the whole ``ObjectsDidChange`` under ``ManagedObjectContext/didChangeKey``;
/// - ``ManagedObjectContext/didSaveObjectsNotification`` after each save, with the saved objects under
///   the object keys;
/// - ``ManagedObjectContext/didSaveObjectIDsNotification`` after each save, with their IDs under the ID
///   keys.
///
/// Both save notifications also carry the save's ``ContextDidSave`` under
/// ``ManagedObjectContext/didSaveKey``: that is the `Sendable` form to hand to other queues. The objects
/// in a notification belong to the posting context: read their `objectID` anywhere, anything else on its
/// queue.
extension ManagedObjectContext {
    /// The `userInfo` keys of the context notifications, with Core Data's raw values.
    public enum NotificationKey: String, Sendable, CaseIterable {
        /// `Set<ManagedObject>` of inserted objects.
        case insertedObjects = "inserted"
        /// `Set<ManagedObject>` of updated objects.
        case updatedObjects = "updated"
        /// `Set<ManagedObject>` of deleted objects.
        case deletedObjects = "deleted"
        /// `Set<ManagedObject>` of objects re-read from the store (merges, refreshes).
        case refreshedObjects = "refreshed"
        /// `[ManagedObjectID]` of every object the context held, when all may have changed (rollback, reset).
        case invalidatedAllObjects = "invalidatedAll"
        /// `Set<ManagedObjectID>` of inserted objects' IDs.
        case insertedObjectIDs = "inserted_objectIDs"
        /// `Set<ManagedObjectID>` of updated objects' IDs.
        case updatedObjectIDs = "updated_objectIDs"
        /// `Set<ManagedObjectID>` of deleted objects' IDs.
        case deletedObjectIDs = "deleted_objectIDs"
    }

    /// Core Data's `didChangeObjectsNotification` (the same notification as ``objectsDidChangeNotification``).
    public static var didChangeObjectsNotification: Notification.Name { objectsDidChangeNotification }

    /// Posted after each save with the saved objects (Core Data's `didSaveObjectsNotification`).
    public static let didSaveObjectsNotification = Notification.Name("NSManagingContextDidSaveChangesNotification")

    /// The `userInfo` of an objects-did-change notification.
    func objectsDidChangeUserInfo(_ change: ObjectsDidChange) -> [AnyHashable: Any] {
        var info: [AnyHashable: Any] = [Self.didChangeKey: change]
        if !change.inserted.isEmpty { info[NotificationKey.insertedObjects.rawValue] = change.inserted }
        if !change.updated.isEmpty { info[NotificationKey.updatedObjects.rawValue] = change.updated }
        if !change.deleted.isEmpty { info[NotificationKey.deletedObjects.rawValue] = change.deleted }
        if !change.refreshed.isEmpty { info[NotificationKey.refreshedObjects.rawValue] = change.refreshed }
        if change.invalidatedAll { info[NotificationKey.invalidatedAllObjects.rawValue] = registry.values.map(\.objectID) }
        return info
    }

    /// Tells everyone of a save: the `didSaveChanges` stream, then the two save notifications.
    func announceSave(_ saved: ContextDidSave, inserted: Set<ManagedObject>, updated: Set<ManagedObject>,
                      deleted: Set<ManagedObject>) {
        didSaveContinuations.yield(saved)
        NotificationCenter.default.post(name: Self.didSaveObjectsNotification, object: self, userInfo: [
            Self.didSaveKey: saved,
            NotificationKey.insertedObjects.rawValue: inserted,
            NotificationKey.updatedObjects.rawValue: updated,
            NotificationKey.deletedObjects.rawValue: deleted,
        ])
        NotificationCenter.default.post(name: Self.didSaveObjectIDsNotification, object: self, userInfo: [
            Self.didSaveKey: saved,
            NotificationKey.insertedObjectIDs.rawValue: saved.insertedObjectIDs,
            NotificationKey.updatedObjectIDs.rawValue: saved.updatedObjectIDs,
            NotificationKey.deletedObjectIDs.rawValue: saved.deletedObjectIDs,
        ])
    }

    /// Core Data's `mergeChanges(fromContextDidSave:)` taking the notification: a did-save notification
    /// of any context (objects or IDs), or one an app built with the object or ID keys. Keys it does not
    /// know are ignored, as Core Data does.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        mergeChanges(fromContextDidSave: Self.contextDidSave(from: notification))
    }

    /// The save a did-save notification tells of: its ``ContextDidSave`` when it carries one, else the
    /// IDs under the object and ID keys.
    static func contextDidSave(from notification: Notification) -> ContextDidSave {
        let info = notification.userInfo ?? [:]
        if let saved = info[didSaveKey] as? ContextDidSave { return saved }
        func ids(_ objects: NotificationKey, _ ids: NotificationKey) -> Set<ManagedObjectID> {
            var result = Set<ManagedObjectID>()
            if let found = info[objects.rawValue] as? Set<ManagedObject> { result.formUnion(found.map(\.objectID)) }
            if let found = info[objects.rawValue] as? [ManagedObject] { result.formUnion(found.map(\.objectID)) }
            if let found = info[ids.rawValue] as? Set<ManagedObjectID> { result.formUnion(found) }
            if let found = info[ids.rawValue] as? [ManagedObjectID] { result.formUnion(found) }
            return result
        }
        return ContextDidSave(inserted: ids(.insertedObjects, .insertedObjectIDs),
                              updated: ids(.updatedObjects, .updatedObjectIDs),
                              deleted: ids(.deletedObjects, .deletedObjectIDs))
    }
}
