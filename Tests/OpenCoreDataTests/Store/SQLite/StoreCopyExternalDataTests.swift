import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Whole-store copies of a model that keeps values in `_EXTERNAL_DATA`: `migratePersistentStore` into an
/// SQLite file, an XML store and memory, and `replacePersistentStore`, carry every value, each checked
/// against the source's values read before the copy; the new store's folder holds its own files and the
/// source's are untouched; a copy that fails leaves nothing behind.
@Suite struct StoreCopyExternalDataTests {
    /// A store of photos named "p0"… with random images: nil, small (kept in the row) or over 128 KiB (kept
    /// in a file). Returns the images by name, as read back from a fresh context.
    static func photos(in stack: TestStack, count: Int, seed: UInt64) throws -> [String: Data?] {
        var generator = SeededGenerator(seed: seed)
        let context = stack.context()
        for index in 0..<count {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue("p\(index)", forKey: "name")
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: break
            case 1: try photo.setValue(ExternalBinaryStorageTests.bytes(Int.random(in: 0...2_000, using: &generator), seed: UInt8(index)), forKey: "image")
            default: try photo.setValue(ExternalBinaryStorageTests.bytes(Int.random(in: 131_073...300_000, using: &generator), seed: UInt8(index)), forKey: "image")
            }
        }
        // At least one of each kind whatever the seed.
        for (name, size) in [("small", 10), ("large", 200_000)] {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(ExternalBinaryStorageTests.bytes(size, seed: 7), forKey: "image")
        }
        try context.save()
        return try images(in: stack.freshContext())
    }

    /// Every photo's image by name.
    static func images(in context: ManagedObjectContext) throws -> [String: Data?] {
        var images: [String: Data?] = [:]
        for photo in try context.fetch(OpenCoreData.FetchRequest<ManagedObject>(entityName: "Photo")) {
            images[try #require(photo.value(forKey: "name") as? String)] = try photo.value(forKey: "image") as? Data
        }
        return images
    }

    static func images(ofStoreAt url: URL, type: StoreType, model: ManagedObjectModel) throws -> [String: Data?] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: type, at: url, options: StoreOptions(readOnly: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return try images(in: context)
    }

    static func files(in folder: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
    }

    /// The names in the folder that are not the test's own files (temporary copies left behind).
    static func leftovers(in folder: URL, besides kept: Set<String>) -> Set<String> {
        files(in: folder).subtracting(kept)
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func aMigratedSQLiteFileHoldsItsOwnFiles(seed: UInt64) throws {
        let stack = try TestStack(model: ExternalBinaryStorageTests.model())
        let expected = try Self.photos(in: stack, count: 12, seed: seed)
        let sourceFiles = Self.files(in: ExternalBinaryStorageTests.folder(stack))
        let large = expected.values.filter { ($0?.count ?? 0) > ExternalBinaryStorage.inlineLimit }.count
        #expect(sourceFiles.count == large)

        let destination = stack.directory.file("Copy.sqlite")
        let store = try #require(stack.coordinator.persistentStores.first)
        let copy = try stack.coordinator.migratePersistentStore(store, to: destination, type: .sqlite)
        #expect(stack.coordinator.persistentStores.first === copy)
        // Read through the coordinator the copy replaced the source in, and afresh.
        let context = stack.context()
        #expect(try Self.images(in: context) == expected)
        #expect(try Self.images(ofStoreAt: destination, type: .sqlite, model: stack.model) == expected)
        // The copy's files are its own: as many, with other names than the source's (linked or copied),
        // and the source's are all still there.
        let copyFolder = stack.directory.file(".Copy_SUPPORT/_EXTERNAL_DATA")
        #expect(Self.files(in: copyFolder).count == large)
        #expect(Self.files(in: ExternalBinaryStorageTests.folder(stack)) == sourceFiles)
        #expect(try Self.images(ofStoreAt: stack.url, type: .sqlite, model: stack.model) == expected)
        // The large values are references to files in the copy's rows, as Core Data keeps them.
        let references = try DatabaseQueue(path: destination.path).read { db in
            try Data.fetchAll(db, sql: "SELECT ZIMAGE FROM ZPHOTO WHERE ZIMAGE IS NOT NULL").filter { $0.first == 0x02 }.count
        }
        #expect(references == large)
        #expect(Self.leftovers(in: stack.directory.url, besides: ["Test.sqlite", "Test.sqlite-wal", "Test.sqlite-shm", ".Test_SUPPORT",
                                                                   "Copy.sqlite", "Copy.sqlite-wal", "Copy.sqlite-shm", ".Copy_SUPPORT"]).isEmpty)
    }

    @Test func valuesGoIntoAnXMLStoreAndBackIntoFiles() throws {
        let stack = try TestStack(model: ExternalBinaryStorageTests.model())
        let expected = try Self.photos(in: stack, count: 8, seed: 11)
        let xml = stack.directory.file("Photos.xml")
        let store = try #require(stack.coordinator.persistentStores.first)
        try stack.coordinator.migratePersistentStore(store, to: xml, type: .xml)
        #expect(try Self.images(ofStoreAt: xml, type: .xml, model: stack.model) == expected)
        #expect(!FileManager.default.fileExists(atPath: stack.directory.file(".Photos_SUPPORT").path))

        // Back from the XML store into a new SQLite file: the large values go to files again.
        let back = PersistentStoreCoordinator(managedObjectModel: stack.model)
        let xmlStore = try back.addPersistentStore(type: .xml, at: xml)
        let again = stack.directory.file("Again.sqlite")
        try back.migratePersistentStore(xmlStore, to: again, type: .sqlite)
        #expect(try Self.images(ofStoreAt: again, type: .sqlite, model: stack.model) == expected)
        let large = expected.values.filter { ($0?.count ?? 0) > ExternalBinaryStorage.inlineLimit }.count
        #expect(Self.files(in: stack.directory.file(".Again_SUPPORT/_EXTERNAL_DATA")).count == large)
    }

    @Test func valuesGoIntoMemory() throws {
        let stack = try TestStack(model: ExternalBinaryStorageTests.model())
        let expected = try Self.photos(in: stack, count: 6, seed: 5)
        let store = try #require(stack.coordinator.persistentStores.first)
        try stack.coordinator.migratePersistentStore(store, to: stack.directory.file("unused"), type: .inMemory)
        #expect(try Self.images(in: stack.context()) == expected)
    }

    /// A source value whose file is gone: the copy is refused naming the row, and nothing is left at the
    /// destination, in its folder, or beside it.
    @Test func aCopyWithAnUnreadableValueLeavesNothing() throws {
        let stack = try TestStack(model: ExternalBinaryStorageTests.model())
        _ = try Self.photos(in: stack, count: 4, seed: 9)
        let folder = ExternalBinaryStorageTests.folder(stack)
        let victim = try #require(Self.files(in: folder).sorted().first)
        try FileManager.default.removeItem(at: folder.appendingPathComponent(victim))
        let before = Self.files(in: stack.directory.url)
        let store = try #require(stack.coordinator.persistentStores.first)
        for (name, type) in [("Copy.sqlite", StoreType.sqlite), ("Copy.xml", .xml)] {
            #expect { try stack.coordinator.migratePersistentStore(store, to: stack.directory.file(name), type: type) } throws: { error in
                guard case StoreError.unreadableExternalData(_, "Photo", "image", _, let reason)? = error as? StoreError else { return false }
                return reason.contains(victim)
            }
            #expect(Self.files(in: stack.directory.url) == before, "\(type)")
        }
        #expect(stack.coordinator.persistentStores.first === store)
    }

    /// `replacePersistentStore`: the destination ends with the source's values and exactly the files its
    /// rows refer to; when the source's folder is a link, the replacement is refused and the destination
    /// keeps its values and files.
    @Test func replacingAStoreCarriesItsFiles() throws {
        let source = try TestStack(model: ExternalBinaryStorageTests.model())
        let expected = try Self.photos(in: source, count: 10, seed: 21)
        let destination = try TestStack(model: ExternalBinaryStorageTests.model())
        let old = try Self.photos(in: destination, count: 5, seed: 22)
        let oldFiles = Self.files(in: ExternalBinaryStorageTests.folder(destination))
        let sourceFiles = Self.files(in: ExternalBinaryStorageTests.folder(source))
        let replacer = PersistentStoreCoordinator(managedObjectModel: source.model)

        // Refused first: the source's _EXTERNAL_DATA made a link to a folder holding the same files.
        let elsewhere = source.directory.file("elsewhere")
        try FileManager.default.moveItem(at: ExternalBinaryStorageTests.folder(source), to: elsewhere)
        try FileManager.default.createSymbolicLink(at: ExternalBinaryStorageTests.folder(source), withDestinationURL: elsewhere)
        #expect(throws: MigrationError.self) {
            try replacer.replacePersistentStore(at: destination.url, withPersistentStoreFrom: source.url, ofType: SQLiteStoreType)
        }
        #expect(try Self.images(ofStoreAt: destination.url, type: .sqlite, model: destination.model) == old)
        #expect(Self.files(in: ExternalBinaryStorageTests.folder(destination)) == oldFiles)
        try FileManager.default.removeItem(at: ExternalBinaryStorageTests.folder(source))
        try FileManager.default.moveItem(at: elsewhere, to: ExternalBinaryStorageTests.folder(source))

        try replacer.replacePersistentStore(at: destination.url, withPersistentStoreFrom: source.url, ofType: SQLiteStoreType)
        #expect(try Self.images(ofStoreAt: destination.url, type: .sqlite, model: destination.model) == expected)
        #expect(Self.files(in: ExternalBinaryStorageTests.folder(destination)) == sourceFiles)
        #expect(Self.files(in: ExternalBinaryStorageTests.folder(source)) == sourceFiles)
    }
}
