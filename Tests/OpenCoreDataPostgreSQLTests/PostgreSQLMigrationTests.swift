import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Migration of a PostgreSQL store as it is opened with a later version of its model (docs/POSTGRESQL.md,
/// "Migration"): the same inferred plans as on SQLite, in one PostgreSQL transaction.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLMigrationTests {
    /// A schema of the test server, dropped at the end, with a folder for the model bundle and SQLite twins.
    final class Place: @unchecked Sendable {
        // @unchecked Sendable: immutable after init.
        let configuration: PostgreSQLStoreConfiguration
        let folder: URL

        init() throws {
            configuration = try PostgreSQLTestServer.freshConfiguration()
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-migration-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        deinit {
            PostgreSQLTestServer.drop(configuration)
            try? FileManager.default.removeItem(at: folder)
        }

        /// A coordinator with the PostgreSQL store opened with `model`.
        func open(_ model: ManagedObjectModel, options: StoreOptions = StoreOptions()) throws -> PersistentStoreCoordinator {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(configuration: configuration, options: options)
            return coordinator
        }

        /// Runs `body` on a connection to the schema.
        @discardableResult
        func withSession<Result>(_ body: (PostgreSQLSession) throws -> Result) throws -> Result {
            let pool = PostgreSQLConnectionPool(configuration: configuration)
            defer { pool.close() }
            return try pool.withSession(body)
        }

        /// Everything in the schema: each table with its columns and types, its rows (sorted), and each index
        /// with its definition, so a refused migration can be shown to have changed nothing.
        func snapshot() throws -> [String] {
            try withSession { session in
                var lines: [String] = []
                let tables = try session.rows("""
                    SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1
                    """).compactMap { String.fromStoreValue($0[0]) }
                for table in tables {
                    let columns = try session.rows("""
                        SELECT column_name::text, data_type::text, coalesce(collation_name::text, '') FROM information_schema.columns
                        WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position
                        """, [table.storeValue]).map { $0.map { "\($0)" }.joined(separator: " ") }
                    lines.append("table \(table): \(columns.joined(separator: ", "))")
                    lines += try session.rows("SELECT * FROM \"\(table)\"").map { "  \($0.map { "\($0)" }.joined(separator: " | "))" }.sorted()
                }
                lines += try session.rows("SELECT indexname::text, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1")
                    .map { "index \($0.map { "\($0)" }.joined(separator: ": "))" }
                // Index definitions name the schema, which differs between two places.
                return lines.map { $0.replacingOccurrences(of: "\(configuration.schema!).", with: "") }
            }
        }
    }

    /// Two versions of a model of items and their owners, in a bundle.
    static func bundle(in folder: URL, _ first: String, _ second: String) throws -> URL {
        let bundle = folder.appendingPathComponent("Items.xcdatamodeld")
        for (name, entities) in [("Items", first), ("Items 2", second)] {
            let version = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data("""
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">\(entities)</model>
                """.utf8).write(to: version.appendingPathComponent("contents"))
        }
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Items 2.xcdatamodel</string></dict></plist>
            """.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    static let items = #"<entity name="Item"><attribute name="key" attributeType="String"/><attribute name="count" optional="YES" attributeType="Integer 32"/></entity>"#

    /// The first version's items, saved.
    static func fillItems(_ place: Place, bundle: URL) throws {
        let coordinator = try place.open(ManagedObjectModel(contentsOf: bundle, version: "Items"))
        try RandomInferredChange.fill(coordinator, with: (1...3).map {
            RandomInferredChange.Object(entity: "Item", key: "i\($0)", values: ["key": "i\($0)", "count": Int32($0)])
        })
    }

    // MARK: Against the reference

    /// A random model, a random inferred change of it and random objects: the PostgreSQL store filled at
    /// the first version and opened with the second holds what a fresh store of the second version holds
    /// when filled with the objects as the reference spells them, and what the same migration gives on SQLite.
    @Test(arguments: 1...16)
    func aRandomInferredChangeMigratesLikeTheReferenceAndLikeSQLite(seed: Int) throws {
        let change = RandomInferredChange(seed: seed)
        let context = "\(change.old.xml)\n→\n\(change.new.xml)"
        let migrated = try Place(), fresh = try Place()
        let bundle = try change.bundle(in: migrated.folder)
        let first = try ManagedObjectModel(contentsOf: bundle, version: "V1"), second = try ManagedObjectModel(contentsOf: bundle)

        try RandomInferredChange.fill(migrated.open(first), with: change.oldObjects)
        let migratedDump = try RandomInferredChange.dump(migrated.open(second))
        try RandomInferredChange.fill(fresh.open(second), with: change.newObjects)
        #expect(migratedDump == (try RandomInferredChange.dump(fresh.open(second))), "\(context)")
        // The same tables, columns, types and indexes as a fresh store (rows and names of key constraints aside).
        let layout = { (place: Place) in try place.snapshot().filter { !$0.hasPrefix("  ") && !$0.contains("_pkey") } }
        #expect(try layout(migrated) == layout(fresh), "\(context)")

        let file = migrated.folder.appendingPathComponent("Store.sqlite")
        let sqliteFirst = PersistentStoreCoordinator(managedObjectModel: first)
        try sqliteFirst.addPersistentStore(type: .sqlite, at: file)
        try RandomInferredChange.fill(sqliteFirst, with: change.oldObjects)
        sqliteFirst.persistentStores.forEach(sqliteFirst.remove)
        let sqliteSecond = PersistentStoreCoordinator(managedObjectModel: second)
        try sqliteSecond.addPersistentStore(type: .sqlite, at: file)
        #expect(migratedDump == (try RandomInferredChange.dump(sqliteSecond)), "\(context)")
    }

    // MARK: All or nothing

    @Test func aRefusedMigrationLeavesTheDatabaseAsItWas() throws {
        let place = try Place()
        let bundle = try Self.bundle(in: place.folder, Self.items, #"""
            <entity name="Item"><attribute name="key" attributeType="String"/><attribute name="count" optional="YES" attributeType="Integer 64"/><attribute name="label" attributeType="String"/></entity>
            """#)
        try Self.fillItems(place, bundle: bundle)
        let before = try place.snapshot()
        #expect(throws: MigrationError.missingRequiredValues(entity: "Item", attribute: "label", rowCount: 3)) {
            try place.open(ManagedObjectModel(contentsOf: bundle))
        }
        #expect(try place.snapshot() == before)
    }

    /// A statement that fails late (an index of the new version whose name another table holds, after the
    /// old tables were dropped and the new ones renamed) rolls back every step before it.
    @Test func aStepFailingHalfWayLeavesTheDatabaseAsItWas() throws {
        let place = try Place()
        let bundle = try Self.bundle(in: place.folder, Self.items + #"<entity name="Owner"><attribute name="key" attributeType="String"/></entity>"#, #"""
            <entity name="Item"><attribute name="key" attributeType="String"/><attribute name="amount" optional="YES" attributeType="Integer 32" elementID="count"/><relationship name="owner" optional="YES" maxCount="1" destinationEntity="Owner"/></entity>
            <entity name="Owner"><attribute name="key" attributeType="String"/></entity>
            """#)
        try Self.fillItems(place, bundle: bundle)
        let second = try ManagedObjectModel(contentsOf: bundle)
        let newIndex = try #require(second.schema.indexes.first { $0.name.contains("ZOWNER") }).name
        try place.withSession { try $0.execute("CREATE TABLE \(newIndex) (stray BIGINT)") }
        let before = try place.snapshot()
        do {
            _ = try place.open(second)
            Issue.record("the migration should have failed")
        } catch MigrationError.stepFailed(let path, let step, let reason) {
            #expect(path == place.configuration.redactedURL)
            #expect(step.contains(newIndex), "\(step): \(reason)")
        }
        #expect(try place.snapshot() == before)
        // Without the stray table, the same migration goes through and keeps the items, renamed attribute and all.
        try place.withSession { try $0.execute("DROP TABLE \(newIndex)") }
        let lines = try RandomInferredChange.dump(place.open(second))
        #expect(lines.filter { $0.hasPrefix("Item ") } == (1...3).map { "Item amount=\($0) (Int32) key=i\($0) (String) owner=nil" })
    }

    @Test func withMigrationTurnedOffTheOpenIsRefusedWithTheDifferences() throws {
        let place = try Place()
        let bundle = try Self.bundle(in: place.folder, Self.items, #"""
            <entity name="Item"><attribute name="key" attributeType="String"/><attribute name="count" optional="YES" attributeType="Integer 32"/><attribute name="note" optional="YES" attributeType="String"/></entity>
            """#)
        try Self.fillItems(place, bundle: bundle)
        let before = try place.snapshot()
        var options = StoreOptions()
        options.migratesStoreAutomatically = false
        do {
            _ = try place.open(ManagedObjectModel(contentsOf: bundle), options: options)
            Issue.record("the open should have been refused")
        } catch StoreError.incompatibleModel(_, let differences) {
            #expect(differences.contains { $0.contains("ZNOTE") }, "\(differences)")
        }
        #expect(try place.snapshot() == before)
    }

    // MARK: ocd

    @Test(.enabled(if: TestProgram.ocd != nil, "needs a built ocd"))
    func ocdMigrateTakesAURLAndItsDryRunChangesNothing() throws {
        let place = try Place()
        let bundle = try Self.bundle(in: place.folder, Self.items, #"""
            <entity name="Item"><attribute name="key" attributeType="String"/><attribute name="amount" optional="YES" attributeType="Integer 64" elementID="count"/></entity>
            """#)
        try Self.fillItems(place, bundle: bundle)
        let base = PostgreSQLTestServer.url!
        let url = base + (base.contains("?") ? "&" : "?") + "schema=\(place.configuration.schema!)"
        let before = try place.snapshot()
        let dryRun = try TestProgram.run(TestProgram.ocd!, ["migrate", url, "--model", bundle.path, "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("is at version 'Items'; target version 'Items 2'"), "\(dryRun.stdout)")
        #expect(dryRun.stdout.contains("Items → Items 2") && dryRun.stdout.contains("Dry run"), "\(dryRun.stdout)")
        #expect(try place.snapshot() == before)
        let run = try TestProgram.run(TestProgram.ocd!, ["migrate", url, "--model", bundle.path])
        #expect(run.status == 0 && run.stdout.contains("Migrated"), "\(run.stdout)\(run.stderr)")
        let lines = try RandomInferredChange.dump(place.open(ManagedObjectModel(contentsOf: bundle)))
        #expect(lines == (1...3).map { "Item amount=\($0) (Int64) key=i\($0) (String)" })
        let again = try TestProgram.run(TestProgram.ocd!, ["migrate", url, "--model", bundle.path])
        #expect(again.status == 0 && again.stdout.contains("Nothing to do."), "\(again.stdout)\(again.stderr)")
    }

    // MARK: Many instances

    /// Two coordinators opening the old store at once: one migrates under the lock, the other waits and
    /// opens the migrated store; both see every object once, at the new version.
    @Test func twoCoordinatorsOpeningAtOnceBothEndAtTheNewVersion() throws {
        let place = try Place()
        let bundle = try Self.bundle(in: place.folder, Self.items, #"""
            <entity name="Item"><attribute name="key" attributeType="String"/><attribute name="total" optional="YES" attributeType="Double" elementID="count"/><attribute name="flag" attributeType="Boolean" defaultValueString="YES"/></entity>
            """#)
        try Self.fillItems(place, bundle: bundle)
        let second = try ManagedObjectModel(contentsOf: bundle)
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            results.set(index, Result { try RandomInferredChange.dump(place.open(second)) })
        }
        let expected = (1...3).map { "Item flag=true (Bool) key=i\($0) (String) total=\(Double($0)) (Double)" }
        for index in 0..<2 { #expect(try results.get(index).get() == expected) }
    }

    final class Results: @unchecked Sendable {
        // @unchecked Sendable: every access holds `lock`.
        private let lock = NSLock()
        private var values: [Int: Result<[String], any Error>] = [:]
        func set(_ index: Int, _ value: Result<[String], any Error>) { lock.withLock { values[index] = value } }
        func get(_ index: Int) -> Result<[String], any Error> { lock.withLock { values[index]! } }
    }
}
