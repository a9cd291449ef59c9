import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// Broken, foreign and damaged store files: opening them must end in a `StoreError` (or, for damage SQLite
    /// only finds while reading, in a `StoreError` from the read), never a crash, and the file must keep
    /// every byte it had.
    @Suite struct HostileStoreFileTests {
        /// The bytes of the store and of every file next to it (journal, WAL, shared memory).
        static func snapshot(_ url: URL) -> [String: Data] {
            let directory = url.deletingLastPathComponent()
            var files: [String: Data] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            where name.hasPrefix(url.lastPathComponent) {
                files[name] = (try? Data(contentsOf: directory.appendingPathComponent(name))) ?? Data()
            }
            return files
        }

        /// A real store with a few objects of every kind, closed.
        static func validStore(at url: URL) throws {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
            try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue("t", forKey: "label")
            for index in 0..<200 {
                let list = try context.insertNewObject(forEntityName: "TodoList")
                try list.setValue("list \(index)", forKey: "title")
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue("item \(index)", forKey: "name")
                try item.setValue(Data(repeating: UInt8(index & 0xff), count: 300), forKey: "blob")
                try item.setValue(list, forKey: "list")
                try item.setValue(Set([tag]), forKey: "tags")
            }
            try context.save()
            // Fold the WAL into the main file, so damage to the main file is damage to the data.
            try #require(coordinator.persistentStores[0] as? SQLiteStore).writer.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }

        /// Opens the file writable and reads everything; returns the error, nil if all went through.
        /// Any error other than a StoreError is recorded as an issue: callers deserve a clear kind of error.
        static func openAndReadEverything(_ url: URL, options: StoreOptions = StoreOptions()) -> Error? {
            do {
                let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
                try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
                let context = ManagedObjectContext(concurrencyType: .confinement)
                context.persistentStoreCoordinator = coordinator
                for entity in ["TodoList", "Item", "Tag"] {
                    for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
                        for key in object.entity.propertiesByName.keys.sorted() { _ = try object.value(forKey: key) }
                    }
                }
                return nil
            } catch let error as StoreError {
                return error
            } catch {
                Issue.record("\(url.lastPathComponent): not a StoreError: \(error)")
                return error
            }
        }

        enum Damage: String, CaseIterable, CustomTestStringConvertible {
            case zeroLength, text, randomBytes, sqliteHeaderThenGarbage, truncatedToHalf, truncatedMidPage,
                 corruptPages, foreignSQLiteDatabase, foreignRollbackJournalStoreOfAnotherModel, garbageMetadataPlist,
                 directoryAtPath
            var testDescription: String { rawValue }

            /// Makes the damaged file; the store URL is `directory/Store.sqlite`.
            func make(at url: URL) throws {
                var random = SeededRandom(seed: UInt64(rawValue.utf8.count * 7919))
                switch self {
                case .zeroLength:
                    try Data().write(to: url)
                case .text:
                    try Data("name,city\nA,B\n".utf8).write(to: url)
                case .randomBytes:
                    try Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: url)
                case .sqliteHeaderThenGarbage:
                    var bytes = Array("SQLite format 3\0".utf8)
                    bytes += (0..<8176).map { _ in UInt8.random(in: 0...255, using: &random) }
                    try Data(bytes).write(to: url)
                case .truncatedToHalf, .truncatedMidPage, .corruptPages:
                    try HostileStoreFileTests.validStore(at: url)
                    var bytes = try Data(contentsOf: url)
                    switch self {
                    case .truncatedToHalf: bytes = bytes.prefix(bytes.count / 2)
                    case .truncatedMidPage: bytes = bytes.prefix(4096 + 1000)
                    default:
                        // Leave the header page, scribble over the rest in places.
                        for _ in 0..<200 {
                            let index = Int.random(in: 4096..<bytes.count, using: &random)
                            bytes[index] = UInt8.random(in: 0...255, using: &random)
                        }
                    }
                    try bytes.write(to: url)
                case .foreignSQLiteDatabase:
                    let queue = try DatabaseQueue(path: url.path)
                    try queue.write { db in
                        try db.execute(sql: "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('Ada')")
                    }
                case .foreignRollbackJournalStoreOfAnotherModel:
                    // Another model's store, as a tool that does not use WAL would leave it.
                    let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.banks())
                    try coordinator.addPersistentStore(type: .sqlite, at: url)
                    let context = ManagedObjectContext(concurrencyType: .confinement)
                    context.persistentStoreCoordinator = coordinator
                    try context.insertNewObject(forEntityName: "FailedBankInfo").setValue("Bank", forKey: "name")
                    try context.save()
                    coordinator.remove(coordinator.persistentStores[0])
                    let queue = try DatabaseQueue(path: url.path)
                    try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = DELETE") }
                case .garbageMetadataPlist:
                    try HostileStoreFileTests.validStore(at: url)
                    let queue = try DatabaseQueue(path: url.path)
                    try queue.write { try $0.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = x'62706c6973743030ffff'") }
                    try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                case .directoryAtPath:
                    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
                }
            }
        }

        @Test(arguments: Damage.allCases)
        func damagedFileIsRefusedAndLeftAsItWas(_ damage: Damage) throws {
            let directory = TemporaryDirectory()
            let url = directory.file("Store.sqlite")
            try damage.make(at: url)
            let before = Self.snapshot(url)[url.lastPathComponent]
            // Read-only first: it must never write, whatever the writable open does afterwards.
            #expect(Self.openAndReadEverything(url, options: StoreOptions(readOnly: true)) != nil,
                    "\(damage) was accepted read-only")
            #expect(Self.snapshot(url)[url.lastPathComponent] == before, "\(damage): a read-only open changed the file")
            if damage == .zeroLength {
                // A zero-length file is an empty SQLite database: a writable open makes it a new store, as
                // SQLite and Core Data do (and as a writer killed while creating its store leaves it).
                #expect(Self.openAndReadEverything(url) == nil, "an empty file should become a new store")
                return
            }
            let error = Self.openAndReadEverything(url)
            #expect(error != nil, "\(damage) was accepted")
            let after = Self.snapshot(url)
            #expect(after[url.lastPathComponent] == before, "\(damage): the file changed")
            // SQLite may leave an empty -wal behind; frames in it would be writes.
            #expect((after[url.lastPathComponent + "-wal"]?.count ?? 0) == 0, "\(damage): frames left in the WAL")
        }

        /// Damage inside pages is found by the quick check before the writable open; a file above the check's
        /// size limit is not checked, and the damage then surfaces as an error when the rows are read.
        @Test func damageInsidePagesIsFoundByTheCheckOrWhenRead() throws {
            let directory = TemporaryDirectory()
            let url = directory.file("Store.sqlite")
            try Damage.corruptPages.make(at: url)
            #expect("\(Self.openAndReadEverything(url) ?? StoreError.busy(path: ""))".contains("quick_check"))
            let unchecked = Self.openAndReadEverything(url, options: StoreOptions(integrityCheckLimit: 0))
            #expect(unchecked != nil)
            #expect(!"\(unchecked.map { "\($0)" } ?? "")".contains("quick_check"))
        }
    }
}

/// A seeded generator, so a failing damage can be reproduced.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed ^ 0x5DEE_CE66_D1CE_4E5B }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (state >> 33) ^ (state << 29)
    }
}
