import Foundation
import Testing
@testable import OpenCoreData

/// `stalenessInterval` (when a fault takes a row other contexts read) and `shouldDeleteInaccessibleFaults`
/// (what a fault whose row is gone reads as), against a real SQLite file.
@Suite struct ContextStalenessTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Note") { Attribute("text", .string) }
        }
    }

    /// A saved note whose row the coordinator's cache holds with other text, so a read shows where it came from.
    func noteWithCachedRow() throws -> (stack: TestStack, id: ManagedObjectID) {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let note = try setup.insertNewObject(forEntityName: "Note")
        try note.setValue("stored", forKey: "text")
        try setup.save()
        let store = try stack.coordinator.primaryStore()
        var row = try #require(try stack.coordinator.rows(for: [note.objectID]).first)
        guard case .attribute(_, let column) = note.entity.storage[note.entity.slotByName["text"]!] else {
            throw ObjectGraphError.unknownKey(entity: "Note", key: "text")
        }
        row[column] = "cached".storeValue
        stack.coordinator.rowCache.store(rows: [row], table: note.entity.tableName, token: store.externalChangeToken())
        return (stack, note.objectID)
    }

    func text(in context: ManagedObjectContext, _ id: ManagedObjectID) throws -> String? {
        try context.object(with: id).value(forKey: "text") as? String
    }

    @Test func byDefaultAFaultTakesACachedRowOfAnyAge() throws {
        let (stack, id) = try noteWithCachedRow()
        #expect(try text(in: stack.context(), id) == "cached")
    }

    @Test func aZeroIntervalAlwaysReadsTheStore() throws {
        let (stack, id) = try noteWithCachedRow()
        let context = stack.context()
        context.stalenessInterval = 0
        #expect(try text(in: context, id) == "stored")
    }

    @Test func aPositiveIntervalTakesRowsYoungerThanIt() throws {
        let (stack, id) = try noteWithCachedRow()
        let context = stack.context()
        context.stalenessInterval = 3600
        #expect(try text(in: context, id) == "cached")
    }

    /// Another context deletes the row after this one made a fault for it.
    /// (The context is returned too: objects hold their context weakly.)
    func faultWhoseRowIsGone(deletesInaccessible: Bool?) throws -> (ManagedObjectContext, ManagedObject) {
        let stack = try TestStack(model: Self.model())
        let setup = stack.context()
        let note = try setup.insertNewObject(forEntityName: "Note")
        try note.setValue("gone", forKey: "text")
        try setup.save()
        let context = stack.context()
        if let deletesInaccessible { context.shouldDeleteInaccessibleFaults = deletesInaccessible }
        let fault = try context.object(with: note.objectID)
        setup.delete(note)
        try setup.save()
        return (context, fault)
    }

    @Test func anInaccessibleFaultReadsAsDeletedAndEmpty() throws {
        let (context, fault) = try faultWhoseRowIsGone(deletesInaccessible: true)
        defer { withExtendedLifetime(context) {} }
        #expect(try fault.value(forKey: "text") == nil)
        #expect(fault.isDeleted)
    }

    @Test func byDefaultAnInaccessibleFaultThrowsWhenRead() throws {
        let (context, fault) = try faultWhoseRowIsGone(deletesInaccessible: nil)
        defer { withExtendedLifetime(context) {} }
        #expect(throws: ObjectGraphError.self) { try fault.value(forKey: "text") }
    }

    @Test func refreshAllObjectsTurnsUnchangedObjectsIntoFaultsAndKeepsChanges() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        let kept = try context.insertNewObject(forEntityName: "Note")
        let changed = try context.insertNewObject(forEntityName: "Note")
        try context.save()
        try changed.setValue("edited", forKey: "text")
        context.refreshAllObjects()
        #expect(kept.isFault)
        #expect(try changed.value(forKey: "text") as? String == "edited")
        #expect(context.hasChanges)
    }
}
