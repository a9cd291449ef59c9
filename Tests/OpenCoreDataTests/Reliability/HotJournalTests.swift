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
            let url = directory.file("Store.sqlite"), copy = directory.file("Crashed.sqlite")
            try HostileStoreFileTests.validStore(at: url)
            let queue = try DatabaseQueue(path: url.path)
            try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = DELETE") }
            try queue.inDatabase { db in
                // A tiny page cache makes SQLite write changed pages into the file before the commit.
                try db.execute(sql: "PRAGMA cache_size = 1")
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "UPDATE ZITEM SET ZNAME = ZNAME || ' torn', ZBLOB = zeroblob(2000)")
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

        /// Read-only, SQLite cannot roll the journal back and answers SQLITE_READONLY; the library now reports
        /// the cause and the cure ("an interrupted write left a hot journal; open it writable once"), but a
        /// read-only open that recovers (on a private copy) is still to do.
        @Test func readOnlyOpenOfAStoreWithAHotJournal() throws {
            let directory = TemporaryDirectory()
            let url = try Self.storeWithHotJournal(directory)
            var outcome: Result<[String], Error>
            do { outcome = .success(try Self.itemNames(url, readOnly: true)) } catch { outcome = .failure(error) }
            withKnownIssue("a read-only open cannot roll back a hot journal; it reports how to recover instead") {
                switch outcome {
                case .success(let names): #expect(names.count == 200 && !names.contains { $0.hasSuffix("torn") })
                case .failure(let error):
                    #expect("\(error)".contains("hot journal"))
                    Issue.record("read-only open failed: \(error)")
                }
            }
        }
    }
}
