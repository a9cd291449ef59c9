import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// Stores whose Core Data bookkeeping another tool broke: the library must notice, refuse with a clear
    /// error, and write nothing half.
    @Suite struct BrokenBookkeepingTests {
        static func storeWithItems(_ stack: TestStack) throws {
            let context = stack.context()
            for index in 0..<5 { try context.insertNewObject(forEntityName: "Item").setValue("i\(index)", forKey: "name") }
            try context.save()
        }

        /// `Z_PRIMARYKEY.Z_MAX` behind the keys in use: the next keys handed out collide with existing rows.
        @Test func primaryKeyCounterBehindTheRows() throws {
            let stack = try TestStack(model: TestModels.todo())
            try Self.storeWithItems(stack)
            let queue = try DatabaseQueue(path: stack.url.path)
            try queue.write { try $0.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'Item'") }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
            try coordinator.addPersistentStore(type: .sqlite, at: stack.url)
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            try context.insertNewObject(forEntityName: "Item").setValue("new", forKey: "name")
            // Keys are reserved past both Z_MAX and the table's own highest key, so the save goes through
            // without touching the existing rows.
            try context.save()
            let names = try queue.read { try String.fetchAll($0, sql: "SELECT ZNAME FROM ZITEM ORDER BY ZNAME") }
            #expect(names == ["i0", "i1", "i2", "i3", "i4", "new"])
            let (maxKey, counter) = try queue.read { db in
                (try Int.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ZITEM") ?? 0,
                 try Int.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'") ?? 0)
            }
            #expect(counter >= maxKey)
        }

        /// No `Z_METADATA` row: the store has no identity.
        @Test func missingMetadataRowIsRefused() throws {
            let stack = try TestStack(model: TestModels.todo())
            try Self.storeWithItems(stack)
            let queue = try DatabaseQueue(path: stack.url.path)
            try queue.write { try $0.execute(sql: "DELETE FROM Z_METADATA") }
            var identifiers: [String] = []
            var errors: [Error] = []
            for _ in 0..<2 {
                let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
                do { identifiers.append(try coordinator.addPersistentStore(type: .sqlite, at: stack.url).identifier) } catch { errors.append(error) }
            }
            #expect(errors.count == 2 || Set(identifiers).count == 1,
                    "opened \(identifiers.count) times with identifiers \(identifiers)")
        }
    }
}
