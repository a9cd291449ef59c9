import Foundation
import Testing
import GRDB
@testable import OpenCoreData

/// The debug-build invariant checks of the fast-path structures: each reports a broken invariant in words
/// (broken on purpose through a test-only hook), and each runs by itself after the mutations a real SQLite
/// fetch drives.
@Suite struct InvariantCheckTests {
    static func savedItems(_ count: Int, in stack: TestStack) throws -> [ManagedObjectID] {
        let context = stack.context()
        let items = try (0..<count).map { index in
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(index)", forKey: "name")
            return item
        }
        try context.save()
        return items.map(\.objectID)
    }

    @Test func aRowBlockReportsACellReferringPastItsSideValues() {
        let block = RowBlock.make(values: [Int64(1).storeValue, "one".storeValue, 2.5.storeValue,
                                           Int64(2).storeValue, "two".storeValue, StoreValue.null], width: 3)
        #expect(block.invariantViolations() == [])
        block.breakSideReferenceForTesting(at: 3)
        #expect(block.invariantViolations() == ["cell 3 refers to side value 3 of 2"])
        #expect(block.invariantViolations(fromCell: 4) == [])
    }

    @Test func theRegistryReportsAMiscountedPage() throws {
        let model = try TestModels.todo()
        let entity = try #require(model.entitiesByName["Item"])
        var registry = ObjectRegistry()
        let store = StoreIdentity(uuid: "INVARIANTS")
        let ids = (1...3).map { ManagedObjectID(entity: entity, primaryKey: Int64($0), store: store) }
        for id in ids { registry[id] = ManagedObject(entity: entity, id: id) }
        #expect(registry.invariantViolations() == [])
        registry.breakPageCountForTesting(around: ids[0])
        #expect(registry.invariantViolations(around: ids[1]) == ["table 0 page 0 counts 4, holds 3"])
        #expect(registry.invariantViolations().contains("table 0 page 0 counts 4, holds 3"))
    }

    @Test func theSparePoolReportsASpareThatMayNotBeReused() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        var pool = SparePool()
        #expect(pool.invariantViolations() == [])
        // A plain ManagedObject, still registered: reuse is not allowed for its class.
        pool.add(item)
        #expect(pool.invariantViolations() == ["spare 0 (\(item.objectID)) is kept for reuse but may not be given another row"])
        pool.objects.removeAll()
    }

    @Test func aBatchedResultReportsAnObjectInTheWrongSlot() throws {
        let stack = try TestStack(model: TestModels.todo())
        _ = try Self.savedItems(10, in: stack)
        let context = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name", ascending: true)]
        request.fetchBatchSize = 4
        let results = try context.fetch(request) as FetchResults<ManagedObject>
        guard case .batched(let batched) = results.storage else {
            Issue.record("not a batched result")
            return
        }
        let first = results[0]
        #expect(batched.invariantViolations() == [])
        batched.breakSlotForTesting(1, with: first)
        #expect(batched.invariantViolations() == ["slot 1 holds \(first.objectID), not \(batched.id(at: 1))"])
        // Batch 1 (positions 4 to 7) was never read, so its slots must all be nil.
        batched.breakSlotForTesting(5, with: first)
        #expect(batched.invariantViolations(batches: 1..<2).contains("slot 5 holds an object in batch 1, never written"))
    }

    @Test func theChecksRunAfterTheMutationsAFetchDrives() throws {
        let stack = try TestStack(model: TestModels.todo())
        let ids = try Self.savedItems(40, in: stack)
        let before = ["ObjectRegistry", "RowBlockBuilder", "BatchedObjects"].map { InvariantCheck.runs(of: $0) }
        let context = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.fetchBatchSize = 8
        let results = try context.fetch(request) as FetchResults<ManagedObject>
        #expect(results.map(\.objectID).count == ids.count)
        let after = ["ObjectRegistry", "RowBlockBuilder", "BatchedObjects"].map { InvariantCheck.runs(of: $0) }
        for (name, (was, now)) in zip(["ObjectRegistry", "RowBlockBuilder", "BatchedObjects"], zip(before, after)) {
            #expect(now > was, "\(name) was not checked")
        }
    }
}
