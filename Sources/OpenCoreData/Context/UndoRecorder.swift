import Foundation
import OrderedCollections

/// What a context with an ``UndoManager`` records of its changes, and how it plays them back.
///
/// The context tells it before each change (`willChange`, `insert`, `delete`); it keeps, per undo group,
/// one ``UndoBatch``: the first value each (object, property) had in the group and the first place each
/// object had in the context — one record per pair, however often the pair changes, and no closure per
/// change. The batch is one action of the manager's group. Undoing it writes the recorded values back slot
/// by slot, on both sides of each relationship as recorded (the inverse's side was recorded as a change of
/// its own), so no inverse is maintained twice; each write records the value it replaces, in a new batch
/// that lands in the redo group.
///
/// Related objects are recorded as objects, not IDs: a save gives new objects permanent IDs, and an undo
/// after it must name them by those.
final class UndoRecorder {
    /// The manager the context registers with.
    let manager: UndoManager
    /// The batch the current group holds, added to while that group is open.
    private var batch: UndoBatch?
    /// Objects a playback took out of the context so far, by ID. Until the playback ends, objects still
    /// in the context may name them (the records restoring those names come later in the batch), and
    /// recording such a value must find them, not make a new fault for an ID that has no row.
    private var departed: [ManagedObjectID: ManagedObject] = [:]

    init(manager: UndoManager) { self.manager = manager }

    // MARK: Recording

    /// Records the value `object` holds in `slot` before it changes (every stored property when `slot` is
    /// nil: a change told as a whole, as a child context's save pushed in).
    func recordValue(of object: ManagedObject, slot: Int?, in context: ManagedObjectContext) {
        guard let batch = batchForRecording(in: context) else { return }
        if let slot {
            record(object, slot: slot, into: batch, in: context)
        } else {
            for slot in object.entity.storage.indices { record(object, slot: slot, into: batch, in: context) }
        }
    }

    /// Records where `object` stands in the context (outside it, in it, deleted) before an insert or delete.
    func recordLifecycle(of object: ManagedObject, in context: ManagedObjectContext) {
        guard let batch = batchForRecording(in: context) else { return }
        batch.add(UndoRecord(object: object, slot: UndoRecord.lifecycleSlot,
                             value: .lifecycle(UndoLifecycle(of: object, in: context))))
    }

    private func record(_ object: ManagedObject, slot: Int, into batch: UndoBatch, in context: ManagedObjectContext) {
        guard !batch.holds(object, slot: Int32(slot)), let value = currentValue(of: object, slot: slot, in: context) else { return }
        batch.add(UndoRecord(object: object, slot: Int32(slot), value: value))
    }

    /// The batch of the group the manager records into now, made (and registered as the group's action)
    /// on the group's first change; nil when the manager records nothing now.
    private func batchForRecording(in context: ManagedObjectContext) -> UndoBatch? {
        guard let group = manager.groupForRegistering() else { return nil }
        if let batch, batch.group === group { return batch }
        let made = UndoBatch(group: group)
        group.actions.append(UndoManager.Action(
            target: context,
            run: { target in (target as! ManagedObjectContext).playBack(made) },
            batch: made))
        batch = made
        return made
    }

    /// The value `object` holds in `slot` now, as a record keeps it; nil for a transient property, or a
    /// value that cannot be read (a fault whose row is gone).
    private func currentValue(of object: ManagedObject, slot: Int, in context: ManagedObjectContext) -> UndoValue? {
        func resolve(_ id: ManagedObjectID) -> ManagedObject? {
            context.registry[id] ?? departed[id] ?? (try? context.object(with: id))
        }
        switch object.entity.storage[slot] {
        case .attribute:
            guard let value = try? object.primitiveAttribute(atSlot: slot) else { return nil }
            return .attribute(value)
        case .toOne:
            let related: ManagedObjectID?
            do { related = try object.relatedID(atSlot: slot) } catch { return nil }
            guard let id = related else { return .toOne(nil) }
            guard let target = resolve(id) else { return nil }
            return .toOne(target)
        case .toManyByForeignKey, .toManyByJoinTable:
            guard let ids = try? object.relatedIDs(atSlot: slot) else { return nil }
            var members = ContiguousArray<ManagedObject>()
            members.reserveCapacity(ids.count)
            for id in ids {
                guard let member = resolve(id) else { return nil }
                members.append(member)
            }
            return .toMany(members)
        case .transient:
            return nil
        }
    }

