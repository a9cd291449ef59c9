import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData

/// Loads by primary key through the store's own reader connection give exactly the rows a plain
/// one-key-at-a-time read through GRDB gives, see every committed save, and defer to the pool inside a
/// write.
@Suite struct KeyedRowReaderTests {
    /// A file store with `count` items (names and some nil scores), a few of them deleted again.
    private func populated(count: Int) throws -> (TestStack, [ManagedObjectID]) {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        var items: [ManagedObject] = []
        for index in 0..<count {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(index) ✓", forKey: "name")
            if index % 3 != 0 { try item.setValue(Double(index) / 7, forKey: "score") }
            items.append(item)
        }
        try context.save()
        for item in items where item.objectID.primaryKey % 11 == 0 { context.delete(item) }
        try context.save()
        return (stack, items.map(\.objectID))
    }

    /// The naive reference: each key on its own, through GRDB's row API.
    private func referenceRows(_ store: SQLiteStore, _ ids: [ManagedObjectID]) throws -> [Int64: [StoreValue]] {
        let table = try #require(store.schema.table(named: "ZITEM"))
        return try store.read { db in
            var rows: [Int64: [StoreValue]] = [:]
            for id in ids {
                if let row = try Row.fetchOne(db, sql: "SELECT \(store.selectList(for: table)) FROM ZITEM t0 WHERE t0.Z_PK = ?",
                                              arguments: [id.primaryKey]) {
                    rows[id.primaryKey] = Array(row.databaseValues.map(StoreValue.init))
                }
            }
            return rows
        }
    }

    @Test func randomKeySetsReadWhatTheReferenceReads() throws {
        let (stack, ids) = try populated(count: 1_200)
        let store = try stack.coordinator.primaryStore()
        #expect((store.keyedReader != nil) == KeyedRowReader.isEnabled)
        let missing = ManagedObjectID(entity: ids[0].entity, primaryKey: 999_999, store: ids[0].store)
        var generator = SeededGenerator(seed: 42)
        for round in 0..<60 {
            // Sizes around the 20-row batch and past the 500-key chunk; repeated counts reuse statements.
            let size = [1, 20, 20, 37, 500, 501, 1_100][round % 7]
            var chosen = Array(ids.shuffled(using: &generator).prefix(size))
            if round % 5 == 0 { chosen.append(missing) }
            let rows = try store.rows(for: chosen)
            let expected = try referenceRows(store, chosen)
            #expect(rows.count == expected.count)
            for row in rows { #expect(expected[row.primaryKey] == Array(row)) }
        }
    }

    @Test func batchesSeeEverySaveCommittedMeanwhile() throws {
        let (stack, ids) = try populated(count: 50)
        let store = try stack.coordinator.primaryStore()
        // Keys are not handed out in insertion order: take an item `populated` did not delete.
        let index = try #require(ids.indices.first { ids[$0].primaryKey % 11 != 0 })
        let id = ids[index]
        let column = try #require(store.schema.table(named: "ZITEM")?.columnIndexByName["ZNAME"])
        #expect(try store.rows(for: [id]).first?[column] == "Item \(index) ✓".storeValue)

        let context = stack.context()
        try context.object(with: id).setValue("renamed", forKey: "name")
        try context.save()
        #expect(try store.rows(for: [id]).first?[column] == "renamed".storeValue)

        // Another coordinator on the same file stands for another process.
        let other = PersistentStoreCoordinator(managedObjectModel: stack.model)
        try other.addPersistentStore(type: .sqlite, at: stack.url)
        let writer = ManagedObjectContext(concurrencyType: .confinement)
        writer.persistentStoreCoordinator = other
        try writer.object(with: id).setValue("from elsewhere", forKey: "name")
        try writer.save()
        #expect(try store.rows(for: [id]).first?[column] == "from elsewhere".storeValue)
    }

    @Test func aLoadInsideAWriteSeesTheWrite() throws {
        let (stack, ids) = try populated(count: 10)
        let store = try stack.coordinator.primaryStore()
        let column = try #require(store.schema.table(named: "ZITEM")?.columnIndexByName["ZNAME"])
        _ = try store.rows(for: [ids[2]])
        let seen: StoreValue? = try store.write { db in
            try db.execute(sql: "UPDATE ZITEM SET ZNAME = 'uncommitted' WHERE Z_PK = ?", arguments: [ids[2].primaryKey])
            return try store.rows(for: [ids[2]]).first?[column]
        }
        #expect(seen == "uncommitted".storeValue)
    }

    @Test func concurrentLoadsAllReadTheirRows() throws {
        let (stack, ids) = try populated(count: 400)
        let store = try stack.coordinator.primaryStore()
        let expected = try referenceRows(store, ids)
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var generator = SeededGenerator(seed: UInt64(worker))
            for _ in 0..<50 {
                let chosen = Array(ids.shuffled(using: &generator).prefix(20))
                guard let rows = try? store.rows(for: chosen) else { failures.withLock { $0 += 1 }; continue }
                let wrong = rows.count != chosen.filter { expected[$0.primaryKey] != nil }.count
                    || rows.contains { expected[$0.primaryKey] != Array($0) }
                if wrong { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test func inMemoryStoresReadThroughThePool() throws {
        let stack = try TestStack(model: TestModels.todo(), inMemory: true)
        let context = stack.context()
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue("kept", forKey: "name")
        try context.save()
        let store = try stack.coordinator.primaryStore()
        #expect(store.keyedReader == nil)
        #expect(try store.rows(for: [item.objectID]).count == 1)
    }
}
