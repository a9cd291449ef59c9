import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct SaveAndFetchTests {
    @Test func everyAttributeTypeRoundTripsThroughAFile() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
        let uuid = UUID()
        try item.setValue("Milk", forKey: "name")
        try item.setValue(date, forKey: "createdAt")
        try item.setValue(true, forKey: "done")
        try item.setValue(7, forKey: "priority")
        try item.setValue(Int32(-5), forKey: "count")
        try item.setValue(Int64.max, forKey: "big")
        try item.setValue(2.5, forKey: "score")
        try item.setValue(Float(0.25), forKey: "ratio")
        try item.setValue(Decimal(string: "12.34")!, forKey: "price")
        try item.setValue(Data([0, 1, 2, 255]), forKey: "blob")
        try item.setValue(uuid, forKey: "uuid")
        try item.setValue(URL(string: "https://example.com/a?b=c")!, forKey: "link")
        #expect(item.objectID.isTemporaryID)
        try context.save()
        #expect(!item.objectID.isTemporaryID)
        #expect(!context.hasChanges)

        // A second coordinator on the same file sees exactly what was written.
        let other = PersistentStoreCoordinator(managedObjectModel: stack.model)
        try other.addPersistentStore(type: .sqlite, at: stack.url)
        let reader = ManagedObjectContext(concurrencyType: .confinement)
        reader.persistentStoreCoordinator = other
        let fetched = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
        #expect(fetched.count == 1)
        let copy = try #require(fetched.first)
        #expect(try copy.value(forKey: "name") as? String == "Milk")
        #expect(try copy.value(forKey: "createdAt") as? Date == date)
        #expect(try copy.value(forKey: "done") as? Bool == true)
        #expect(try copy.value(forKey: "priority") as? Int16 == 7)
        #expect(try copy.value(forKey: "count") as? Int32 == -5)
        #expect(try copy.value(forKey: "big") as? Int64 == Int64.max)
        #expect(try copy.value(forKey: "score") as? Double == 2.5)
        #expect(try copy.value(forKey: "ratio") as? Float == 0.25)
        #expect(try copy.value(forKey: "price") as? Decimal == Decimal(string: "12.34"))
        #expect(try copy.value(forKey: "blob") as? Data == Data([0, 1, 2, 255]))
        #expect(try copy.value(forKey: "uuid") as? UUID == uuid)
        #expect(try copy.value(forKey: "link") as? URL == URL(string: "https://example.com/a?b=c"))

        // The row is where the layout says: ZITEM with Z_PK, Z_ENT, Z_OPT and dates as seconds since 2001.
        let queue = try DatabaseQueue(path: stack.url.path)
        try queue.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATEDAT FROM ZITEM"))
            #expect(row["Z_PK"] as Int64 == copy.objectID.primaryKey)
            #expect(row["Z_ENT"] as Int == stack.model.entitiesByName["Item"]!.entityNumber)
            #expect(row["Z_OPT"] as Int == 1)
            #expect(row["ZCREATEDAT"] as Double == 123_456.5)
            #expect(try Int.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'") == 1)
        }
    }

    @Test func wrongTypesAndUnknownKeysAreTypedErrors() throws {
        let stack = try TestStack(model: TestModels.todo(), inMemory: true)
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        #expect(throws: ObjectGraphError.self) { try item.setValue(3, forKey: "name") }
        #expect(throws: ObjectGraphError.self) { try item.setValue("x", forKey: "nope") }
        #expect(throws: ObjectGraphError.self) { try item.value(forKey: "nope") }
        #expect(throws: ObjectGraphError.self) { try item.setValue(70_000, forKey: "priority") }
        #expect(throws: ObjectGraphError.self) { try context.insertNewObject(forEntityName: "Nope") }
        do {
            try item.setValue(3, forKey: "name")
        } catch let error as ObjectGraphError {
            #expect(error.description.contains("Item.name"))
        }
    }

    @Test func validationFailuresAreReportedTogether() throws {
        let stack = try TestStack(model: TestModels.todo(), inMemory: true)
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue(String(repeating: "x", count: 41), forKey: "name")
        try item.setValue(12, forKey: "priority")
        _ = try context.insertNewObject(forEntityName: "TodoList")  // title missing
        do {
            try context.save()
            Issue.record("save should fail")
        } catch ObjectGraphError.validationFailed(let failures) {
            let keys = Set(failures.map { "\($0.entity).\($0.key)" })
            #expect(keys == ["Item.name", "Item.priority", "TodoList.title"])
            // Integer bounds print as integers, as Core Data's messages do.
            #expect(failures.first { $0.key == "priority" }?.message == "12 is more than the maximum 9")
        }
        #expect(context.hasChanges)
        #expect(try FetchPlanCount.count(stack, "Item") == 0)
    }

    @Test func relationshipsKeepInversesAndPersist() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let list = try context.insertNewObject(forEntityName: "TodoList")
        try list.setValue("Groceries", forKey: "title")
        let milk = try context.insertNewObject(forEntityName: "Item")
        try milk.setValue("Milk", forKey: "name")
        let eggs = try context.insertNewObject(forEntityName: "Item")
        try eggs.setValue("Eggs", forKey: "name")
        try milk.setValue(list, forKey: "list")
        try list.add(eggs, toKey: "items")
        #expect((try list.value(forKey: "items") as? Set<ManagedObject>) == [milk, eggs])
        #expect(try eggs.value(forKey: "list") as? ManagedObject === list)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        try tag.setValue("dairy", forKey: "label")
        try milk.add(tag, toKey: "tags")
        #expect((try tag.value(forKey: "items") as? Set<ManagedObject>) == [milk])
        try context.save()

        let reader = stack.context()
        let lists = try reader.fetch(FetchRequest<ManagedObject>(entityName: "TodoList"))
        let items = try #require(try lists[0].value(forKey: "items") as? Set<ManagedObject>)
        #expect(Set(try items.map { try $0.value(forKey: "name") as? String }) == ["Milk", "Eggs"])
        let readTag = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))[0]
        let tagged = try #require(try readTag.value(forKey: "items") as? Set<ManagedObject>)
        #expect(try tagged.map { try $0.value(forKey: "name") as? String } == ["Milk"])

        // Moving an item to another list updates both lists.
        let other = try reader.insertNewObject(forEntityName: "TodoList")
        try other.setValue("Other", forKey: "title")
        let readMilk = try #require(items.first { (try? $0.value(forKey: "name") as? String) == "Milk" })
        try readMilk.setValue(other, forKey: "list")
        #expect((try lists[0].value(forKey: "items") as? Set<ManagedObject>)?.count == 1)
        #expect((try other.value(forKey: "items") as? Set<ManagedObject>) == [readMilk])
        try reader.save()
        let queue = try DatabaseQueue(path: stack.url.path)
        let counts = try queue.read { db in
            try Int.fetchAll(db, sql: "SELECT COUNT(*) FROM ZITEM GROUP BY ZLIST ORDER BY ZLIST")
        }
        #expect(counts == [1, 1])
    }

    @Test func deleteRulesCascadeNullifyAndDeny() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let list = try context.insertNewObject(forEntityName: "TodoList")
        try list.setValue("L", forKey: "title")
        var items: [ManagedObject] = []
        for index in 0..<3 {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("i\(index)", forKey: "name")
            try item.setValue(list, forKey: "list")
            items.append(item)
        }
        let tag = try context.insertNewObject(forEntityName: "Tag")
        try items[0].add(tag, toKey: "tags")
        try context.save()

        // Deny: a tag with items cannot go.
        context.delete(tag)
        #expect(throws: ObjectGraphError.self) { try context.save() }
        context.rollback()
        #expect(!tag.isDeleted)

        // Cascade: deleting the list deletes its items; the join rows go with them.
        context.delete(list)
        #expect(items.allSatisfy { $0.isDeleted })
        try context.save()
        let queue = try DatabaseQueue(path: stack.url.path)
        let joinTable = stack.model.schema.joinTables[0].name
        let counts = try queue.read { db in
            [try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZITEM"),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZTODOLIST"),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(joinTable)")]
        }
        #expect(counts == [0, 0, 0])
        #expect((try tag.value(forKey: "items") as? Set<ManagedObject>)?.isEmpty == true)
    }

    @Test func sortsThroughToOneAndLoadsBatchesLazily() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        for index in 0..<100 {
            let info = try context.insertNewObject(forEntityName: "FailedBankInfo")
            try info.setValue("Bank \(index)", forKey: "name")
            let details = try context.insertNewObject(forEntityName: "FailedBankDetails")
            try details.setValue(Date(timeIntervalSinceReferenceDate: Double(index * 86_400)), forKey: "closeDate")
            try info.setValue(details, forKey: "details")
        }
        try context.save()
        let reader = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        request.sortDescriptors = [QuerySortDescriptor(key: "details.closeDate", ascending: false)]
        request.fetchBatchSize = 20
        let results = try reader.fetch(request)
        #expect(results.count == 100)
        #expect(reader.registeredObjects.isEmpty)
        #expect(try results[0].value(forKey: "name") as? String == "Bank 99")
        #expect(reader.registeredObjects.count == 20)
        #expect(try results[99].value(forKey: "name") as? String == "Bank 0")
        #expect(reader.registeredObjects.count == 40)
        let names = try results.map { try $0.value(forKey: "name") as! String }
        #expect(names == (0..<100).reversed().map { "Bank \($0)" })
    }

    @Test func pendingChangesShowInFetches() throws {
        let stack = try TestStack(model: TestModels.todo(), inMemory: true)
        let context = stack.context()
        for name in ["b", "d"] {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue(name, forKey: "name")
        }
        try context.save()
        let added = try context.insertNewObject(forEntityName: "Item")
        try added.setValue("a", forKey: "name")
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        var names = try context.fetch(request).map { try $0.value(forKey: "name") as! String }
        #expect(names == ["a", "b", "d"])
        let existing = try context.fetch(request)[1]
        try existing.setValue("e", forKey: "name")
        names = try context.fetch(request).map { try $0.value(forKey: "name") as! String }
        #expect(names == ["a", "d", "e"])
        context.delete(existing)
        names = try context.fetch(request).map { try $0.value(forKey: "name") as! String }
        #expect(names == ["a", "d"])
        #expect(try context.count(for: request) == 2)
        request.includesPendingChanges = false
        #expect(try context.count(for: request) == 2)
        names = try context.fetch(request).map { try $0.value(forKey: "name") as! String }
        // Store order and membership, with the objects' in-memory values (as in Core Data).
        #expect(names == ["e", "d"])
    }
}

