import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Store files are outside input: what they carry beyond Core Data's layout must not act on the library's
/// writes, their metadata must not be skipped or expand without bound, and opening one must not change it.
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

    /// The item table re-declared by another program with `clauses` after its columns (rows kept).
    private func redeclareItemTable(_ url: URL, _ clauses: String) throws {
        let columns = try DatabaseQueue(path: url.path).read { db in
            try Row.fetchAll(db, sql: "PRAGMA table_info(ZITEM)").map { row -> String in
                let name: String = row["name"], type: String = row["type"]
                return name == "Z_PK" ? "Z_PK INTEGER PRIMARY KEY" : name == "ZNAME" ? "ZNAME \(type) \(clauses)" : "\(name) \(type)"
            }
        }
        // As another program would: without GRDB's foreign-key enforcement, so a REFERENCES clause is only declared.
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        try queue.write { db in
            try db.execute(sql: """
                ALTER TABLE ZITEM RENAME TO ZOLD;
                CREATE TABLE ZITEM (\(columns.joined(separator: ", ")));
                INSERT INTO ZITEM SELECT * FROM ZOLD;
                DROP TABLE ZOLD;
                """)
        }
        try queue.close()
    }

    @Test(arguments: [
        ("UNIQUE ON CONFLICT REPLACE", "ON CONFLICT REPLACE in the declaration of table ZITEM"),
        ("UNIQUE ON CONFLICT IGNORE", "ON CONFLICT IGNORE in the declaration of table ZITEM"),
        ("NOT NULL ON CONFLICT IGNORE", "ON CONFLICT IGNORE in the declaration of table ZITEM"),
        ("REFERENCES Z_PRIMARYKEY (Z_NAME) ON DELETE CASCADE", "REFERENCES in the declaration of table ZITEM"),
    ])
    func tablesRedeclaredToDropRowsSilentlyStopWritableOpens(_ clauses: String, _ named: String) throws {
        let directory = TemporaryDirectory()
        let url = try store(with: ["kept"], in: directory)
        try redeclareItemTable(url, clauses)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        #expect {
            try coordinator.addPersistentStore(type: .sqlite, at: url)
        } throws: { error in
            guard case StoreError.foreignSchemaObjects(url.path, let objects) = error else { return false }
            return objects == [named]
        }
        #expect(try names(in: url, options: StoreOptions(readOnly: true)) == ["kept"])
    }

    @Test func quotedNamesAndCommentsAreNoClauses() {
        #expect(TableDeclarationClauses.silentlyActing(in: """
            CREATE TABLE "ON CONFLICT" ('on conflict' TEXT, [references] INT, `on` INT -- on conflict replace
            /* REFERENCES x */, "a""on conflict" INT)
            """).isEmpty)
        #expect(TableDeclarationClauses.silentlyActing(in: "CREATE TABLE T (A INT NOT NULL on Conflict Ignore)") == ["ON CONFLICT IGNORE"])
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

    @Test func theEmptyLogLeftByAnUnsavedOpenTakesLaterSaves() throws {
        let directory = TemporaryDirectory()
        let url = try store(with: ["first"], in: directory)
        #expect(try names(in: url) == ["first"])
        // Two coordinators at once, one saving while the other holds the file open.
        let holder = PersistentStoreCoordinator(managedObjectModel: try model())
        try holder.addPersistentStore(type: .sqlite, at: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        try context.insertNewObject(forEntityName: "Item").setValue("second", forKey: "name")
        try context.save()
        let reader = ManagedObjectContext(concurrencyType: .confinement)
        reader.persistentStoreCoordinator = holder
        #expect(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item")).count == 2)
        #expect(try names(in: url, options: StoreOptions(readOnly: true)) == ["first", "second"])
    }

    @Test func anEmptyLogLeftBehindIsReadAsEmpty() throws {
        // What a crash right after an unsaved open leaves: the log with its header and no frames.
        let directory = TemporaryDirectory()
        let url = try store(with: ["first"], in: directory)
        let header = try #require(EmptyWriteAheadLog.header(forDatabaseAt: url.path))
        try Data(header).write(to: URL(fileURLWithPath: url.path + "-wal"))
        #expect(try names(in: url, options: StoreOptions(readOnly: true)) == ["first"])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        try context.insertNewObject(forEntityName: "Item").setValue("second", forKey: "name")
        try context.save()
        #expect(try names(in: url, options: StoreOptions(readOnly: true)) == ["first", "second"])
    }

    @Test func primaryKeysAtTheLimitAreRefusedBeforeAnythingIsWritten() throws {
        let directory = TemporaryDirectory()
        let url = try store(with: [], in: directory)
        try alter(url, "UPDATE Z_PRIMARYKEY SET Z_MAX = ?", arguments: [Int64.max - 2])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        // The last two keys are still there to take.
        for name in ["a", "b"] { try context.insertNewObject(forEntityName: "Item").setValue(name, forKey: "name") }
        try context.save()
        let keys = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).map(\.objectID.primaryKey)
        #expect(keys.sorted() == [Int64.max - 1, Int64.max])

        try context.insertNewObject(forEntityName: "Item").setValue("c", forKey: "name")
        #expect {
            try context.save()
        } throws: { error in
            guard case StoreError.primaryKeysExhausted(url.path, "Item", let maximum) = error else { return false }
            return maximum == String(Int64.max)
        }
        let (count, maximum) = try DatabaseQueue(path: url.path, configuration: {
            var configuration = Configuration(); configuration.readonly = true; return configuration
        }()).read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ZITEM"), try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY"))
        }
        #expect(count == 2 && maximum == Int64.max)
    }

    /// A binary property list whose top object is an array naming object 1, a data object of `size` bytes,
    /// `references` times.
    private func sharedDataPlist(size: Int, references: Int) -> Data {
        func bigEndian(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - $0))) } }
        var bytes = Array("bplist00".utf8)
        let arrayOffset = bytes.count
        bytes += [0xAF, 0x12] + bigEndian(references, 4) + [UInt8](repeating: 1, count: references)
        let dataOffset = bytes.count
        bytes += [0x4F, 0x12] + bigEndian(size, 4) + [UInt8](repeating: 0xAB, count: size)
        let tableOffset = bytes.count
        bytes += bigEndian(arrayOffset, 4) + bigEndian(dataOffset, 4)
        bytes += [0, 0, 0, 0, 0, 0, 4, 1] + bigEndian(2, 8) + bigEndian(0, 8) + bigEndian(tableOffset, 8)
        return Data(bytes)
    }

    @Test func sharedObjectsCannotExpandAPropertyListWithoutBound() throws {
        // 100 KB named 2,000 times: 200 MB from a 102 KB list.
        #expect(throws: BinaryPropertyListReader.Failure.self) {
            try BinaryPropertyListReader.read(sharedDataPlist(size: 100_000, references: 2_000))
        }
        // One byte named 50,000 times from a list of two objects reads: every mention takes a byte of the file,
        // so what is read grows with the file (CoreFoundation writes one zero for thousands of equal elements).
        let repeated = try BinaryPropertyListReader.read(sharedDataPlist(size: 1, references: 50_000))
        #expect(repeated.array?.count == 50_000)
        // A shared container multiplies its mentions: 3,000 mentions of an array of 3,000 mentions is 9 million
        // reads from a 6 KB list, refused.
        #expect(throws: BinaryPropertyListReader.Failure.self) {
            try BinaryPropertyListReader.read(nestedSharedPlist(references: 3_000))
        }
        // Naming a small object a few times is what writers do, and reads.
        let few = try BinaryPropertyListReader.read(sharedDataPlist(size: 32, references: 5))
        #expect(few.array?.count == 5)
    }

    /// A binary property list whose top array names object 1 `references` times, object 1 being an array
    /// naming object 2 (one byte of data) `references` times.
    private func nestedSharedPlist(references: Int) -> Data {
        func bigEndian(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - $0))) } }
        var bytes = Array("bplist00".utf8)
        let outerOffset = bytes.count
        bytes += [0xAF, 0x12] + bigEndian(references, 4) + [UInt8](repeating: 1, count: references)
        let innerOffset = bytes.count
        bytes += [0xAF, 0x12] + bigEndian(references, 4) + [UInt8](repeating: 2, count: references)
        let dataOffset = bytes.count
        bytes += [0x41, 0xAB]
        let tableOffset = bytes.count
        bytes += bigEndian(outerOffset, 4) + bigEndian(innerOffset, 4) + bigEndian(dataOffset, 4)
        bytes += [0, 0, 0, 0, 0, 0, 4, 1] + bigEndian(3, 8) + bigEndian(0, 8) + bigEndian(tableOffset, 8)
        return Data(bytes)
    }

    @Test func aStoreWhoseMetadataExpandsIsRefusedEvenForReading() throws {
        let directory = TemporaryDirectory()
        let url = try store(with: ["kept"], in: directory)
        try alter(url, "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [sharedDataPlist(size: 100_000, references: 2_000)])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        #expect {
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: true))
        } throws: { error in
            guard case StoreError.corrupt(_, let reason) = error else { return false }
            return reason.contains("expand")
        }
    }
}
