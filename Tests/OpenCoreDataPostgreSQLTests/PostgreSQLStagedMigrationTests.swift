import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// A staged migration of a PostgreSQL store as it is opened (docs/POSTGRESQL.md, "Migration"): lightweight
/// stages and custom stages without handlers run one after the other in the open's one transaction, and
/// leave what SQLite's staged migration of the same data leaves; a custom stage's handlers run on the store
/// inside that transaction, as SQLite runs them on its copy, and a failing one leaves the store as it was.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLStagedMigrationTests {
    typealias Place = PostgreSQLMigrationTests.Place

    /// V2 renames Item.count to amount and gives owners a city; V3 widens amount, adds an entity that sorts
    /// first (so the others are renumbered) and orders the owners' items.
    static let versions: [(name: String, entities: String)] = [
        ("V1", #"<entity name="Owner"><attribute name="key" attributeType="String"/><attribute name="name" attributeType="String"/><relationship name="items" optional="YES" toMany="YES" destinationEntity="Item" inverseName="owner"/></entity>"#
            + #"<entity name="Item"><attribute name="key" attributeType="String"/><attribute name="count" optional="YES" attributeType="Integer 32"/><relationship name="owner" optional="YES" maxCount="1" destinationEntity="Owner" inverseName="items"/></entity>"#),
        ("V2", #"<entity name="Owner"><attribute name="key" attributeType="String"/><attribute name="name" attributeType="String"/><attribute name="city" optional="YES" attributeType="String"/><relationship name="items" optional="YES" toMany="YES" destinationEntity="Item" inverseName="owner"/></entity>"#
            + #"<entity name="Item"><attribute name="key" attributeType="String"/><attribute name="amount" optional="YES" attributeType="Integer 32" elementID="count"/><relationship name="owner" optional="YES" maxCount="1" destinationEntity="Owner" inverseName="items"/></entity>"#),
        ("V3", #"<entity name="Category"><attribute name="label" optional="YES" attributeType="String"/></entity>"#
            + #"<entity name="Owner"><attribute name="key" attributeType="String"/><attribute name="name" attributeType="String"/><attribute name="city" optional="YES" attributeType="String"/><relationship name="items" optional="YES" toMany="YES" ordered="YES" destinationEntity="Item" inverseName="owner"/></entity>"#
            + #"<entity name="Item"><attribute name="key" attributeType="String"/><attribute name="amount" optional="YES" attributeType="Integer 64"/><relationship name="owner" optional="YES" maxCount="1" destinationEntity="Owner" inverseName="items"/></entity>"#),
    ]

    /// Two owners and five items, four of them with an owner.
    static func objects() -> [RandomInferredChange.Object] {
        var objects = [RandomInferredChange.Object(entity: "Owner", key: "o1", values: ["key": "o1", "name": "Ada"]),
                       RandomInferredChange.Object(entity: "Owner", key: "o2", values: ["key": "o2", "name": "Bo"])]
        for index in 1...5 {
            let owner: [String: [String]] = index == 5 ? [:] : ["owner": [index % 2 == 0 ? "o2" : "o1"]]
            objects.append(RandomInferredChange.Object(entity: "Item", key: "i\(index)",
                                                       values: ["key": "i\(index)", "count": Int32(index * 10)], links: owner))
        }
        return objects
    }

    /// The stages: V1 → V2 lightweight, V2 → V3 a custom stage without handlers.
    static func manager() -> StagedMigrationManager {
        StagedMigrationManager(stages: [LightweightMigrationStage(["V1", "V2"]), CustomMigrationStage(migratingFrom: "V2", to: "V3")])
    }

    /// The reference's dump of `coordinator`'s objects, with the store's UUID (in the object IDs an ordered
    /// relationship prints) left out.
    static func dump(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        try RandomInferredChange.dump(coordinator).map {
            $0.replacingOccurrences(of: #"x-coredata://[^/]+/"#, with: "x-coredata://STORE/", options: .regularExpression)
        }
    }

    static func options(_ manager: StagedMigrationManager, history: Bool) throws -> StoreOptions {
        var options = StoreOptions(persistentHistoryTracking: history)
        try options.setOption(manager, forKey: StoreOptions.Key.stagedMigrationManager)
        return options
    }

    @Test(arguments: [false, true])
    func threeVersionsInStagesGiveWhatSQLitesStagedMigrationGives(history: Bool) throws {
        let place = try Place()
        let bundle = try PostgreSQLHistoryMigrationTests.bundle(in: place.folder, Self.versions)
        let first = try ManagedObjectModel(contentsOf: bundle, version: "V1"), last = try ManagedObjectModel(contentsOf: bundle)

        try RandomInferredChange.fill(place.open(first, options: StoreOptions(persistentHistoryTracking: history)), with: Self.objects())
        let migrated = try place.open(last, options: Self.options(Self.manager(), history: history))
        let dump = try Self.dump(migrated)
        #expect(dump.contains("Item amount=10 (Int64) key=i1 (String) owner->o1"), "\(dump)")

        let file = place.folder.appendingPathComponent("Twin.sqlite")
        let sqliteFirst = PersistentStoreCoordinator(managedObjectModel: first)
        try sqliteFirst.addPersistentStore(type: .sqlite, at: file, options: StoreOptions(persistentHistoryTracking: history))
        try RandomInferredChange.fill(sqliteFirst, with: Self.objects())
        sqliteFirst.persistentStores.forEach(sqliteFirst.remove)
        let sqlite = PersistentStoreCoordinator(managedObjectModel: last)
        try sqlite.addPersistentStore(type: .sqlite, at: file, options: Self.options(Self.manager(), history: history))
        let sqliteDump = try Self.dump(sqlite)
        #expect(dump == sqliteDump, "\(dump)\n\(sqliteDump)")
        if history {
            // One migration transaction per stage, on both.
            let transactions = try PostgreSQLHistoryMigrationTests.history(migrated)
            let summary = PostgreSQLHistoryMigrationTests.summary(transactions)
            let sqliteSummary = PostgreSQLHistoryMigrationTests.summary(try PostgreSQLHistoryMigrationTests.history(sqlite))
            #expect(summary == sqliteSummary, "\(summary)\n\(sqliteSummary)")
            #expect(transactions.compactMap(\.contextName).suffix(2) == ["V1 → V2", "V2 → V3"])
        }
        // And the store opens again at V3 without migrating.
        #expect(try Self.dump(place.open(last)) == dump)
    }

    /// The stages with handlers: before V2 → V3 each owner gets a city (at V2), after it a category is made
    /// and every item's amount goes up by one (at V3), each through a context of the manager's container.
    static func managerWithHandlers(failingAfterDidMigrate: Bool = false) -> StagedMigrationManager {
        struct NoContainer: Error {}
        let custom = CustomMigrationStage(migratingFrom: "V2", to: "V3")
        custom.willMigrateHandler = { manager, _ in
            guard let container = manager.container else { throw NoContainer() }
            let context = container.newBackgroundContext()
            try context.performAndWait {
                for owner in try context.fetch(FetchRequest<ManagedObject>(entityName: "Owner")) {
                    try owner.setValue("city of \(owner.value(forKey: "name") as? String ?? "?")", forKey: "city")
                }
                try context.save()
            }
        }
        custom.didMigrateHandler = { manager, _ in
            guard let container = manager.container else { throw NoContainer() }
            let context = container.newBackgroundContext()
            try context.performAndWait {
                let category = try context.insertNewObject(forEntityName: "Category")
                try category.setValue("made after V3", forKey: "label")
                for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                    try item.setValue(((item.value(forKey: "amount") as? Int64) ?? 0) + 1, forKey: "amount")
                }
                try context.save()
            }
            if failingAfterDidMigrate {
                throw MigrationError.stepFailed(path: "test", step: "didMigrate", reason: "the test's handler fails after saving")
            }
        }
        return StagedMigrationManager(stages: [LightweightMigrationStage(["V1", "V2"]), custom])
    }

    /// A custom stage's handlers run on the store at their versions, inside the open's transaction: what
    /// they saved is there after the migration, as SQLite's staged migration with the same handlers leaves
    /// it (with history: their saves recorded as SQLite records them).
    @Test(arguments: [false, true])
    func customStageHandlersGiveWhatSQLitesHandlersGive(history: Bool) throws {
        let place = try Place()
        let bundle = try PostgreSQLHistoryMigrationTests.bundle(in: place.folder, Self.versions)
        let first = try ManagedObjectModel(contentsOf: bundle, version: "V1"), last = try ManagedObjectModel(contentsOf: bundle)
        try RandomInferredChange.fill(place.open(first, options: StoreOptions(persistentHistoryTracking: history)), with: Self.objects())
        let migrated = try place.open(last, options: Self.options(Self.managerWithHandlers(), history: history))
        let dump = try Self.dump(migrated)
        #expect(dump.contains { $0.contains("made after V3") }, "\(dump)")
        #expect(dump.contains { $0.contains("city of Ada") }, "\(dump)")
        #expect(dump.contains("Item amount=11 (Int64) key=i1 (String) owner->o1"), "\(dump)")

        let file = place.folder.appendingPathComponent("Twin.sqlite")
        let sqliteFirst = PersistentStoreCoordinator(managedObjectModel: first)
        try sqliteFirst.addPersistentStore(type: .sqlite, at: file, options: StoreOptions(persistentHistoryTracking: history))
        try RandomInferredChange.fill(sqliteFirst, with: Self.objects())
        sqliteFirst.persistentStores.forEach(sqliteFirst.remove)
        let sqlite = PersistentStoreCoordinator(managedObjectModel: last)
        try sqlite.addPersistentStore(type: .sqlite, at: file, options: Self.options(Self.managerWithHandlers(), history: history))
        #expect(dump == (try Self.dump(sqlite)))
        if history {
            let summary = PostgreSQLHistoryMigrationTests.summary(try PostgreSQLHistoryMigrationTests.history(migrated))
            let sqliteSummary = PostgreSQLHistoryMigrationTests.summary(try PostgreSQLHistoryMigrationTests.history(sqlite))
            #expect(summary == sqliteSummary, "\(summary)\n\(sqliteSummary)")
        }
    }

    /// A handler that throws (after its context saved) fails the open with the stage named, and leaves the
    /// store exactly as it was; so does a stage naming a version the bundle lacks.
    @Test func aFailingHandlerOrAStageThatCannotRunChangesNothing() throws {
        let place = try Place()
        let bundle = try PostgreSQLHistoryMigrationTests.bundle(in: place.folder, Self.versions)
        try RandomInferredChange.fill(place.open(ManagedObjectModel(contentsOf: bundle, version: "V1")), with: Self.objects())
        let before = try place.snapshot()
        let last = try ManagedObjectModel(contentsOf: bundle)

        do {
            _ = try place.open(last, options: Self.options(Self.managerWithHandlers(failingAfterDidMigrate: true), history: false))
            Issue.record("the failing handler should have failed the open")
        } catch MigrationError.stageFailed(_, let stage, let reason) {
            #expect(stage.contains("didMigrate") && reason.contains("fails after saving"), "\(stage): \(reason)")
        }
        #expect(try place.snapshot() == before)

        let misspelt = StagedMigrationManager(stages: [LightweightMigrationStage(["V1", "V2x"])])
        #expect(throws: MigrationError.self) { try place.open(last, options: Self.options(misspelt, history: false)) }
        #expect(try place.snapshot() == before)
    }
}
