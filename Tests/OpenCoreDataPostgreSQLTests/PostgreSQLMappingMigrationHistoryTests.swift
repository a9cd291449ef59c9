import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

extension PostgreSQLMappingMigrationTests {
    /// A PostgreSQL store with persistent history migrated by a mapping model (the Garage fixture, Brand's `name`
    /// kept in tombstones) keeps its history as SQLite's mapping migration of the same objects keeps it
    /// (docs/HISTORY.md, "Migrations"): the same transactions, changes naming the objects the migration made,
    /// tombstones, readers, the migration's own transaction, and tokens taken before still valid. A failing
    /// migration leaves the history as it was. Nested, so the parent's `.serialized` runs these one at a time
    /// with its own tests too (the leftover-schema count is server-wide).
    @Suite struct History {
        typealias Fixture = PostgreSQLMappingMigrationTests

        static let tracking = StoreOptions(persistentHistoryTracking: true)

        /// A temporary folder holding the Garage bundle with Brand's `name` preserved after deletion (both versions).
        struct Place {
            let folder: URL
            let bundle: ModelVersionBundle
            var old: ManagedObjectModel { bundle.versions.first { $0.name == "Garage" }!.model }
            var new: ManagedObjectModel { bundle.versions.first { $0.name == "Garage 2" }!.model }

