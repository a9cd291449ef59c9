import Foundation
import Testing
@testable import OpenCoreData

@Suite struct ContextHierarchyTests {
    @Test func childSavePushesIntoParentNotTheStore() throws {
        let stack = try TestStack(model: TestModels.todo())
        let parent = stack.context(.privateQueue)
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try child.performAndWait {
            let list = try child.insertNewObject(forEntityName: "TodoList")
            try list.setValue("From child", forKey: "title")
            let item = try child.insertNewObject(forEntityName: "Item")
            try item.setValue("Child item", forKey: "name")
            try item.setValue(list, forKey: "list")
            try child.save()
            #expect(!child.hasChanges)
        }
        #expect(parent.performAndWait { parent.hasChanges })
        #expect(try FetchPlanCount.count(stack, "TodoList") == 0)
        try parent.performAndWait {
            let lists = try parent.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))
            #expect(lists.count == 1)
            let items = try lists[0].value(forKey: "items") as? Set<ManagedObject>
            #expect(items?.count == 1)
            try parent.save()
        }
        #expect(try FetchPlanCount.count(stack, "TodoList") == 1)
        #expect(try FetchPlanCount.count(stack, "Item") == 1)
    }

    @Test func childSeesParentUnsavedChanges() throws {
        let stack = try TestStack(model: TestModels.todo())
        let parent = stack.context()
        let item = try parent.insertNewObject(forEntityName: "Item")
        try item.setValue("saved", forKey: "name")
        try parent.save()
        try item.setValue("unsaved", forKey: "name")
        let child = ManagedObjectContext(concurrencyType: .confinement)
        child.parent = parent
        let copy = try child.existingObject(with: item.objectID)
        #expect(try copy.value(forKey: "name") as? String == "unsaved")
        let fetched = try child.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
        #expect(try fetched.map { try $0.value(forKey: "name") as? String } == ["unsaved"])
    }

    @Test func privateQueueContextsRunOnTheirQueueAndMergeAutomatically() async throws {
        let stack = try TestStack(model: TestModels.todo())
        let reader = stack.context(.privateQueue)
        reader.automaticallyMergesChangesFromParent = true
        let writer = stack.context(.privateQueue)
        let id: ManagedObjectID = try await writer.perform {
            let item = try writer.insertNewObject(forEntityName: "Item")
            try item.setValue("v1", forKey: "name")
            try writer.save()
            return item.objectID
        }
        #expect(!id.isTemporaryID)
        let first: String? = try await reader.perform {
            try reader.existingObject(with: id).value(forKey: "name") as? String
        }
        #expect(first == "v1")
        var saves = writer.didSaveChanges.makeAsyncIterator()
        try await writer.perform {
            try writer.existingObject(with: id).setValue("v2", forKey: "name")
            try writer.save()
        }
        let saved = await saves.next()
        #expect(saved?.updatedObjectIDs == [id])
        // The save queues the merge on the reader's queue before it returns: a perform queued after the save
        // runs after the merge and sees it (no waiting on the clock).
        let second: String? = try await reader.perform {
            try reader.existingObject(with: id).value(forKey: "name") as? String
        }
        #expect(second == "v2")
    }

    @Test func objectIDsResolveThroughURIs() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue("x", forKey: "name")
        #expect(item.objectID.uriRepresentation().absoluteString.hasPrefix("x-coredata:///Item/t"))
        try context.save()
        let uri = item.objectID.uriRepresentation()
        #expect(uri.absoluteString.hasSuffix("/Item/p1"))
        let id = try #require(stack.coordinator.managedObjectID(forURIRepresentation: uri))
        #expect(id == item.objectID)
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: URL(string: "x-coredata://nope/Item/p1")!) == nil)
        let other = stack.context()
        #expect(try other.existingObject(with: id).value(forKey: "name") as? String == "x")
        #expect(other.registeredObject(for: id) != nil)
    }

    @Test func deletedRowsGiveClearErrorsForFaults() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue("x", forKey: "name")
        try context.save()
        let other = stack.context()
        let fault = try other.object(with: item.objectID)
        #expect(fault.isFault)
        context.delete(item)
        try context.save()
        #expect(throws: ObjectGraphError.self) { try fault.value(forKey: "name") }
        #expect(throws: ObjectGraphError.self) { try other.existingObject(with: item.objectID) }
    }
}
