import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// When the controller keeps SQLite's order as it comes, and that a store holding values of another kind
/// than the model says (another program wrote text into a number column) still gets the in-memory order.
@Suite struct ResultsOrderingTests {
    @Test func keysSQLiteOrdersLikeMemory() throws {
        let model = try TestModels.todo()
        let item = try #require(model.entitiesByName["Item"])
        func orders(_ descriptors: [QuerySortDescriptor]) throws -> [ResultsOrdering.ExactOrder]? {
            try ResultsOrdering(entity: item, sortDescriptors: descriptors).exactOrders
        }
        #expect(try orders([QuerySortDescriptor(key: "score"), QuerySortDescriptor(key: "name")]) == [.numbers, .strings])
        #expect(try orders([QuerySortDescriptor(key: "createdAt", ascending: false)]) == [.numbers])
        #expect(try orders([QuerySortDescriptor(key: "name", comparator: .caseInsensitiveCompare)]) == nil)
        #expect(try orders([QuerySortDescriptor(key: "uuid")]) == nil)

        let numbersThenStrings: [ResultsOrdering.ExactOrder] = [.numbers, .strings]
        // Rows (nil, "a"), (2, nil), (1.5, "b"): numbers and nulls, then strings and nulls.
        #expect(ResultsOrdering.sqlOrderHolds(for: [.values([.null, 2.storeValue, 1.5.storeValue]),
                                                    .values(["a".storeValue, .null, "b".storeValue])],
                                              orders: numbersThenStrings))
        #expect(ResultsOrdering.sqlOrderHolds(for: [.reals([1.5, 2]), .same("a".storeValue, count: 2)],
                                              orders: numbersThenStrings))
        #expect(ResultsOrdering.sqlOrderHolds(for: [.integers([1, 2]), .same(.null, count: 2)], orders: numbersThenStrings))
        // Text in the number key; a number in the string key (typed, repeated, boxed).
        #expect(!ResultsOrdering.sqlOrderHolds(for: [.values([1.storeValue, "text".storeValue]),
                                                     .values(["a".storeValue, "b".storeValue])],
                                               orders: numbersThenStrings))
        #expect(!ResultsOrdering.sqlOrderHolds(for: [.integers([1]), .integers([7])], orders: numbersThenStrings))
        #expect(!ResultsOrdering.sqlOrderHolds(for: [.integers([1]), .same(7.storeValue, count: 1)], orders: numbersThenStrings))
        #expect(!ResultsOrdering.sqlOrderHolds(for: [.same("x".storeValue, count: 1), .same("a".storeValue, count: 1)],
                                               orders: numbersThenStrings))
    }

    @Test func textInANumberColumnIsOrderedInMemory() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        var generator = SeededGenerator(seed: 11)
        for index in 0..<200 {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(index)", forKey: "name")
            if index % 7 != 0 { try item.setValue(Double(Int.random(in: 0..<50, using: &generator)), forKey: "score") }
        }
        try context.save()
        // Another program stores text where the model says Double; SQLite sorts text after every number.
        try stack.coordinator.primaryStore().write { db in
            try db.execute(sql: "UPDATE ZITEM SET ZSCORE = '12.5' WHERE Z_PK % 5 = 0")
            try db.execute(sql: "UPDATE ZITEM SET ZSCORE = 'x' WHERE Z_PK % 11 = 0")
        }

        let request = FetchRequest<ManagedObject>(entityName: "Item")
        let descriptor = QuerySortDescriptor(key: "score")
        request.sortDescriptors = [descriptor]
        request.fetchBatchSize = 20
        let reader = stack.context()
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: reader,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        let fetched = Array(try #require(controller.fetchedObjects))
        #expect(fetched.count == 200)
        // The in-memory order is the authority: the controller's comparison of stored values, then the key.
        // SQLite puts the text after every number; in memory '12.5' sorts as the number it reads as.
        let item = try #require(stack.model.entitiesByName["Item"])
        let ordering = try ResultsOrdering(entity: item, sortDescriptors: [descriptor])
        let stored = try stack.coordinator.primaryStore().read { db in
            try Row.fetchAll(db, sql: "SELECT Z_PK, ZSCORE FROM ZITEM").map { (key: $0[0] as Int64, value: $0[1] as StoreValue) }
        }
        let expected = try stored.sorted { lhs, rhs in
            try ordering.less([lhs.value], lhs.key, [rhs.value], rhs.key)
        }
        // Taking SQLite's order here would be wrong, which is what this test is about.
        let sqliteOrder = try stack.coordinator.primaryStore().read { db in
            try Int64.fetchAll(db, sql: "SELECT Z_PK FROM ZITEM ORDER BY ZSCORE, Z_PK")
        }
        #expect(sqliteOrder != expected.map(\.key))
        #expect(fetched.map(\.objectID.primaryKey) == expected.map(\.key))
    }
}