    /// Lets go of the recorded changes (the context rolled back or was reset: none of them apply now).
    func removeAll() {
        batch = nil
        manager.removeAllActions()
    }

    // MARK: Playing back

    /// Writes a batch's records back, last first. Each write goes through the recorder again (of the
    /// context's current undo manager), so what it replaces becomes the redo.
    static func playBack(_ batch: UndoBatch, in context: ManagedObjectContext) {
        defer { context.undoRecorder?.departed = [:] }
        for record in batch.records.reversed() {
            let object = record.object
            switch record.value {
            case .lifecycle(let lifecycle):
                context.undoRecorder?.recordLifecycle(of: object, in: context)
                move(object, to: lifecycle, in: context)
            case .attribute(let value):
                restore(object, slot: Int(record.slot), to: .attribute(value), in: context)
            case .toOne(let target):
                restore(object, slot: Int(record.slot), to: .toOne(target?.objectID), in: context)
            case .toMany(let members):
                restore(object, slot: Int(record.slot), to: .toMany(OrderedSet(members.map(\.objectID))), in: context)
            }
        }
    }

    private static func restore(_ object: ManagedObject, slot: Int, to value: SlotValue, in context: ManagedObjectContext) {
        if object.flags.contains(.registered) && object.managedObjectContext === context {
            // Marks the object changed, so a save writes what the undo restored (also after a save).
            context.willChange(object, slot: slot)
        } else {
            context.undoRecorder?.recordValue(of: object, slot: slot, in: context)
        }
        object.changes[slot] = value
    }

    /// Moves `object` to where it stood in the context. An object whose row the store has (saved since)
    /// leaves by being deleted; one whose row is gone (its delete saved since) comes back as new.
    private static func move(_ object: ManagedObject, to target: UndoLifecycle, in context: ManagedObjectContext) {
        let current = UndoLifecycle(of: object, in: context)
        guard current != target else { return }
        if target == .outside || current == .live && object.isInserted {
            context.undoRecorder?.departed[object.objectID] = object
        }
        switch (current, target) {
        case (.live, _):
            if object.isInserted {
                context.insertedSet.remove(object)
                object.flags.remove(.inserted)
                context.unregister(object)
                if target == .outside {
                    object.flags.remove(.deleted)
                    object.managedObjectContext = nil
                } else {
                    object.flags.insert(.deleted)
                }
            } else {
                object.flags.insert(.deleted)
                context.deletedSet.insert(object)
                context.updatedSet.remove(object)
            }
            if context.tracksChanges { context.pendingChangeRecord.deleted.insert(object) }
        case (.deleted, .live):
            object.flags.remove(.deleted)
            context.deletedSet.remove(object)
            if !object.changes.isEmpty { context.updatedSet.insert(object) }
            if context.tracksChanges { context.pendingChangeRecord.updated.insert(object) }
        case (.deleted, .outside):
            // In the store and deleted there at the next save: as far out as an object with a row gets.
            break
        case (.outside, .live):
            object.managedObjectContext = context
            takeValuesOutOfRow(object)
            object.flags.remove(.deleted)
            object.flags.insert([.inserted, .registered])
            context.registry[object.objectID] = object
            context.noteInserted(object)
            if context.tracksChanges { context.pendingChangeRecord.inserted.insert(object) }
        case (.outside, .deleted):
            // Its delete was saved: it is as deleted as it gets.
            break
        case (.outside, .outside), (.deleted, .deleted):
            break
        }
    }

