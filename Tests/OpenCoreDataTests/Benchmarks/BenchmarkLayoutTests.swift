import Foundation
import GRDB
import Testing
import OpenCoreData

/// The contract ocd-bench's raw side relies on: the library lays the benchmark model out as
/// ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATEDAT, ZDONE, ZGROUP, ZCATEGORY), reads rows written there by plain SQL,
/// and its saves leave rows that plain SQL reads back. No timing here: that is the command's job.
@Suite struct BenchmarkLayoutTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Item") {
                Attribute("name", .string)
                Attribute("createdAt", .date)
                Attribute("done", .boolean, default: false)
                Attribute("group", .integer64, default: Int64(0))
                Attribute("category", .integer64, default: Int64(0))
            }
        }
    }

    @Test func rawRowsAndLibraryObjectsAgree() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Bench.sqlite")
        let model = try Self.model()
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
            coordinator.remove(store)
        }

        // Fill with plain SQL, as the benchmark's fixtures do.
        do {
            let queue = try DatabaseQueue(path: url.path)
            let columns = try queue.read { db in
                try Row.fetchAll(db, sql: "PRAGMA table_info(ZITEM)").map { $0["name"] as String }
            }
            #expect(columns == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZCREATEDAT", "ZDONE", "ZGROUP", "ZCATEGORY"])
            let mode = try queue.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
            #expect(mode?.lowercased() == "wal")
            try queue.write { db in
                let entity = try Int.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'") ?? -1
                #expect(entity == 1)
                for i in 1...8 {
                    try db.execute(sql: "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATEDAT, ZDONE, ZGROUP, ZCATEGORY) VALUES (?, ?, 1, ?, ?, ?, ?, ?)",
                                   arguments: [i, entity, "Item \(i)", 700_000_000.0 + Double(i), i % 3 == 0, i % 4, i % 50])
                }
                try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 8 WHERE Z_ENT = ?", arguments: [entity])
            }
        }

        // The library reads them, batched or not, and writes back in place.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            #expect(all.count == 8)
            let third = try #require(all.first { ($0.objectID.primaryKey) == 3 })
            #expect(try third.value(forKey: "name") as? String == "Item 3")
            #expect(try third.value(forKey: "createdAt") as? Date == Date(timeIntervalSinceReferenceDate: 700_000_003))
            #expect(try third.value(forKey: "done") as? Bool == true)
            #expect(try third.value(forKey: "group") as? Int64 == 3)
            #expect(try third.value(forKey: "category") as? Int64 == 3)

            let batched = FetchRequest<ManagedObject>(entityName: "Item")
            batched.fetchBatchSize = 3
            let lazy = try context.fetch(batched)
            #expect(lazy.objectIDs?.count == 8)
            #expect(try lazy[7].value(forKey: "name") as? String == "Item 8")

            try third.setValue(false, forKey: "done")
            let added = try context.insertNewObject(forEntityName: "Item")
            try added.setValue("Item 9", forKey: "name")
            try context.save()
            #expect(added.objectID.primaryKey == 9)
        }

        let check = try DatabaseQueue(path: url.path)
        try check.read { db in
            let row = try #require(try Row.fetchOne(db, sql: "SELECT Z_OPT, ZDONE FROM ZITEM WHERE Z_PK = 3"))
            #expect(row["Z_OPT"] as Int64 == 2)
            #expect(row["ZDONE"] as Int64 == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZITEM") == 9)
        }
    }
}
