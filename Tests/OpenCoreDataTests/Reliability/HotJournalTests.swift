import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// A writer killed in the middle of a rollback-journal transaction (while a new store is still being
    /// switched to WAL, or a store another tool keeps in rollback mode) leaves a hot journal. Found by the
    /// crash harness: its first kill can land during store creation.
    @Suite struct HotJournalTests {
        /// The store as a crash mid-transaction leaves it: the database file and its hot journal.
        static func storeWithHotJournal(_ directory: TemporaryDirectory) throws -> URL {
            let url = directory.file("Store.sqlite")
            try HostileStoreFileTests.validStore(at: url)
            return try crashedCopy(of: url, as: directory.file("Crashed.sqlite"),
                                   tearing: "UPDATE ZITEM SET ZNAME = ZNAME || ' torn', ZBLOB = zeroblob(2000)")
        }

        /// A copy of the store at `url`, at `copy`, as a writer killed in the middle of `sql` in
        /// rollback-journal mode leaves it: the database file and its hot journal. `url` itself is rolled back.
        static func crashedCopy(of url: URL, as copy: URL, tearing sql: String) throws -> URL {
            let queue = try DatabaseQueue(path: url.path)
            try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = DELETE") }
            try queue.inDatabase { db in
                // A tiny page cache makes SQLite write changed pages into the file before the commit.
                try db.execute(sql: "PRAGMA cache_size = 1")
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: sql)
                for suffix in ["", "-journal"] {
                    try FileManager.default.copyItem(atPath: url.path + suffix, toPath: copy.path + suffix)
                }
                try db.execute(sql: "ROLLBACK")
            }
            return copy
        }

        static func itemNames(_ url: URL, readOnly: Bool) throws -> [String] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: readOnly))
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            return try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).compactMap { try $0.value(forKey: "name") as? String }
        }

        @Test func writableOpenRollsTheTornTransactionBack() throws {
            let directory = TemporaryDirectory()
            let url = try Self.storeWithHotJournal(directory)
            let names = try Self.itemNames(url, readOnly: false)
            #expect(names.count == 200)
            #expect(!names.contains { $0.hasSuffix("torn") })
            #expect(try StoreInvariants.violations(at: url, model: try TestModels.todo()).isEmpty)
        }

        /// Read-only, SQLite cannot roll the journal back in place; the store reads a rolled-back private copy
        /// instead, and neither the file nor its journal changes (a later writable open still rolls back).
        @Test func readOnlyOpenReadsARolledBackCopyAndLeavesTheFileAlone() throws {
            let directory = TemporaryDirectory()
            let url = try Self.storeWithHotJournal(directory)
            let before = try ["", "-journal"].map { try Data(contentsOf: URL(fileURLWithPath: url.path + $0)) }
            let copies = { Set(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
                                .filter { $0.hasPrefix("OpenCoreData-recovered-") }) }
            let copiesBefore = try copies()
            let names = try Self.itemNames(url, readOnly: true)
            #expect(names.count == 200)
            #expect(!names.contains { $0.hasSuffix("torn") })
            let after = try ["", "-journal"].map { try Data(contentsOf: URL(fileURLWithPath: url.path + $0)) }
            #expect(after == before, "a read-only open changed the file or its journal")
            // The private copy goes with the store.
            #expect(try copies().subtracting(copiesBefore).isEmpty)
            // The file itself still rolls back on a writable open.
            #expect(try Self.itemNames(url, readOnly: false).count == 200)
            #expect(!FileManager.default.fileExists(atPath: url.path + "-journal"))
        }
    }
}
