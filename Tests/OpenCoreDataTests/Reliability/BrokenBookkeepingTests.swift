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
            var caught: Error?
            do { try context.save() } catch { caught = error }
            #expect(caught != nil, "the save reused a key in use")
            // Nothing of it written; the existing rows as they were.
            let names = try queue.read { try String.fetchAll($0, sql: "SELECT ZNAME FROM ZITEM ORDER BY ZNAME") }
            #expect(names == ["i0", "i1", "i2", "i3", "i4"], "error \(String(describing: caught)), rows \(names)")
            withKnownIssue("a key collision is reported as a uniqueness validation failure, not as corrupt bookkeeping") {
                guard case StoreError.corrupt? = caught else {
                    Issue.record("expected StoreError.corrupt, got \(String(describing: caught))")
                    return
                }
            }
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
            withKnownIssue("a store without metadata opens with a new random UUID each time, breaking object URIs") {
                #expect(errors.count == 2 || Set(identifiers).count == 1,
                        "opened \(identifiers.count) times with identifiers \(identifiers)")
            }
        }
    }
}
