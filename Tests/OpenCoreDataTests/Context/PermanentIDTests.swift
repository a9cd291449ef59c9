import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// `obtainPermanentIDs(for:)` and the renaming a save does: every object ends up registered under its
/// new ID only, the others keep theirs, and relationship changes follow the rename.
@Suite struct PermanentIDTests {
    /// Checks the registry against the objects: each found under its ID, nothing else registered.
    static func expectRegistry(_ context: ManagedObjectContext, holds objects: [ManagedObject]) {
        #expect(context.registeredObjects == Set(objects))
        for object in objects { #expect(context.registeredObject(for: object.objectID) === object) }
    }

    /// New objects get their keys in the order they were inserted, whatever happened to others in between
    /// (deleted before the save, deleted and inserted again), in a context and through a child context.
    @Test func keysFollowInsertionOrder() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        var generator = SeededGenerator(seed: 7)
        var kept: [ManagedObject] = []
        var removed: [ManagedObject] = []
        for index in 0..<300 {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("n\(index)", forKey: "name")
            kept.append(item)
            if Int.random(in: 0..<10, using: &generator) == 0, let victim = kept.randomElement(using: &generator) {
                context.delete(victim)
                kept.removeAll { $0 === victim }
                removed.append(victim)
            }
        }
        // One deleted object comes back: it keeps its first place in the order.
        let returning = try #require(removed.first)
        context.insert(returning)
        let firstIndex = { (object: ManagedObject) in Int((try? object.value(forKey: "name") as? String)?.dropFirst() ?? "") ?? -1 }
        kept.append(returning)
        kept.sort { firstIndex($0) < firstIndex($1) }
        try context.save()
        let keys = kept.map(\.objectID.primaryKey)
        #expect(keys == keys.sorted() && Set(keys).count == keys.count, "keys out of insertion order")

        let child = ManagedObjectContext(concurrencyType: .confinement)
        child.parent = context
        let names = (0..<50).map { "child \($0)" }
        for name in names { try child.insertNewObject(forEntityName: "Item").setValue(name, forKey: "name") }
        try child.save()
        try context.save()
        let fetch = FetchRequest<ManagedObject>(entityName: "Item")
        fetch.predicate = try QueryPredicate(format: "name BEGINSWITH 'child'")
        let saved = try context.fetch(fetch).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
            .map { try $0.value(forKey: "name") as? String }
        #expect(saved == names)
    }

    @Test func aContextOfOnlyNewObjectsIsRenamedWhole() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let items = try (0..<50).map { index -> ManagedObject in
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("item \(index)", forKey: "name")
            return item
        }
        let temporary = items.map(\.objectID)
        // A repeated object is named once.
        try context.obtainPermanentIDs(for: items + [items[3]])
        #expect(items.allSatisfy { !$0.objectID.isTemporaryID })
        #expect(Set(items.map(\.objectID)).count == items.count)
        Self.expectRegistry(context, holds: items)
        #expect(temporary.allSatisfy { context.registeredObject(for: $0) == nil })
        try context.save()
        let keys = try DatabaseQueue(path: stack.url.path).read { try Int64.fetchAll($0, sql: "SELECT Z_PK FROM ZITEM ORDER BY Z_PK") }
        #expect(Set(keys) == Set(items.map(\.objectID.primaryKey)))
    }

    @Test func someNewObjectsAmongOthersAreRenamedAlone() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let saved = try context.insertNewObject(forEntityName: "Item")
        try saved.setValue("saved", forKey: "name")
        try context.save()
        let items = try (0..<6).map { index -> ManagedObject in
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("new \(index)", forKey: "name")
            return item
        }
        try context.obtainPermanentIDs(for: Array(items[0..<3]) + [saved])
        #expect(items[0..<3].allSatisfy { !$0.objectID.isTemporaryID })
        #expect(items[3...].allSatisfy { $0.objectID.isTemporaryID })
        Self.expectRegistry(context, holds: [saved] + items)
        try context.save()
        Self.expectRegistry(context, holds: [saved] + items)
        #expect(try DatabaseQueue(path: stack.url.path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM ZITEM") } == 7)
    }

    @Test func relationshipChangesFollowTheRename() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let list = try context.insertNewObject(forEntityName: "TodoList")
        try list.setValue("groceries", forKey: "title")
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue("milk", forKey: "name")
        try item.setValue(list, forKey: "list")
        try context.obtainPermanentIDs(for: [list])
        #expect(try item.value(forKey: "list") as? ManagedObject === list)
        #expect((try list.value(forKey: "items") as? Set<ManagedObject>) == [item])
        try context.save()
        let fresh = stack.context()
        let readItem = try fresh.existingObject(with: item.objectID)
        let readList = try #require(try readItem.value(forKey: "list") as? ManagedObject)
        #expect(readList.objectID == list.objectID)
    }
}
