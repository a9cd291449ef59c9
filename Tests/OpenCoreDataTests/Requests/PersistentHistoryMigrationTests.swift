import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A store with persistent history keeps it through a migration, and the migration records a transaction
/// that marks it: old transactions are still fetched with their changes (naming the same entities, even
/// when the new version numbers them differently), and numbers keep counting up after it.
@Suite struct PersistentHistoryMigrationTests {
    /// V2 adds an entity that sorts first (so Folder and Note are renumbered) and an attribute.
    static let versions: [(name: String, entities: String)] = [
        ("V1", #"<entity name="Folder"><attribute name="name" optional="YES" attributeType="String"/></entity><entity name="Note"><attribute name="title" optional="YES" attributeType="String"/></entity>"#),
        ("V2", #"<entity name="Album"><attribute name="name" optional="YES" attributeType="String"/></entity><entity name="Folder"><attribute name="name" optional="YES" attributeType="String"/></entity><entity name="Note"><attribute name="title" optional="YES" attributeType="String"/><attribute name="text" optional="YES" attributeType="String"/></entity>"#),
    ]

    /// What a transaction says, independent of entity numbers: author, then each change as
    /// "type entity key".
    static func summary(_ transactions: [PersistentHistoryTransaction]) -> [String] {
        transactions.map { transaction in
            ([transaction.author ?? "-"] + (transaction.changes ?? []).map {
                "\($0.changeType) \($0.changedObjectID.entity.name) \($0.changedObjectID.primaryKey)"
            }).joined(separator: ", ")
        }
    }

    static func history(_ coordinator: PersistentStoreCoordinator) throws -> [PersistentHistoryTransaction] {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return try PersistentHistoryTests.history(context).transactions
    }

    /// A V1 store with history: three transactions (inserts, an update, a delete).
    static func v1Store(_ directory: TemporaryDirectory, bundle: URL) throws -> (url: URL, before: [PersistentHistoryTransaction]) {
        let url = directory.file("History.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle, version: "V1"))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "v1"
        let folder = try context.insertNewObject(forEntityName: "Folder")
        try folder.setValue("Inbox", forKey: "name")
        let notes = try (0..<2).map { index in
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue("N\(index)", forKey: "title")
            return note
        }
        try context.save()
        try notes[0].setValue("renamed", forKey: "title")
        try context.save()
        context.delete(notes[1])
        try context.save()
        return (url, try history(coordinator))
    }

    @Test func openingMigratesTheHistoryAndRecordsTheMigration() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.versions)
        let (url, before) = try Self.v1Store(directory, bundle: bundle)
        #expect(before.count == 3)

        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
        let after = try Self.history(coordinator)
        try #require(after.count == 4)
        // The old transactions, as they were: numbers, authors, changes of the same objects.
        #expect(after.prefix(3).map(\.transactionNumber) == before.map(\.transactionNumber))
        #expect(Self.summary(Array(after.prefix(3))) == Self.summary(before))
        #expect(after[1].changes?.first?.updatedProperties == ["title"])
        // The migration's own transaction.
        let migration = after[3]
        #expect(migration.author == PersistentHistoryTransaction.migrationAuthor)
        #expect(migration.contextName == "V1 → V2")
        #expect(migration.changes == [])
        #expect(migration.transactionNumber > before[2].transactionNumber)

        // Saves go on recording, numbered after the migration's.
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "v2"
        let album = try context.insertNewObject(forEntityName: "Album")
        try album.setValue("Summer", forKey: "name")
        try context.save()
        let next = try Self.history(coordinator)
        #expect(next.count == 5)
        #expect(next.last?.author == "v2" && next.last!.transactionNumber > migration.transactionNumber)
        #expect(next.last?.changes?.map(\.changedObjectID.entity.name) == ["Album"])
    }

    @Test func aStagedMigrationsLightweightStageRecordsItToo() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.versions)
        let (url, before) = try Self.v1Store(directory, bundle: bundle)
        try StoreMigration.migrate(storeAt: url, to: ModelVersionBundle(contentsOf: bundle), stagedMigrationManager:
                                    StagedMigrationManager(stages: [LightweightMigrationStage(["V1", "V2"])]))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: true))
        #expect(Self.summary(try Self.history(coordinator)) == Self.summary(before) + [PersistentHistoryTransaction.migrationAuthor])
    }

    @Test func anExplicitMigrationRecordsItTooAndAStoreWithoutHistoryGetsNone() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.versions)
        let (url, before) = try Self.v1Store(directory, bundle: bundle)
        try StoreMigration.migrate(storeAt: url, to: ModelVersionBundle(contentsOf: bundle))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: true))
        let after = try Self.history(coordinator)
        #expect(Self.summary(after) == Self.summary(before) + [PersistentHistoryTransaction.migrationAuthor])

        // A store that never recorded history is migrated without history tables.
        let plain = directory.file("Plain.sqlite")
        try MigrationFixtures.fill(plain, model: ManagedObjectModel(contentsOf: bundle, version: "V1"),
                                   with: [MigrationFixtures.Object(entity: "Note", key: "a", values: ["title": "a"])])
        try StoreMigration.migrate(storeAt: plain, to: ModelVersionBundle(contentsOf: bundle))
        #expect(try !SQLiteStore.hasPersistentHistory(at: plain))
    }

    /// A custom stage V1 → V2 whose `willMigrate` inserts a note (at V1) and `didMigrate` an album (at
    /// V2), each under its own author.
    static func savingStage() -> StagedMigrationManager {
        @Sendable func save(_ manager: StagedMigrationManager, author: String, entity: String) throws {
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                context.transactionAuthor = author
                let object = try context.insertNewObject(forEntityName: entity)
                try object.setValue(author, forKey: entity == "Note" ? "title" : "name")
                try context.save()
            }
        }
        let stage = CustomMigrationStage(migratingFrom: "V1", to: "V2")
        stage.willMigrateHandler = { manager, _ in try save(manager, author: "willMigrate", entity: "Note") }
        stage.didMigrateHandler = { manager, _ in try save(manager, author: "didMigrate", entity: "Album") }
        return StagedMigrationManager(stages: [stage])
    }

    @Test func aCustomStagesSavesAreRecordedAroundTheMigration() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.versions)
        let (url, before) = try Self.v1Store(directory, bundle: bundle)
        try StoreMigration.migrate(storeAt: url, to: ModelVersionBundle(contentsOf: bundle), stagedMigrationManager: Self.savingStage())
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: true))
        let after = try Self.history(coordinator)
        #expect(Self.summary(after) == Self.summary(before) + [
            "willMigrate, insert Note 3", PersistentHistoryTransaction.migrationAuthor, "didMigrate, insert Album 1"])
        #expect(after.map(\.transactionNumber) == after.map(\.transactionNumber).sorted())
    }

    @Test func openingWithHistoryTrackingRecordsACustomStagesSavesInAStoreWithoutHistory() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.versions)
        let url = directory.file("Plain.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "V1"),
                                   with: [MigrationFixtures.Object(entity: "Note", key: "a", values: ["title": "a"])])
        var options = StoreOptions(persistentHistoryTracking: true)
        try options.setOption(Self.savingStage(), forKey: StoreOptions.Key.stagedMigrationManager)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
        // The first save made the tables, so the migration between the handlers is recorded too.
        #expect(Self.summary(try Self.history(coordinator)) == [
            "willMigrate, insert Note 2", PersistentHistoryTransaction.migrationAuthor, "didMigrate, insert Album 1"])
    }

    /// V2 puts a new attribute before Note's others and drops `draft`, so every property's slot changes.
    static let reorderedVersions: [(name: String, entities: String)] = [
        ("V1", #"<entity name="Note"><attribute name="title" optional="YES" attributeType="String"/><attribute name="body" optional="YES" attributeType="String"/><attribute name="draft" optional="YES" attributeType="String"/></entity>"#),
        ("V2", #"<entity name="Note"><attribute name="archived" optional="YES" attributeType="Boolean"/><attribute name="title" optional="YES" attributeType="String"/><attribute name="body" optional="YES" attributeType="String"/></entity>"#),
    ]

    /// Updates of one note: its title, its body, its draft, then title and body.
    static func recordUpdates(_ coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue("t", forKey: "title")
        try context.save()
        for keys in [["title"], ["body"], ["draft"], ["title", "body"]] {
            for key in keys { try note.setValue("\(key) \(keys.count)", forKey: key) }
            try context.save()
        }
    }

    /// The updated properties each old change names after the migration: the same properties, wherever the
    /// new version puts them; a dropped property drops out.
    @Test func updatedPropertiesFollowTheirPropertiesToTheirNewSlots() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.reorderedVersions)
        let url = directory.file("Reordered.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle, version: "V1"))
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
            try Self.recordUpdates(coordinator)
            coordinator.persistentStores.forEach(coordinator.remove)
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
        let updated = try Self.history(coordinator).dropFirst().compactMap { $0.changes?.first?.updatedProperties }
        #expect(updated == [["title"], ["body"], [], ["title", "body"]])
    }

    /// V1 keeps books and magazines in tables of their own; V2 puts both under a new parent, Media, in one
    /// table, so the magazines get new keys (moved up past the books').
    static let joinedVersions: [(name: String, entities: String)] = [
        ("V1", #"<entity name="Book"><attribute name="name" attributeType="String"/></entity><entity name="Magazine"><attribute name="name" attributeType="String"/></entity>"#),
        ("V2", #"<entity name="Media"><attribute name="name" attributeType="String"/></entity><entity name="Book" parentEntity="Media"/><entity name="Magazine" parentEntity="Media"/>"#),
    ]

    /// Each transaction as "author: change, change…" with changes sorted, objects named by their `name`
    /// in the store `context` reads ("#key" when no object of the entity has the key).
    static func namedSummary(_ transactions: [PersistentHistoryTransaction], in context: ManagedObjectContext) -> [String] {
        transactions.map { transaction in
            "\(transaction.author ?? "-"): " + (transaction.changes ?? []).map { change in
                let id = change.changedObjectID
                let object = try? context.existingObject(with: id)
                let name = object.flatMap { $0.entity === id.entity ? (try? $0.value(forKey: "name")) as? String : nil }
                return "\(change.changeType) \(id.entity.name) \(name ?? "#\(id.primaryKey)")"
            }.sorted().joined(separator: ", ")
        }
    }

    @Test func oldChangesFollowObjectsGivenNewKeysWhenTablesJoin() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.joinedVersions)
        let url = directory.file("Joined.sqlite")
        let deletedKey: Int64
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle, version: "V1"))
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            context.transactionAuthor = "v1"
            var made: [String: ManagedObject] = [:]
            for (entity, name) in [("Book", "b1"), ("Book", "b2"), ("Magazine", "m1"), ("Magazine", "m2"), ("Magazine", "m3")] {
                made[name] = try context.insertNewObject(forEntityName: entity)
                try made[name]!.setValue(name, forKey: "name")
            }
            try context.save()
            try made["m2"]!.setValue("m2x", forKey: "name")
            try context.save()
            deletedKey = made["m3"]!.objectID.primaryKey
            context.delete(made["m3"]!)
            try context.save()
            #expect(Self.namedSummary(try PersistentHistoryTests.history(context).transactions, in: context) == [
                "v1: insert Book b1, insert Book b2, insert Magazine #\(deletedKey), insert Magazine m1, insert Magazine m2x",
                "v1: update Magazine m2x", "v1: delete Magazine #\(deletedKey)"])
            coordinator.persistentStores.forEach(coordinator.remove)
        }

        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let after = try PersistentHistoryTests.history(context).transactions
        try #require(after.count == 4)
        // Magazines moved up past the two books' keys; the deleted one's key moved alike, naming nothing.
        let movedDeletedKey = deletedKey + 2
        #expect(Self.namedSummary(Array(after.prefix(3)), in: context) == [
            "v1: insert Book b1, insert Book b2, insert Magazine #\(movedDeletedKey), insert Magazine m1, insert Magazine m2x",
            "v1: update Magazine m2x", "v1: delete Magazine #\(movedDeletedKey)"])
        #expect(try context.fetch(FetchRequest<ManagedObject>(entityName: "Media")).allSatisfy { $0.objectID.primaryKey != movedDeletedKey })
        #expect(after[3].author == PersistentHistoryTransaction.migrationAuthor)
    }
}
