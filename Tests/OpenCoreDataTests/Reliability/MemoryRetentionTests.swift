import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// What the soak's memory growth came down to, one cause per test.
    @Suite struct MemoryRetentionTests {
        /// A long-lived context (a view context) fetches a table another context keeps replacing. Core Data
        /// holds unchanged registered objects weakly, so they go when the app lets go of them; ours trims the
        /// objects nobody holds whenever its registry has doubled (here from a small floor, so the test sees
        /// it; the default floor is 10,000 objects).
        @Test func longLivedContextForgetsObjectsItNoLongerHolds() throws {
            let stack = try TestStack(model: TestModels.todo())
            let writer = stack.context(), reader = stack.context()
            reader.registryTrimFloor = 20
            for round in 0..<30 {
                for old in try writer.fetch(FetchRequest<ManagedObject>(entityName: "Item")) { writer.delete(old) }
                for index in 0..<10 {
                    try writer.insertNewObject(forEntityName: "Item").setValue("r\(round)-\(index)", forKey: "name")
                }
                try writer.save()
                let fetched = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
                #expect(fetched.count == 10)
            }
            // Nothing outside the context holds the objects any more.
            let registered = reader.registeredObjects.count
            #expect(registered <= 40, "\(registered) objects registered for 10 rows")
        }

        /// The coordinator's row cache stays within its capacity after rows were removed from it (a save
        /// removes and re-stores the rows it wrote, a delete removes them).
        @Test func rowCacheStaysWithinItsCapacityAfterRemovals() throws {
            let model = try TestModels.todo()
            let entity = try #require(model.entitiesByName["Tag"])
            let store = StoreIdentity(uuid: "CACHE")
            func id(_ key: Int64) -> ManagedObjectID { ManagedObjectID(entity: entity, primaryKey: key, store: store) }
            func row(_ key: Int64) -> RowValues { [key.storeValue, 3.storeValue, 1.storeValue, .null] }
            let cache = RowCache(capacity: 10)
            cache.store(rows: (1...10).map(row), table: entity.tableName, token: 0)
            cache.remove((1...10).map(id))
            cache.store(rows: (11...20).map(row), table: entity.tableName, token: 0)
            cache.store(rows: [row(21)], table: entity.tableName, token: 0)
            let held = (1...21).filter { cache.row(for: id(Int64($0)), token: 0) != nil }.count
            #expect(held <= 10, "\(held) rows held with a capacity of 10")
            #expect(cache.row(for: id(21), token: 0) != nil)
        }
    }
}