    /// Makes a deleted object whose delete was saved (it still has the row it was read with) hold all its
    /// values as changes, as a new object does, so it can be inserted again.
    private static func takeValuesOutOfRow(_ object: ManagedObject) {
        guard object.row != nil else { return }
        for slot in object.entity.storage.indices {
            if case .some = object.changes[slot] { continue }
            switch object.entity.storage[slot] {
            case .attribute:
                if let value = try? object.primitiveAttribute(atSlot: slot) { object.changes[slot] = .attribute(value) }
            case .toOne:
                if let id = try? object.relatedID(atSlot: slot) { object.changes[slot] = .toOne(id) }
            case .toManyByForeignKey, .toManyByJoinTable:
                // Read when the object was deleted (its delete rules read every relationship).
                if let ids = object.committedToMany[slot] { object.changes[slot] = .toMany(ids) }
            case .transient:
                break
            }
        }
        object.row = nil
        object.committedToMany = [:]
    }
}

/// Where an object stands in a context, as undo restores it.
enum UndoLifecycle: UInt8 {
    /// Not in the context: never inserted, its insert undone, a new object deleted, or its delete saved.
    case outside
    /// In the context and not deleted (new or saved).
    case live
    /// A saved object deleted, the delete not saved yet.
    case deleted

    init(of object: ManagedObject, in context: ManagedObjectContext) {
        if !object.flags.contains(.registered) || object.managedObjectContext !== context {
            self = .outside
        } else {
            self = object.isDeleted ? .deleted : .live
        }
    }
}

/// A value as an undo record keeps it: related objects by object (see ``UndoRecorder``).
enum UndoValue {
    case attribute(StoreValue)
    case toOne(ManagedObject?)
    case toMany(ContiguousArray<ManagedObject>)
    case lifecycle(UndoLifecycle)
}

/// One object's first value of one property (or its first place in the context) in an undo group.
struct UndoRecord {
    /// The slot a lifecycle record is kept under, so it is recorded once per group like a property.
    static let lifecycleSlot: Int32 = -1
    let object: ManagedObject
    let slot: Int32
    let value: UndoValue
}

/// The records of one undo group, in the order they were made.
final class UndoBatch {
    /// The group the batch is the action of; weak, as the group holds the batch (through its action).
    private(set) weak var group: UndoManager.Group?
    private(set) var records: [UndoRecord] = []
    /// Which (object, slot) pairs are recorded, while the group is open; dropped when it closes, as no
    /// record is added after that.
    private var recorded: Set<RecordKey>? = []

    private struct RecordKey: Hashable {
        let object: ObjectIdentifier
        let slot: Int32
    }

    init(group: UndoManager.Group) { self.group = group }

    func holds(_ object: ManagedObject, slot: Int32) -> Bool {
        recorded?.contains(RecordKey(object: ObjectIdentifier(object), slot: slot)) ?? false
    }

    func add(_ record: UndoRecord) {
        guard recorded?.insert(RecordKey(object: ObjectIdentifier(record.object), slot: record.slot)).inserted ?? true else { return }
        records.append(record)
    }

    /// About how many bytes the batch holds: itself, its records, the index while open, and what records
    /// keep outside themselves (long strings and blobs, to-many member lists).
    var approximateByteCount: Int {
        var bytes = 48 + 32 + records.capacity * MemoryLayout<UndoRecord>.stride
        if let recorded { bytes += 64 + recorded.capacity * (MemoryLayout<RecordKey>.stride + 1) }
        for record in records {
            switch record.value {
            case .attribute(let value):
                switch value.storage {
                case .string(let string) where string.utf8.count > 15: bytes += 32 + string.utf8.count
                case .blob(let data): bytes += 32 + data.count
                default: break
                }
            case .toMany(let members): bytes += 32 + members.capacity * 8
            case .toOne, .lifecycle: break
            }
        }
        return bytes
    }

    /// The group closed: no more records.
    func seal() {
        recorded = nil
        // An array grown by doubling may hold up to twice what it uses; a closed group keeps what it uses.
        if records.capacity - records.count > records.count / 4 {
            var fitted: [UndoRecord] = []
            fitted.reserveCapacity(records.count)
            fitted.append(contentsOf: records)
            records = fitted
        }
    }
}
