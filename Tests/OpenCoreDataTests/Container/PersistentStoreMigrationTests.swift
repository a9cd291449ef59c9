import Foundation
import Testing
@testable import OpenCoreData

/// `migratePersistentStore(_:to:options:type:)` on stores made here: into an in-memory store, and copies
/// that fail or would overwrite a file, which leave nothing behind. (Apple's XML stores taken through SQLite
/// and back: `XMLStoreCopyTests`.)
struct PersistentStoreMigrationTests {
    static func notes(in folder: URL, texts: [String]) throws -> (PersistentStoreCoordinator, SQLiteStore, ManagedObjectContext) {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [AttributeDescription(name: "text", type: .string)]),
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: folder.appendingPathComponent("notes.sqlite"))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for text in texts {
            try context.insertNewObject(forEntityName: "Note").setValue(text, forKey: "text")
        }
        try context.save()
        return (coordinator, store, context)
    }

    @Test func aStoreMovesIntoMemoryAndTheContextReadsItThere() throws {
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (coordinator, store, context) = try Self.notes(in: folder, texts: ["one", "two"])
        let memory = try coordinator.migratePersistentStore(store, to: URL(fileURLWithPath: "/unused"), type: .inMemory)
        #expect(coordinator.persistentStores.map(\.typeName) == ["InMemory"] && memory.type == .inMemory)
        context.reset()
        let texts = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")).compactMap { try $0.value(forKey: "text") as? String }
        #expect(texts.sorted() == ["one", "two"])
    }

    @Test func aCopyThatFailsLeavesNoDestination() throws {
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (coordinator, store, _) = try Self.notes(in: folder, texts: ["fine", "bell \u{7} inside"])
        let destination = folder.appendingPathComponent("notes.xml")
        #expect(throws: XMLStoreError.self) { try coordinator.migratePersistentStore(store, to: destination, type: .xml) }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().allSatisfy { $0.hasPrefix("notes.sqlite") })
        #expect(coordinator.persistentStores.first === store)
        // Nothing is copied over an existing file either.
        try Data("keep".utf8).write(to: destination)
        expectObjectGraphError(.storeCopyRefused(source: try #require(store.url).path, destination: destination.path,
                                                 reason: "a file exists there already, and a store is not copied over another file")) {
            try coordinator.migratePersistentStore(store, to: destination, type: .sqlite)
        }
        #expect(try Data(contentsOf: destination) == Data("keep".utf8))
        // Nor into a folder that is not there: SQLite cannot create the file, and nothing appears.
        let nowhere = folder.appendingPathComponent("missing/notes.sqlite")
        #expect(throws: (any Error).self) { try coordinator.migratePersistentStore(store, to: nowhere, type: .sqlite) }
        #expect(!FileManager.default.fileExists(atPath: nowhere.deletingLastPathComponent().path))
        #expect(coordinator.persistentStores.first === store)
    }
}