enum FetchPlanCount {
    static func count(_ stack: TestStack, _ entity: String) throws -> Int {
        let context = stack.context()
        return try context.count(for: FetchRequest<ManagedObject>(entityName: entity))
    }
}

@Suite struct PrefetchingTests {
    @Test func prefetchedRelationshipsCostOneQueryPerBatch() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        for index in 0..<50 {
            let info = try context.insertNewObject(forEntityName: "FailedBankInfo")
            try info.setValue("Bank \(index)", forKey: "name")
            let details = try context.insertNewObject(forEntityName: "FailedBankDetails")
            try details.setValue(Int32(index), forKey: "zip")
            try info.setValue(details, forKey: "details")
        }
        try context.save()
        let store = try #require(stack.coordinator.persistentStores[0] as? SQLiteStore)
        for batchSize in [0, 20] {
            let reader = stack.context()
            let request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
            request.sortDescriptors = [QuerySortDescriptor(key: "name")]
            request.fetchBatchSize = batchSize
            request.relationshipKeyPathsForPrefetching = ["details"]
            let before = store.readCount.load(ordering: .relaxed)
            let results = try reader.fetch(request)
            let zips = try results.map { try $0.value(forKeyPath: "details.zip") as? Int32 }
            #expect(zips.compactMap { $0 }.count == 50)
            let reads = store.readCount.load(ordering: .relaxed) - before
            // Unbatched: the fetch and one prefetch. Batched: the ID query, then 3 batches × (rows + details).
            #expect(reads == (batchSize == 0 ? 2 : 7))
        }
    }
}

