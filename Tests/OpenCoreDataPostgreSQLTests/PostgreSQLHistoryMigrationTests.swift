import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// A PostgreSQL store with persistent history migrated as it is opened with a later model version
/// (docs/POSTGRESQL.md, "Migration"; docs/HISTORY.md, "Migrations"): its history reads as the same
/// migration leaves a SQLite store's, in the migration's one transaction.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLHistoryMigrationTests {
    typealias Place = PostgreSQLMigrationTests.Place

    /// A model bundle of `versions` in `folder`, the last one current.
    static func bundle(in folder: URL, _ versions: [(name: String, entities: String)]) throws -> URL {
        let bundle = folder.appendingPathComponent("History.xcdatamodeld")
        for (name, entities) in versions {
            let version = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data("""
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">\(entities)</model>
                """.utf8).write(to: version.appendingPathComponent("contents"))
        }
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(versions.last!.name).xcdatamodel</string></dict></plist>
            """.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    /// V2 adds an entity that sorts first (so Folder and Note are renumbered) and an attribute.
    static let versions: [(name: String, entities: String)] = [
        ("V1", #"<entity name="Folder"><attribute name="name" optional="YES" attributeType="String"/></entity><entity name="Note"><attribute name="title" optional="YES" attributeType="String"/></entity>"#),
        ("V2", #"<entity name="Album"><attribute name="name" optional="YES" attributeType="String"/></entity><entity name="Folder"><attribute name="name" optional="YES" attributeType="String"/></entity><entity name="Note"><attribute name="title" optional="YES" attributeType="String"/><attribute name="text" optional="YES" attributeType="String"/></entity>"#),
    ]

    /// V1 keeps books and magazines in tables of their own; V2 puts both under a new parent, Media, in one
    /// table, so the magazines get new keys (moved up past the books').
    static let joinedVersions: [(name: String, entities: String)] = [
        ("V1", #"<entity name="Book"><attribute name="name" attributeType="String"/></entity><entity name="Magazine"><attribute name="name" attributeType="String"/></entity>"#),
        ("V2", #"<entity name="Media"><attribute name="name" attributeType="String"/></entity><entity name="Book" parentEntity="Media"/><entity name="Magazine" parentEntity="Media"/>"#),
    ]

    static let tracking = StoreOptions(persistentHistoryTracking: true)

    /// The whole history as `coordinator` reads it.
    static func history(_ coordinator: PersistentStoreCoordinator) throws -> [PersistentHistoryTransaction] {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let after: PersistentHistoryToken? = nil
        return try #require(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: after)) as? PersistentHistoryResult).transactions
    }

    /// Each transaction as "number author (context): change, …", each change "type entity key [updated
    /// properties]", sorted (one save lists its changes in no set order): what a reader learns, timestamps
    /// and store identifiers aside.
    static func summary(_ transactions: [PersistentHistoryTransaction]) -> [String] {
        transactions.map { transaction in
            "\(transaction.transactionNumber) \(transaction.author ?? "-") (\(transaction.contextName ?? "-")): "
                + (transaction.changes ?? []).map { change in
                    let updated = change.updatedProperties.map { " \($0.sorted())" } ?? ""
                    return "\(change.changeType) \(change.changedObjectID.entity.name) \(change.changedObjectID.primaryKey)\(updated)"
                }.sorted().joined(separator: ", ")
        }
    }

    /// Saves objects of `entities` (entity, name) under author "v1", then renames and deletes some, each its
    /// own transaction: `renames` and `deletes` by name.
    static func record(in coordinator: PersistentStoreCoordinator, _ entities: [(String, String)], key: String,
                       renames: [String: String], deletes: [String]) throws {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "v1"
        var made: [String: ManagedObject] = [:]
        for (entity, name) in entities {
            made[name] = try context.insertNewObject(forEntityName: entity)
            try made[name]!.setValue(name, forKey: entity == "Note" ? "title" : key)
        }
        try context.save()
        for (name, new) in renames.sorted(by: { $0.key < $1.key }) {
            try made[name]!.setValue(new, forKey: made[name]!.entity.name == "Note" ? "title" : key)
        }
        try context.save()
        for name in deletes { context.delete(made[name]!) }
        try context.save()
    }

    /// The same history recorded in a PostgreSQL store and a SQLite store at V1, both opened at V2: the
    /// histories before, and after, on each.
    static func migrateBoth(_ versions: [(name: String, entities: String)], place: Place,
                            record: (PersistentStoreCoordinator) throws -> Void)
        throws -> (postgreSQL: [PersistentHistoryTransaction], sqlite: [PersistentHistoryTransaction], before: [PersistentHistoryTransaction]) {
        let bundle = try Self.bundle(in: place.folder, versions)
        let first = try ManagedObjectModel(contentsOf: bundle, version: "V1"), second = try ManagedObjectModel(contentsOf: bundle)
        let file = place.folder.appendingPathComponent("Twin.sqlite")
        let sqliteFirst = PersistentStoreCoordinator(managedObjectModel: first)
        try sqliteFirst.addPersistentStore(type: .sqlite, at: file, options: tracking)
        try record(sqliteFirst)
        sqliteFirst.persistentStores.forEach(sqliteFirst.remove)
        let postgreSQLFirst = try place.open(first, options: tracking)
        try record(postgreSQLFirst)
        let before = try history(postgreSQLFirst)

        let sqliteSecond = PersistentStoreCoordinator(managedObjectModel: second)
        try sqliteSecond.addPersistentStore(type: .sqlite, at: file, options: tracking)
        return (try history(place.open(second, options: tracking)), try history(sqliteSecond), before)
    }

    @Test func aStoreWithHistoryKeepsItAndRecordsTheMigrationAsSQLiteDoes() throws {
        let place = try Place()
        let (migrated, sqlite, before) = try Self.migrateBoth(Self.versions, place: place) {
            try Self.record(in: $0, [("Folder", "Inbox"), ("Note", "N0"), ("Note", "N1")], key: "name",
                            renames: ["N0": "renamed"], deletes: ["N1"])
        }
        #expect(before.count == 3)
        #expect(before[1].changes?.first?.updatedProperties == ["title"])
        try #require(migrated.count == 4)
        #expect(Self.summary(Array(migrated.prefix(3))) == Self.summary(before))
        #expect(migrated[3].author == PersistentHistoryTransaction.migrationAuthor && migrated[3].contextName == "V1 → V2")
        #expect(migrated[3].changes == [])
        #expect(Self.summary(migrated) == Self.summary(sqlite))

        // The history's key reservations are back in Z_PRIMARYKEY, each at the highest key its table holds.
        let reserved = try place.withSession { session in
            try session.rows("SELECT Z_ENT, Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= 16000 ORDER BY Z_ENT").map { "\($0)" }
        }
        #expect(reserved.count == 3)

        // Saves go on recording, numbered after the migration's, and name the renumbered entities.
        let bundle = place.folder.appendingPathComponent("History.xcdatamodeld")
        let coordinator = try place.open(ManagedObjectModel(contentsOf: bundle), options: Self.tracking)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "v2"
        try context.insertNewObject(forEntityName: "Album").setValue("Summer", forKey: "name")
        try context.insertNewObject(forEntityName: "Note").setValue("N2", forKey: "title")
        try context.save()
        let next = try Self.history(coordinator)
        #expect(Self.summary(Array(next.prefix(4))) == Self.summary(migrated))
        #expect(next.count == 5 && next[4].author == "v2" && next[4].transactionNumber > migrated[3].transactionNumber)
        #expect(next[4].changes?.map(\.changedObjectID.entity.name).sorted() == ["Album", "Note"])
    }

    /// Each transaction as "author: change, change…" with changes sorted, objects named by their `name` in
    /// the store `coordinator` reads, or "deleted" when no object has the change's key (the PostgreSQL
    /// store hands out keys in blocks, so keys differ from SQLite's, objects do not).
    static func namedSummary(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let keys = Set(try context.fetch(FetchRequest<ManagedObject>(entityName: "Media")).map(\.objectID.primaryKey))
        return try history(coordinator).map { transaction in
            "\(transaction.author ?? "-"): " + (transaction.changes ?? []).map { change in
                let id = change.changedObjectID
                let object = keys.contains(id.primaryKey) ? try? context.existingObject(with: id) : nil
                let name = object.flatMap { $0.entity === id.entity ? (try? $0.value(forKey: "name")) as? String : nil }
                return "\(change.changeType) \(id.entity.name) \(name ?? "deleted")"
            }.sorted().joined(separator: ", ")
        }
    }

    @Test func oldChangesFollowObjectsGivenNewKeysWhenTablesJoinAsOnSQLite() throws {
        let place = try Place()
        let (migrated, _, before) = try Self.migrateBoth(Self.joinedVersions, place: place) {
            try Self.record(in: $0, [("Book", "b1"), ("Book", "b2"), ("Magazine", "m1"), ("Magazine", "m2"), ("Magazine", "m3")],
                            key: "name", renames: ["m2": "m2x"], deletes: ["m3"])
        }
        try #require(migrated.count == 4)
        let bundle = place.folder.appendingPathComponent("History.xcdatamodeld")
        let second = try ManagedObjectModel(contentsOf: bundle)
        let postgreSQL = try place.open(second, options: Self.tracking)
        let sqlite = PersistentStoreCoordinator(managedObjectModel: second)
        try sqlite.addPersistentStore(type: .sqlite, at: place.folder.appendingPathComponent("Twin.sqlite"), options: Self.tracking)
        let named = try Self.namedSummary(postgreSQL)
        #expect(named == (try Self.namedSummary(sqlite)))
        #expect(named.prefix(3) == ["v1: insert Book b1, insert Book b2, insert Magazine deleted, insert Magazine m1, insert Magazine m2x",
                                    "v1: update Magazine m2x", "v1: delete Magazine deleted"])
        // The magazines moved up past every key the books' table held or handed out, in their old changes too.
        let magazineKeys = { (transactions: [PersistentHistoryTransaction]) in
            transactions.prefix(3).flatMap { $0.changes ?? [] }.filter { $0.changedObjectID.entity.name == "Magazine" }.map(\.changedObjectID.primaryKey)
        }
        let offset = try #require(magazineKeys(migrated).first) - (try #require(magazineKeys(before).first))
        #expect(offset >= 2 && magazineKeys(migrated) == magazineKeys(before).map { $0 + offset })
    }

    /// V2 puts a new attribute before Note's others and drops `draft`: old changes' updated properties
    /// follow each property to its new slot, as on SQLite.
    @Test func updatedPropertiesFollowTheirPropertiesAsOnSQLite() throws {
        let place = try Place()
        let versions: [(name: String, entities: String)] = [
            ("V1", #"<entity name="Note"><attribute name="title" optional="YES" attributeType="String"/><attribute name="body" optional="YES" attributeType="String"/><attribute name="draft" optional="YES" attributeType="String"/></entity>"#),
            ("V2", #"<entity name="Note"><attribute name="archived" optional="YES" attributeType="Boolean"/><attribute name="title" optional="YES" attributeType="String"/><attribute name="body" optional="YES" attributeType="String"/></entity>"#),
        ]
        let (migrated, sqlite, _) = try Self.migrateBoth(versions, place: place) { coordinator in
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
        let updated = migrated.dropFirst().compactMap { $0.changes?.first?.updatedProperties }
        #expect(updated == [["title"], ["body"], [], ["title", "body"]])
        #expect(Self.summary(migrated) == Self.summary(sqlite))
    }

    /// The migration's last statement (recording its transaction) refused by the server: the tables, the
    /// rows and the history are as they were; once the cause is gone, the same open migrates.
    @Test func aFailureWhileKeepingTheHistoryLeavesTheStoreAsItWas() throws {
        let place = try Place()
        let bundle = try Self.bundle(in: place.folder, Self.versions)
        let first = try place.open(ManagedObjectModel(contentsOf: bundle, version: "V1"), options: Self.tracking)
        try Self.record(in: first, [("Folder", "Inbox"), ("Note", "N0")], key: "name", renames: ["N0": "renamed"], deletes: [])
        let before = try Self.history(first)
        // Existing transactions pass; the next one is refused.
        try place.withSession { try $0.execute("ALTER TABLE ATRANSACTION ADD CONSTRAINT no_more_transactions CHECK (Z_PK <= 2) NOT VALID") }
        let snapshot = try place.snapshot()
        do {
            _ = try place.open(ManagedObjectModel(contentsOf: bundle), options: Self.tracking)
            Issue.record("the migration should have failed")
        } catch MigrationError.stepFailed(let path, let step, let reason) {
            #expect(path == place.configuration.redactedURL)
            #expect(step == "keep the persistent history" && reason.contains("no_more_transactions"), "\(step): \(reason)")
        }
        #expect(try place.snapshot() == snapshot)

        try place.withSession { try $0.execute("ALTER TABLE ATRANSACTION DROP CONSTRAINT no_more_transactions") }
        let migrated = try Self.history(place.open(ManagedObjectModel(contentsOf: bundle), options: Self.tracking))
        #expect(Self.summary(Array(migrated.prefix(2))) == Self.summary(before))
        #expect(migrated.last?.author == PersistentHistoryTransaction.migrationAuthor)
    }

    /// After the migration, a coordinator listening to the change feed hears another coordinator's save.
    @Test func theChangeFeedGoesOnAfterTheMigration() throws {
        let place = try Place()
        let bundle = try Self.bundle(in: place.folder, Self.versions)
        let first = try place.open(ManagedObjectModel(contentsOf: bundle, version: "V1"), options: Self.tracking)
        try Self.record(in: first, [("Note", "N0")], key: "name", renames: [:], deletes: [])

        let second = try ManagedObjectModel(contentsOf: bundle)
        let feed = StoreOptions(persistentHistoryTracking: true, remoteChangeNotifications: true)
        let watching = try place.open(second, options: feed)
        let heard = Mutex<[Int64]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: PersistentStoreCoordinator.remoteChangeNotification, object: watching, queue: nil) { note in
            let token = note.userInfo?[PersistentStoreCoordinator.historyTokenKey] as? PersistentHistoryToken
            heard.withLock { $0.append(token?.transactionNumber ?? 0) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let writer = try place.open(second, options: feed)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = writer
        try context.insertNewObject(forEntityName: "Album").setValue("Summer", forKey: "name")
        try context.save()
        let saved = try #require(Self.history(writer).last)
        #expect(saved.changes?.map(\.changedObjectID.entity.name) == ["Album"])
        #expect(PostgreSQLRemoteChangeTests.eventually { heard.withLock { $0.contains(saved.transactionNumber) } })
    }
}
