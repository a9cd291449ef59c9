import Foundation
import OpenCoreData

/// Local changes the server has not acknowledged yet: what ``SyncMergePolicy/localChangesWin`` protects from
/// pulled values, and the local deletes a pulled upsert must not undo.
struct PendingLocalChanges {
    /// Object → the properties changed locally (nil: all of them, as for a local insert).
    var changedKeys: [ManagedObjectID: Set<String>?] = [:]
    /// Objects deleted locally.
    var deleted: Set<ManagedObjectID> = []

    /// What `transactions` (local history after the pushed mark) changed, leaving out `author`'s saves
    /// except their deletes: those a delete rule caused when a pulled delete was applied are pushed like
    /// local ones (see ``PushBuilder``), so a pulled upsert must not bring their objects back either.
    init(_ transactions: [PersistentHistoryTransaction], excludingAuthor author: String) {
        for transaction in transactions {
            let mine = transaction.author == author
            for change in transaction.changes ?? [] where !mine || change.changeType == .delete {
                switch change.changeType {
                case .insert: changedKeys[change.changedObjectID] = .some(nil)
                case .update:
                    guard let keys = change.updatedProperties else {
                        changedKeys[change.changedObjectID] = .some(nil)
                        continue
                    }
                    if case .some(.some(let known)) = changedKeys[change.changedObjectID] {
                        changedKeys[change.changedObjectID] = .some(known.union(keys))
                    } else if changedKeys[change.changedObjectID] == nil {
                        changedKeys[change.changedObjectID] = .some(keys)
                    }
                case .delete: deleted.insert(change.changedObjectID)
                }
            }
        }
    }

    /// Whether the local value of `key` of `object` is to be kept.
    func keepsLocal(_ key: String, of object: ManagedObjectID) -> Bool {
        guard let entry = changedKeys[object] else { return false }
        guard let keys = entry else { return true }
        return keys.contains(key)
    }
}