@Suite struct RegistryTrimTests {
    @Test func objectsNobodyHoldsAreForgottenAndHeldOrChangedOnesKept() throws {
        let stack = try TestStack(model: TestModels.todo(), inMemory: true)
        let writer = stack.context()
        let reader = stack.context()
        reader.registryTrimFloor = 50
        var kept: ManagedObject?
        var edited: ManagedObjectID?
        var live: [ManagedObject] = []
        for round in 0..<30 {
            // Another context replaces the rows: the reader's old objects are of rows that are gone.
            for object in live { writer.delete(object) }
            live = try (0..<10).map { index in
                let item = try writer.insertNewObject(forEntityName: "Item")
                try item.setValue("r\(round)-\(index)", forKey: "name")
                return item
            }
            try writer.save()
            let fetched = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            #expect(fetched.count >= 10)  // 11 once the edited object's row is gone: unsaved edits still show
            if round == 0 {
                kept = fetched[0]
                try fetched[1].setValue("edited", forKey: "name")
                edited = fetched[1].objectID
            }
        }
        // Without trimming the reader would hold 300 objects; it keeps about the threshold's worth.
        #expect(reader.registeredObjects.count <= 110)
        #expect(reader.registeredObject(for: kept!.objectID) === kept)
        #expect(try reader.registeredObject(for: edited!)?.value(forKey: "name") as? String == "edited")
    }
}