            init() throws {
                folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-mapping-history-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let url = folder.appendingPathComponent("Garage.xcdatamodeld")
                try FileManager.default.copyItem(at: Fixture.fixtures.appendingPathComponent("Garage.xcdatamodeld"), to: url)
                for version in ["Garage.xcdatamodel", "Garage 2.xcdatamodel"] {
                    let contents = url.appendingPathComponent(version).appendingPathComponent("contents")
                    let brand = #"""
                        <entity name="Brand" representedClassName="Brand" syncable="YES" codeGenerationType="class">
                                <attribute name="country" optional="YES" attributeType="String"/>
                                <attribute name="name" attributeType="String"/>
                        """#
                    let text = try String(contentsOf: contents, encoding: .utf8)
                    try #require(text.contains(brand))
                    try text.replacingOccurrences(of: brand, with: brand.replacingOccurrences(
                        of: #"<attribute name="name" attributeType="String"/>"#,
                        with: #"<attribute name="name" attributeType="String" preserveAfterDeletion="YES"/>"#))
                        .write(to: contents, atomically: true, encoding: .utf8)
                }
                bundle = try ModelVersionBundle(contentsOf: url)
            }

            func remove() { try? FileManager.default.removeItem(at: folder) }
        }

        static func context(_ coordinator: PersistentStoreCoordinator, author: String? = nil) -> ManagedObjectContext {
            let context = Fixture.context(coordinator)
            context.transactionAuthor = author
            return context
        }

        /// The objects of `seed` (one transaction), then edits and deletes drawn from it, a transaction each:
        /// cars' models and owners changed, a brand (with its tombstone; the seed picks which), cars and an owner
        /// deleted.
        static func record(_ coordinator: PersistentStoreCoordinator, seed: UInt64) throws {
            try Fixture.seed(context(coordinator, author: "seed"), seed: seed)
            var random = SeededGenerator(seed: seed &+ 1000)
            let context = context(coordinator, author: "edit")
            // In natural-key order: both stores then draw the same objects.
            func all(_ entity: String, by key: String) throws -> [ManagedObject] {
                func name(_ object: ManagedObject) -> String { ((try? object.value(forKey: key)) ?? nil) as? String ?? "" }
                return try context.fetch(FetchRequest<ManagedObject>(entityName: entity)).sorted { name($0) < name($1) }
            }
            let cars = try all("Car", by: "plate"), owners = try all("Owner", by: "name"), brands = try all("Brand", by: "name")
            for car in cars where Int.random(in: 0..<3, using: &random) == 0 {
                try car.setValue("edited", forKey: "model")
                if Bool.random(using: &random) { try car.setValue(owners.randomElement(using: &random)!, forKey: "owner") }
            }
            try context.save()
            context.transactionAuthor = "delete"
            // Each brand in turn as the seed goes: the first one's key is one the new store gives again, unless
            // it reserves its keys above the old ones.
            context.delete(brands[Int(seed % UInt64(brands.count))])
            for car in cars where Int.random(in: 0..<5, using: &random) == 0 { context.delete(car) }
            context.delete(owners.randomElement(using: &random)!)
            try context.save()
        }

        static func history(_ coordinator: PersistentStoreCoordinator, after token: PersistentHistoryToken? = nil) throws
            -> [PersistentHistoryTransaction] {
            try #require(try context(coordinator).execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
                as? PersistentHistoryResult).transactions
        }

        /// Each transaction as "number author (context): change, …", a change being "type entity label [updated]
        /// {tombstone}", sorted; the label is the object's natural key, "#gone" when no object of the store has
        /// that ID (keys differ between the stores; what each change names does not).
        static func summary(_ transactions: [PersistentHistoryTransaction], in coordinator: PersistentStoreCoordinator) -> [String] {
            let context = context(coordinator)
            let keys = ["Person": "name", "Vehicle": "registration", "Brand": "name", "Garage": "name"]
            return transactions.map { transaction in
                "\(transaction.transactionNumber) \(transaction.author ?? "-") (\(transaction.contextName ?? "-")): "
                    + (transaction.changes ?? []).map { change in
                        let id = change.changedObjectID
                        let label = keys[id.entity.name].flatMap { key in
                            (try? context.existingObject(with: id)).flatMap { try? $0.value(forKey: key) as? String }
                        } ?? "#gone"
                        let updated = change.updatedProperties.map { " \($0.sorted())" } ?? ""
                        let tombstone = change.tombstone.map { " \($0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })" } ?? ""
                        return "\(change.changeType) \(id.entity.name) \(label)\(updated)\(tombstone)"
                    }.sorted().joined(separator: ", ")
            }
        }

        /// What SQLite's mapping migration of the history `seed` records gives: the whole history, and the
        /// transactions after the first one's token.
        static func sqliteReference(_ place: Place, seed: UInt64) throws -> (all: [String], afterFirst: [String], readers: [String]) {
            let file = place.folder.appendingPathComponent("garage-\(seed).sqlite")
            let migratedFile = place.folder.appendingPathComponent("migrated-\(seed).sqlite")
            let before = PersistentStoreCoordinator(managedObjectModel: place.old)
            try before.addPersistentStore(type: .sqlite, at: file, options: tracking)
            try record(before, seed: seed)
            let first = try #require(history(before).first?.token)
            try before.registerPersistentHistoryReader(named: "indexer", seenThrough: first)
            before.persistentStores.forEach(before.remove)
            try MappingModelMigration.migrate(storeAt: file, sourceModel: place.old, destinationModel: place.new,
                                              mapping: try Fixture.mapping(), into: migratedFile, batchSize: 4)
            let after = PersistentStoreCoordinator(managedObjectModel: place.new)
            try after.addPersistentStore(type: .sqlite, at: migratedFile, options: tracking)
            defer { after.persistentStores.forEach(after.remove) }
            return (summary(try history(after), in: after), summary(try history(after, after: first), in: after),
                    try after.persistentHistoryReaders().map { "\($0.name) \($0.seenThrough == first)" })
        }

        @Test(arguments: [1, 2, 3] as [UInt64])
        func theHistoryReadsAsSQLitesMappingMigrationLeavesIt(seed: UInt64) throws {
            let place = try Place()
            defer { place.remove() }
            let expected = try Self.sqliteReference(place, seed: seed)

            let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
            defer { PostgreSQLTestServer.drop(configuration) }
            let before = PersistentStoreCoordinator(managedObjectModel: place.old)
            try before.addPersistentStore(configuration: configuration, options: Self.tracking)
            try Self.record(before, seed: seed)
            let recorded = try Self.history(before)
            let first = try #require(recorded.first?.token)
            try before.registerPersistentHistoryReader(named: "indexer", seenThrough: first)
            let identifier = try #require(before.postgreSQLStores.first?.identifier)
            before.postgreSQLStores.forEach(before.remove)

            try PostgreSQLStore.migrate(configuration: configuration, from: place.old, to: place.new, mapping: try Fixture.mapping(),
                                        batchSize: 4)
            let after = PersistentStoreCoordinator(managedObjectModel: place.new)
            try after.addPersistentStore(configuration: configuration, options: Self.tracking)
            defer { after.postgreSQLStores.forEach(after.remove) }
            #expect(after.postgreSQLStores.first?.identifier == identifier)
            let all = try Self.history(after)
            let summary = Self.summary(all, in: after)
            #expect(summary == expected.all)
            // The token taken before the migration still reads on, as SQLite's does.
            #expect(Self.summary(try Self.history(after, after: first), in: after) == expected.afterFirst)
            #expect(try after.persistentHistoryReaders().map { "\($0.name) \($0.seenThrough == first)" } == expected.readers)
            #expect(expected.readers == ["indexer true"])
            // What the comparison covers: renamed objects, a tombstone, the migration's transaction.
            try #require(all.count == recorded.count + 1)
            #expect(summary.contains { $0.contains("insert Vehicle P-") })
            #expect(summary.contains { $0.contains("delete Brand #gone [\"name=") })
            let migration = try #require(all.last)
            #expect(migration.author == PersistentHistoryTransaction.migrationAuthor && migration.contextName == "Garage → Garage 2")
            #expect(migration.changes == [])
            #expect(try Fixture.serverState(configuration).last == "leftover schemas: 0")

            // Saves go on recording after the migration's transaction, under new keys.
            let context = Self.context(after, author: "after")
            try context.insertNewObject(forEntityName: "Garage").setValue("north", forKey: "name")
            try context.save()
            let next = try Self.history(after, after: migration.token)
            #expect(Self.summary(next, in: after) == ["\(migration.transactionNumber + 1) after (-): insert Garage north"])
        }

        /// Opening the store with the new model and the mapping model in its options migrates it with its
        /// history, as SQLite's open does; the readers stay.
        @Test func anOpenWithAMappingModelKeepsTheHistory() throws {
            let place = try Place()
            defer { place.remove() }
            var options = Self.tracking
            options.mappingModels = [try Fixture.mapping()]
            let file = place.folder.appendingPathComponent("garage.sqlite")
            let onFile = PersistentStoreCoordinator(managedObjectModel: place.old)
            try onFile.addPersistentStore(type: .sqlite, at: file, options: Self.tracking)
            try Self.record(onFile, seed: 7)
            onFile.persistentStores.forEach(onFile.remove)
            let migratedFile = PersistentStoreCoordinator(managedObjectModel: place.new)
            try migratedFile.addPersistentStore(type: .sqlite, at: file, options: options)
            let expected = Self.summary(try Self.history(migratedFile), in: migratedFile)
            migratedFile.persistentStores.forEach(migratedFile.remove)

            let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
            defer { PostgreSQLTestServer.drop(configuration) }
            let before = PersistentStoreCoordinator(managedObjectModel: place.old)
            try before.addPersistentStore(configuration: configuration, options: Self.tracking)
            try Self.record(before, seed: 7)
            try before.registerPersistentHistoryReader(named: "indexer", seenThrough: try #require(Self.history(before).first?.token))
            before.postgreSQLStores.forEach(before.remove)
            let migrated = PersistentStoreCoordinator(managedObjectModel: place.new)
            try migrated.addPersistentStore(configuration: configuration, options: options)
            defer { migrated.postgreSQLStores.forEach(migrated.remove) }
            #expect(expected.count == 4)
            #expect(Self.summary(try Self.history(migrated), in: migrated) == expected)
            #expect(try migrated.persistentHistoryReaders().map(\.name) == ["indexer"])
        }

        /// A migration whose policy fails part-way leaves the store, its history included, exactly as it was; a
        /// token taken before reads on after a later migration succeeds.
        @Test func aFailingMigrationLeavesTheHistoryAsItWas() throws {
            let place = try Place()
            defer { place.remove() }
            let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
            defer { PostgreSQLTestServer.drop(configuration) }
            let onServer = PersistentStoreCoordinator(managedObjectModel: place.old)
            try onServer.addPersistentStore(configuration: configuration, options: Self.tracking)
            try Self.record(onServer, seed: 4)
            let recorded = try Self.history(onServer)
            let summaryBefore = Self.summary(recorded, in: onServer)
            onServer.postgreSQLStores.forEach(onServer.remove)
            let before = try Fixture.serverState(configuration)
            #expect(before.contains { $0.hasPrefix("ACHANGE: ") && $0.count > 20 })

            MigrationManager.register(policy: FailingOnTenthCarPolicy.self, forClassName: "FailingOnTenthCarPolicy")
            var failing = try Fixture.mapping()
            let carMapping = try #require(failing.entityMappings.firstIndex { $0.name == "CarToVehicle" })
            failing.entityMappings[carMapping].entityMigrationPolicyClassName = "FailingOnTenthCarPolicy"
            #expect(throws: (any Error).self) {
                try PostgreSQLStore.migrate(configuration: configuration, from: place.old, to: place.new, mapping: failing, batchSize: 3)
            }
            let after = try Fixture.serverState(configuration)
            #expect(after == before, "\(after.filter { !before.contains($0) })")
            let again = PersistentStoreCoordinator(managedObjectModel: place.old)
            try again.addPersistentStore(configuration: configuration, options: Self.tracking)
            #expect(Self.summary(try Self.history(again), in: again) == summaryBefore)
            again.postgreSQLStores.forEach(again.remove)

            try PostgreSQLStore.migrate(configuration: configuration, from: place.old, to: place.new, mapping: try Fixture.mapping())
            let migrated = PersistentStoreCoordinator(managedObjectModel: place.new)
            try migrated.addPersistentStore(configuration: configuration, options: Self.tracking)
            defer { migrated.postgreSQLStores.forEach(migrated.remove) }
            let afterToken = try Self.history(migrated, after: try #require(recorded.first?.token))
            #expect(afterToken.map(\.transactionNumber) == recorded.dropFirst().map(\.transactionNumber) + [recorded.last!.transactionNumber + 1])
            #expect(afterToken.last?.author == PersistentHistoryTransaction.migrationAuthor)
        }

        /// A history statement the server refuses (here a transaction column of another type than the new
        /// store's, so its values do not go in) fails the migration naming the history's step, after every
        /// object was made: the store, history included, is exactly as it was, with no schema left behind.
        @Test func aHistoryCopyTheServerRefusesLeavesTheStoreAsItWas() throws {
            let place = try Place()
            defer { place.remove() }
            let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
            defer { PostgreSQLTestServer.drop(configuration) }
            let onServer = PersistentStoreCoordinator(managedObjectModel: place.old)
            try onServer.addPersistentStore(configuration: configuration, options: Self.tracking)
            try Self.record(onServer, seed: 5)
            onServer.postgreSQLStores.forEach(onServer.remove)
            let pool = PostgreSQLConnectionPool(configuration: configuration)
            try pool.withSession { session in
                try session.execute("ALTER TABLE ATRANSACTION ALTER COLUMN ZQUERYGEN TYPE TEXT")
                try session.execute("UPDATE ATRANSACTION SET ZQUERYGEN = ?", ["not bytes".storeValue])
            }
            pool.close()
            let before = try Fixture.serverState(configuration)

            do {
                try PostgreSQLStore.migrate(configuration: configuration, from: place.old, to: place.new, mapping: try Fixture.mapping())
                Issue.record("the migration went through")
            } catch MigrationError.stepFailed(_, let step, _) {
                #expect(step == "carry the persistent history over")
            }
            let after = try Fixture.serverState(configuration)
            #expect(after == before, "\(after.filter { !before.contains($0) })")
            #expect(after.last == "leftover schemas: 0")
        }
    }
}
