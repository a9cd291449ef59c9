import Foundation
import Testing
@testable import OpenCoreData

extension Reliability {
    /// Two coordinators on one file stand for two processes. What one writes, a context created afterwards
    /// on the other must see — whichever way it reaches the object (fetch, ID, relationship).
    @Suite struct StaleRowCacheTests {
        @Test func aNewContextSeesAnotherProcesssSave() throws {
            let stack = try TestStack(model: TestModels.todo())
            let setup = stack.context()
            let list = try setup.insertNewObject(forEntityName: "TodoList")
            try list.setValue("L", forKey: "title")
            let item = try setup.insertNewObject(forEntityName: "Item")
            try item.setValue("before", forKey: "name")
            try item.setValue(list, forKey: "list")
            try setup.save()
            let itemID = item.objectID, listID = list.objectID

            // "Process" A reads the item on a private-queue context, which fills A's row cache.
            let reader = stack.context(.privateQueue)
            try reader.performAndWait { _ = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item")) }

            // "Process" B changes it.
            let other = PersistentStoreCoordinator(managedObjectModel: stack.model)
            try other.addPersistentStore(type: .sqlite, at: stack.url)
            let writer = ManagedObjectContext(concurrencyType: .confinement)
            writer.persistentStoreCoordinator = other
            try writer.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0].setValue("after", forKey: "name")
            try writer.save()

            // A context created on A afterwards.
            let fresh = stack.context()
            let byFetch = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Item"))[0].value(forKey: "name") as? String
            #expect(byFetch == "after")
            let second = stack.context()
            let byID = try second.object(with: itemID).value(forKey: "name") as? String
            let third = stack.context()
            let items = try third.object(with: listID).value(forKey: "items") as? Set<ManagedObject> ?? []
            let byRelationship = try items.first?.value(forKey: "name") as? String
            // The row cache drops rows read before another connection committed (SQLite's data_version).
            #expect(byID == "after")
            #expect(byRelationship == "after")
        }
    }
}
