import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Tables Core Data adds beside the model's, for persistent history (`ATRANSACTION`, `ACHANGE`,
/// `ATRANSACTIONSTRING`) and CloudKit mirroring (`ANSCK…`, with their entities numbered from 16000 up in
/// `Z_PRIMARYKEY`), are tolerated when reading and left exactly as they were by opening, fetching, saving
/// and batch requests of a store that does not track history. Query generations keep nothing in the file
/// (they are SQLite read transactions), so there is no table of theirs to keep.
@Suite struct CoreDataSideTablesTests {
    /// A todo store with persistent history written by a save, and CloudKit mirroring tables made by hand
    /// as Core Data lays them out (names and columns from public readers of such stores).
    static func store(in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Mirrored.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for title in ["home", "work"] {
            let list = try context.insertNewObject(forEntityName: "TodoList")
            try list.setValue(title, forKey: "title")
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("\(title) item", forKey: "name")
            try item.setValue(list, forKey: "list")
        }
        try context.save()
        coordinator.persistentStores.forEach(coordinator.remove)
        try DatabaseQueue(path: url.path).write { db in
            try db.execute(sql: """
                CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER,
                    ZENTITYPK INTEGER, ZCKRECORDID VARCHAR, ZENCODEDRECORD BLOB);
                CREATE TABLE ANSCKEXPORTEDOBJECT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTYPE INTEGER,
                    ZCKRECORDNAME VARCHAR);
                CREATE INDEX ANSCKRECORDMETADATA_ZENTITYID_ZENTITYPK ON ANSCKRECORDMETADATA (ZENTITYID, ZENTITYPK);
                INSERT INTO ANSCKRECORDMETADATA VALUES (1, 16010, 1, 1, 1, 'record-1', x'0102'), (2, 16010, 1, 1, 2, 'record-2', NULL);
                INSERT INTO ANSCKEXPORTEDOBJECT VALUES (1, 16011, 1, 0, 'record-1');
                INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (16010, 'NSCKRecordMetadata', 0, 2),
                    (16011, 'NSCKExportedObject', 0, 1);
                """)
        }
        return url
    }

    /// Every row and the schema of the side tables, and Core Data's own rows of `Z_PRIMARYKEY`.
    static func sideTables(_ url: URL) throws -> [String] {
        try DatabaseQueue(path: url.path).read { db in
            var lines = try String.fetchAll(db, sql: """
                SELECT type || ' ' || name || ': ' || sql FROM sqlite_master
                WHERE tbl_name IN ('ATRANSACTION', 'ACHANGE', 'ATRANSACTIONSTRING') OR tbl_name LIKE 'ANSCK%' ORDER BY name
                """)
            for table in ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING", "ANSCKRECORDMETADATA", "ANSCKEXPORTEDOBJECT"] {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY Z_PK") { lines.append("\(table) \(row)") }
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000 ORDER BY Z_ENT") {
                lines.append("Z_PRIMARYKEY \(row)")
            }
            return lines
        }
    }

    static func titles(_ context: ManagedObjectContext) throws -> [String] {
        let request = OpenCoreData.FetchRequest<ManagedObject>(entityName: "TodoList")
        request.sortDescriptors = [QuerySortDescriptor(key: "title")]
        return try context.fetch(request).map { try #require($0.value(forKey: "title") as? String) }
    }

    @Test func openingFetchingSavingAndBatchesLeaveThemIntact() throws {
        let directory = TemporaryDirectory()
        let url = try Self.store(in: directory)
        let before = try Self.sideTables(url)
        #expect(before.contains { $0.hasPrefix("ATRANSACTION ") } && before.contains { $0.hasPrefix("ANSCKRECORDMETADATA ") })

        let readOnly = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
        try readOnly.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: true))
        let reader = ManagedObjectContext(concurrencyType: .confinement)
        reader.persistentStoreCoordinator = readOnly
        #expect(try Self.titles(reader) == ["home", "work"])
        readOnly.persistentStores.forEach(readOnly.remove)

        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let lists = try context.fetch(OpenCoreData.FetchRequest<ManagedObject>(entityName: "TodoList"))
        try lists[0].setValue("changed", forKey: "title")
        let added = try context.insertNewObject(forEntityName: "TodoList")
        try added.setValue("added", forKey: "title")
        try context.save()
        let update = BatchUpdateRequest(entityName: "Item")
        update.propertiesToUpdate = ["done": true]
        try context.execute(update)
        let delete = OpenCoreData.FetchRequest<ManagedObject>(entityName: "TodoList")
        delete.predicate = try QueryPredicate(format: "title == 'added'")
        try context.execute(BatchDeleteRequest(fetchRequest: delete))
        coordinator.persistentStores.forEach(coordinator.remove)

        #expect(try Self.sideTables(url) == before)
        let check = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
        try check.addPersistentStore(type: .sqlite, at: url)
        let checker = ManagedObjectContext(concurrencyType: .confinement)
        checker.persistentStoreCoordinator = check
        #expect(try Self.titles(checker).sorted() == ["changed", lists[1].value(forKey: "title") as? String ?? "?"].sorted())
    }
}
