import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A store another tool keeps in rollback-journal mode (`journal_mode = DELETE`) stays in it: a writable open
/// that saves nothing leaves its bytes as they were, saves keep the mode, and another coordinator's saves are
/// still seen (the row cache's change token works on its one connection too).
@Suite struct RollbackJournalStoreTests {
    /// The hostile-file tests' valid store (200 items), switched to rollback-journal mode, WAL folded in.
    static func rollbackJournalStore(at url: URL) throws {
        try Reliability.HostileStoreFileTests.validStore(at: url)
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = DELETE") }
        try queue.close()
    }

    static func journalMode(_ url: URL) throws -> String {
        let queue = try DatabaseQueue(path: url.path, configuration: { var c = Configuration(); c.readonly = true; return c }())
        defer { try? queue.close() }
        return try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") ?? "" }
    }

    static func context(on url: URL) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.todo())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    @Test func aWritableOpenThatSavesNothingLeavesTheFileAsItWas() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        try Self.rollbackJournalStore(at: url)
        #expect(SQLiteStore.usesRollbackJournal(path: url.path))
        let before = try Data(contentsOf: url)
        do {
            let (coordinator, context) = try Self.context(on: url)
            #expect(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == 200)
            coordinator.remove(coordinator.persistentStores[0])
        }
        #expect(try Data(contentsOf: url) == before, "opening writable changed the file")
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        #expect(try Self.journalMode(url) == "delete")
    }

    @Test func savesKeepTheModeAndAnotherCoordinatorSeesThem() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        try Self.rollbackJournalStore(at: url)
        let (writerCoordinator, writer) = try Self.context(on: url)
        let (readerCoordinator, reader) = try Self.context(on: url)
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "name == 'item 3'")
        // The reader's coordinator caches the row (a private-queue fetch keeps rows for other contexts).
        let background = ManagedObjectContext(concurrencyType: .privateQueue)
        background.persistentStoreCoordinator = readerCoordinator
        let id = try background.performAndWait { try #require(try background.fetch(request).first).objectID }

        let item = try #require(try writer.fetch(request).first)
        try item.setValue("item 3, renamed", forKey: "name")
        try writer.save()
        #expect(try Self.journalMode(url) == "delete")
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))

        // A fault filled on the reader's side reads the new row, not the cached one.
        let seen = try reader.existingObject(with: id)
        #expect(try seen.value(forKey: "name") as? String == "item 3, renamed")
        _ = readerCoordinator
        _ = writerCoordinator
    }

    @Test func aNewStoreIsStillMadeInWALMode() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("New.sqlite")
        let (coordinator, context) = try Self.context(on: url)
        try context.insertNewObject(forEntityName: "Tag").setValue("t", forKey: "label")
        try context.save()
        coordinator.remove(coordinator.persistentStores[0])
        #expect(try Self.journalMode(url) == "wal")
        #expect(!SQLiteStore.usesRollbackJournal(path: url.path))
    }
}
