import Foundation
import Testing
@testable import OpenCoreData

/// Core Data's context notifications: objects-did-change posted to whoever observes it, did-save with the
/// saved objects and their IDs, and merging from a did-save notification.
@Suite struct ContextNotificationTests {
    typealias Key = ManagedObjectContext.NotificationKey

    /// Collects the notifications named `name` that `context` posts while `body` runs.
    static func notes(_ name: Notification.Name, of context: ManagedObjectContext,
                      during body: () throws -> Void) rethrows -> [Notification] {
        let collected = Collector<Notification>()
        let token = NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { collected.append($0) }
        defer { NotificationCenter.default.removeObserver(token) }
        try body()
        return collected.values
    }

    static func objects(_ note: Notification?, _ key: Key) -> Set<ManagedObject> {
        note?.userInfo?[key.rawValue] as? Set<ManagedObject> ?? []
    }

    static func bank(_ context: ManagedObjectContext, _ name: String) throws -> ManagedObject {
        let bank = try context.insertNewObject(forEntityName: "FailedBankInfo")
        try bank.setValue(name, forKey: "name")
        return bank
    }

    /// A store with two saved banks, "Kept" and "Gone", and the context that saved them.
    static func twoSavedBanks() throws -> (TestStack, ManagedObjectContext, kept: ManagedObject, gone: ManagedObject) {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        let kept = try bank(context, "Kept")
        let gone = try bank(context, "Gone")
        try context.save()
        return (stack, context, kept, gone)
    }

    @Test func objectsDidChangeIsPostedWithoutOptingIn() throws {
        let (stack, context, kept, gone) = try Self.twoSavedBanks()
        defer { withExtendedLifetime(stack) {} }
        var added: ManagedObject?
        let notes = try Self.notes(ManagedObjectContext.didChangeObjectsNotification, of: context) {
            added = try Self.bank(context, "Added")
            try kept.setValue("Kept, renamed", forKey: "name")
            context.delete(gone)
            context.processPendingChanges()
        }
        #expect(notes.count == 1)
        #expect(Self.objects(notes.first, .insertedObjects) == [try #require(added)])
        #expect(Self.objects(notes.first, .updatedObjects) == [kept])
        #expect(Self.objects(notes.first, .deletedObjects) == [gone])
        #expect(notes.first?.userInfo?[ManagedObjectContext.didChangeKey] is ObjectsDidChange)

        // Nothing changed: nothing posted.
        let quiet = Self.notes(ManagedObjectContext.didChangeObjectsNotification, of: context) { context.processPendingChanges() }
        #expect(quiet.isEmpty)
    }

    @Test func didSaveCarriesTheSavedObjectsAndTheirIDs() throws {
        let (stack, context, kept, gone) = try Self.twoSavedBanks()
        defer { withExtendedLifetime(stack) {} }
        var added: ManagedObject?
        var idNotes: [Notification] = []
        let objectNotes = try Self.notes(ManagedObjectContext.didSaveObjectsNotification, of: context) {
            idNotes = try Self.notes(ManagedObjectContext.didSaveObjectIDsNotification, of: context) {
                added = try Self.bank(context, "Added")
                try kept.setValue("Kept, renamed", forKey: "name")
                context.delete(gone)
                try context.save()
            }
        }
        let new = try #require(added)
        #expect(objectNotes.count == 1 && idNotes.count == 1)
        #expect(Self.objects(objectNotes.first, .insertedObjects) == [new])
        #expect(Self.objects(objectNotes.first, .updatedObjects) == [kept])
        #expect(Self.objects(objectNotes.first, .deletedObjects) == [gone])
        #expect(new.objectID.isTemporaryID == false)
        let info = idNotes.first?.userInfo
        #expect(info?[Key.insertedObjectIDs.rawValue] as? Set<ManagedObjectID> == [new.objectID])
        #expect(info?[Key.updatedObjectIDs.rawValue] as? Set<ManagedObjectID> == [kept.objectID])
        #expect(info?[Key.deletedObjectIDs.rawValue] as? Set<ManagedObjectID> == [gone.objectID])
        #expect((info?[ManagedObjectContext.didSaveKey] as? ContextDidSave)?.updatedObjectIDs == [kept.objectID])
    }

    @Test func mergeChangesTakesTheDidSaveNotification() throws {
        let stack = try TestStack(model: TestModels.banks())
        let writer = stack.context()
        let kept = try Self.bank(writer, "Old name")
        let gone = try Self.bank(writer, "Gone")
        try writer.save()

        let reader = stack.context()
        let readerKept = try reader.existingObject(with: kept.objectID)
        let readerGone = try reader.existingObject(with: gone.objectID)
        #expect(try readerKept.value(forKey: "name") as? String == "Old name")

        let notes = try Self.notes(ManagedObjectContext.didSaveObjectsNotification, of: writer) {
            try kept.setValue("New name", forKey: "name")
            writer.delete(gone)
            try writer.save()
        }
        reader.mergeChanges(fromContextDidSave: try #require(notes.first))
        #expect(try readerKept.value(forKey: "name") as? String == "New name")
        #expect(readerGone.isDeleted)
    }

    /// A notification an app built itself, with only Core Data's ID keys, merges too.
    @Test func mergeChangesTakesANotificationWithIDKeysOnly() throws {
        let stack = try TestStack(model: TestModels.banks())
        let writer = stack.context()
        let gone = try Self.bank(writer, "Gone")
        try writer.save()
        let reader = stack.context()
        let readerGone = try reader.existingObject(with: gone.objectID)
        _ = try readerGone.value(forKey: "name")

        writer.delete(gone)
        try writer.save()
        let note = Notification(name: ManagedObjectContext.didSaveObjectIDsNotification, object: nil,
                                userInfo: [Key.deletedObjectIDs.rawValue: [gone.objectID]])
        reader.mergeChanges(fromContextDidSave: note)
        #expect(readerGone.isDeleted)
        #expect(reader.registeredObject(for: gone.objectID) == nil)
    }
}
