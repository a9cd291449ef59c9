import Foundation
import Testing
@testable import OpenCoreData

/// The coordinator's calls in Core Data's words: store metadata, Core Data's option dictionary, replacing and
/// destroying store files, and models merged or found for a store.
@Suite struct PersistentStoreCoordinatorCoreDataCallsTests {
    /// A banks store at `url` holding one bank named `name`.
    static func store(at url: URL, name: String) throws -> ManagedObjectModel {
        let model = try TestModels.banks()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        try EntityDescription.insertNewObject(forEntityName: "FailedBankInfo", into: context).setValue(name, forKey: "name")
        try context.save()
        coordinator.persistentStores.forEach(coordinator.remove)
        return model
    }

    static func names(at url: URL, model: ManagedObjectModel) throws -> [String] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url,
                                           options: [ReadOnlyPersistentStoreOption: true])
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return try context.fetch(FetchRequest<ManagedObject>(entityName: "FailedBankInfo")).map { try $0.value(forKey: "name") as? String ?? "" }
    }

    @Test func metadataTellsWhichModelWroteAStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Banks.sqlite")
        let model = try Self.store(at: url, name: "First")
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url, options: nil)
        #expect(metadata["NSStoreType"] as? String == "SQLite")
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!model.isConfiguration(withName: "Other", compatibleWithStoreMetadata: metadata))
        #expect(!(try TestModels.todo()).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(throws: StoreError.self) {
            try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: directory.file("none.sqlite"))
        }
    }

    @Test func anAppsMetadataKeysAreWrittenAndTheLibrarysKept() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Banks.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.store(at: url, name: "First"))
        let store = try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        var metadata = try coordinator.metadata(for: store)
        metadata["AppImportDone"] = true
        try coordinator.setMetadata(metadata, for: store)
        #expect(try coordinator.metadata(for: store)["AppImportDone"] as? Bool == true)
        metadata["NSStoreUUID"] = "not the store's"
        expectObjectGraphError(.libraryMetadataKey("NSStoreUUID")) { try coordinator.setMetadata(metadata, for: store) }
        coordinator.remove(store)
        let read = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)
        #expect(read["AppImportDone"] as? Bool == true)
        #expect(try TestModels.banks().isConfiguration(withName: nil, compatibleWithStoreMetadata: read))
    }

    @Test func coreDataOptionsAreReadAndUnknownOnesRefusedByName() throws {
        let options = try StoreOptions(optionDictionary: [
            ReadOnlyPersistentStoreOption: true, MigratePersistentStoresAutomaticallyOption: false,
            InferMappingModelAutomaticallyOption: NSNumber(value: false), PersistentHistoryTrackingKey: true,
            SQLitePragmasOption: ["journal_mode": "DELETE"],
        ])
        #expect(options.readOnly && !options.migratesStoreAutomatically && !options.infersMappingModelAutomatically)
        #expect(options.persistentHistoryTracking && options.checkpointsWriteAheadLogOnOpen)
        let refusals: [([AnyHashable: Any], ObjectGraphError)] = [
            (["NSSQLiteAnalyzeOption": true], .unknownStoreOption(name: "NSSQLiteAnalyzeOption")),
            ([7: true], .unknownStoreOption(name: "7")),
            ([SQLitePragmasOption: ["synchronous": "OFF"]],
             .invalidStoreOption(name: SQLitePragmasOption, value: "the pragma 'synchronous'", expected: "journal_mode only")),
            ([SQLitePragmasOption: "journal_mode=WAL"],
             .invalidStoreOption(name: SQLitePragmasOption, value: "String", expected: "a dictionary of pragma names")),
            ([SQLitePragmasOption: ["journal_mode": "MEMORY"]],
             .invalidStoreOption(name: "\(SQLitePragmasOption) journal_mode", value: "'MEMORY'",
                                 expected: "DELETE, TRUNCATE, PERSIST or WAL")),
            ([ReadOnlyPersistentStoreOption: "yes"],
             .invalidStoreOption(name: ReadOnlyPersistentStoreOption, value: "String", expected: "a boolean")),
        ]
        for (refused, expected) in refusals {
            expectObjectGraphError(expected) { try StoreOptions(optionDictionary: refused) }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.banks())
        expectObjectGraphError(.unsupportedStoreType(name: "Binary", operation: nil)) {
            try coordinator.addPersistentStore(ofType: "Binary", configurationName: nil, at: TemporaryDirectory().file("b"))
        }
        expectObjectGraphError(.unknownConfiguration("Cloud")) {
            try coordinator.addPersistentStore(ofType: InMemoryStoreType, configurationName: "Cloud", at: nil)
        }
    }

    /// `journal_mode = DELETE` moves the write-ahead log into the file: copied alone, the file then holds
    /// every commit.
    @Test func journalModeDeleteMovesTheLogIntoTheFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Banks.sqlite")
        let model = try Self.store(at: url, name: "First")
        // Kept open, this coordinator keeps SQLite from moving the log into the file when a connection closes.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        try context.insertNewObject(forEntityName: "FailedBankInfo").setValue("Second", forKey: "name")
        try context.save()
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))
        let checkpointing = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try checkpointing.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url,
                                                         options: [SQLitePragmasOption: ["journal_mode": "DELETE"]])
        checkpointing.remove(store)
        let fileAlone = directory.file("Alone.sqlite")
        try FileManager.default.copyItem(at: url, to: fileAlone)
        #expect(try Self.names(at: fileAlone, model: model).sorted() == ["First", "Second"])
    }

    @Test func replacingAndDestroyingStoreFiles() throws {
        let directory = TemporaryDirectory()
        let target = directory.file("Target.sqlite")
        let source = directory.file("Source.sqlite")
        let model = try Self.store(at: target, name: "Old")
        _ = try Self.store(at: source, name: "New")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        try coordinator.replacePersistentStore(at: target, destinationOptions: nil, withPersistentStoreFrom: source,
                                               sourceOptions: nil, ofType: SQLiteStoreType)
        #expect(try Self.names(at: target, model: model) == ["New"])
        try coordinator.destroyPersistentStore(at: source, ofType: SQLiteStoreType, options: nil)
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(!FileManager.default.fileExists(atPath: source.path + "-wal"))
        // Nothing there is no error; a file that is not a store is left alone.
        try coordinator.destroyPersistentStore(at: source, ofType: SQLiteStoreType, options: nil)
        let notes = directory.file("notes.txt")
        try Data("keep me".utf8).write(to: notes)
        let refusal = #expect(throws: StoreError.self) { try coordinator.destroyPersistentStore(at: notes, ofType: SQLiteStoreType) }
        guard case .notAStore(let path, _) = refusal else { Issue.record("not notAStore: \(String(describing: refusal))"); return }
        #expect(path == notes.standardizedFileURL.path)
        expectObjectGraphError(.unsupportedStoreType(name: InMemoryStoreType, operation: "Destroying store files")) {
            try coordinator.destroyPersistentStore(at: notes, ofType: InMemoryStoreType)
        }
        #expect(FileManager.default.fileExists(atPath: notes.path))
        #expect(throws: StoreError.self) {
            try coordinator.replacePersistentStore(at: target, withPersistentStoreFrom: notes, ofType: SQLiteStoreType)
        }
        #expect(try Self.names(at: target, model: model) == ["New"])
    }

    @Test func modelsMergeAndAreFoundForAStore() throws {
        let banks = try TestModels.banks()
        let todo = try TestModels.todo()
        let merged = try #require(ManagedObjectModel.merged(from: [banks, todo]))
        #expect(Set(merged.entitiesByName.keys) == Set(banks.entitiesByName.keys).union(todo.entitiesByName.keys))
        #expect(merged.entityVersionHashesByName["Item"] == todo.entityVersionHashesByName["Item"])
        #expect(ManagedObjectModel.merged(from: [banks, try TestModels.banks()]) == nil, "two entities of one name")
        #expect(ManagedObjectModel().entities.isEmpty)
    }
}
