import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Store files are outside input: what they carry beyond Core Data's layout must not act on the library's
/// writes, their metadata must not be skipped, and opening one must not change it.
@Suite struct HostileStoreTests {
    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel { EntityDescription("Item") { Attribute("name", .string) } }
    }

    /// A store file holding `names` as items, written and closed.
    private func store(with names: [String], in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Hostile.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for name in names { try context.insertNewObject(forEntityName: "Item").setValue(name, forKey: "name") }
        try context.save()
        return url
    }

    private func alter(_ url: URL, _ sql: String, arguments: StatementArguments = []) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { try $0.execute(sql: sql, arguments: arguments) }
        try queue.close()
    }

    private func names(in url: URL, options: StoreOptions = StoreOptions()) throws -> [String] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).compactMap {
            try $0.value(forKey: "name") as? String
        }.sorted()
    }

    @Test(arguments: [
        ("CREATE TRIGGER EVIL BEFORE INSERT ON ZITEM BEGIN SELECT RAISE(IGNORE); END", "trigger EVIL on ZITEM"),
        ("CREATE TRIGGER WIPE AFTER INSERT ON ZITEM BEGIN DELETE FROM Z_METADATA; END", "trigger WIPE on ZITEM"),
        ("CREATE VIEW PEEK AS SELECT ZNAME FROM ZITEM", "view PEEK"),
        ("CREATE TABLE STOLEN (name TEXT)", "table STOLEN"),
    ])
    func objectsNobodyMadeStopWritableOpensAndLeaveReadsPossible(_ sql: String, _ named: String) throws {
        let directory = TemporaryDirectory()
        let url = try store(with: ["kept"], in: directory)
        try alter(url, sql)
        let before = try Data(contentsOf: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        #expect {
            try coordinator.addPersistentStore(type: .sqlite, at: url)
        } throws: { error in
            guard case StoreError.foreignSchemaObjects(url.path, let objects) = error else { return false }
            return objects == [named]
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try names(in: url, options: StoreOptions(readOnly: true)) == ["kept"])
        // The caller who accepts the risk by name may write.
        #expect(try names(in: url, options: StoreOptions(allowsForeignSchemaObjects: true)) == ["kept"])
    }

    @Test func coreDataOwnTablesAndIndexesAreTolerated() throws {
        let directory = TemporaryDirectory()
        let url = try store(with: ["kept"], in: directory)
        for sql in ["CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY)", "CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY)",
                    "CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY)", "CREATE TABLE Z_9OTHERS (Z_9A INTEGER)",
                    "CREATE INDEX ZITEM_BY_NAME ON ZITEM (ZNAME)"] {
            try alter(url, sql)
        }
        #expect(try names(in: url) == ["kept"])
    }

    @Test func aStoreWithoutMetadataPlistIsCheckedNotSkipped() throws {
        let directory = TemporaryDirectory()
        let url = try store(with: ["kept"], in: directory)
        try alter(url, "UPDATE Z_METADATA SET Z_PLIST = NULL")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        #expect {
            try coordinator.addPersistentStore(type: .sqlite, at: url)
        } throws: { error in
            guard case StoreError.incompatibleModel(_, let differences) = error else { return false }
            return differences.contains { $0.contains("Z_PLIST is NULL") }
        }
        // Reading stays possible, as for any store whose tables fit the model.
        #expect(try names(in: url, options: StoreOptions(readOnly: true)) == ["kept"])
    }

    @Test func openingWritableWithoutSavingLeavesTheFileAlone() throws {
        let directory = TemporaryDirectory()
        let url = try store(with: ["kept", "also kept"], in: directory)
        let before = try Data(contentsOf: url)
        #expect(try names(in: url) == ["also kept", "kept"])
        let after = try Data(contentsOf: url)
        #expect(after.count == before.count)
        // Bytes 40-43: the schema cookie, which changes whenever the schema does.
        #expect(after[40..<44] == before[40..<44])
        #expect(after == before)
    }
}
