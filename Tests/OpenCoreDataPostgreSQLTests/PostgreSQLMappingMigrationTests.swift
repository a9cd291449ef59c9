import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Heavy migration (the `Garage1to2.xcmappingmodel` fixture of the SQLite tests) on a PostgreSQL store: the
/// migrated server holds what SQLite's migration of the same objects gives, and a failing migration leaves
/// the store exactly as it was, with no schema of its own left behind. Serialized: the leftover-schema count
/// is server-wide, and another of these migrations running meanwhile has a working schema.
@Suite(.serialized, .enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLMappingMigrationTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("OpenCoreDataTests/Fixtures")

    static func models() throws -> (old: ManagedObjectModel, new: ManagedObjectModel) {
        let bundle = try ModelVersionBundle(contentsOf: fixtures.appendingPathComponent("Garage.xcdatamodeld"))
        return (try #require(bundle.version(named: "Garage")).model, try #require(bundle.version(named: "Garage 2")).model)
    }

    static func mapping() throws -> MappingModel {
        try MappingModel(contentsOf: fixtures.appendingPathComponent("Garage1to2.xcmappingmodel"))
    }

    /// Owners, brands, a note and cars drawn from `seed` (some scrapped, some without owner or price).
    static func seed(_ context: ManagedObjectContext, seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var owners: [ManagedObject] = []
        for index in 0..<3 {
            let owner = try context.insertNewObject(forEntityName: "Owner")
            try owner.setValue("owner\(index)", forKey: "name")
            owners.append(owner)
        }
        for index in 0..<3 {
            let brand = try context.insertNewObject(forEntityName: "Brand")
            try brand.setValue("brand\(index)", forKey: "name")
            if Bool.random(using: &random) { try brand.setValue(["SE", "IT", "FR"][index], forKey: "country") }
        }
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue("remember", forKey: "text")
        for index in 0..<25 {
            let car = try context.insertNewObject(forEntityName: "Car")
            try car.setValue("P-\(index)", forKey: "plate")
            try car.setValue(["volvo", "saab", "fiat"].randomElement(using: &random)!, forKey: "make")
            if Bool.random(using: &random) { try car.setValue("m\(index)", forKey: "model") }
            if Bool.random(using: &random) { try car.setValue(Float(Int.random(in: 0...40_000, using: &random)) / 4, forKey: "price") }
            try car.setValue(Int16.random(in: 1950...2030, using: &random), forKey: "year")
            try car.setValue(Int.random(in: 0..<4, using: &random) == 0, forKey: "scrapped")
            if Bool.random(using: &random) { try car.setValue(owners.randomElement(using: &random)!, forKey: "owner") }
        }
        try context.save()
    }

    /// Every object of every entity, spelled out with its attributes and its related objects' first
    /// attribute, sorted: two stores holding the same graph give the same lines.
    static func dump(_ context: ManagedObjectContext) throws -> [String] {
        var lines: [String] = []
        let model = try #require(context.persistentStoreCoordinator?.managedObjectModel)
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            for object in try context.fetch(request) {
                var parts = [entity.name]
                for attribute in entity.attributesByName.keys.sorted() {
                    parts.append("\(attribute)=\(try object.value(forKey: attribute).map { "\($0)" } ?? "nil")")
                }
                for relationship in entity.relationshipsByName.keys.sorted() {
                    let value = try object.value(forKey: relationship)
                    let related = (value as? Set<ManagedObject>).map(Array.init) ?? (value as? ManagedObject).map { [$0] } ?? []
                    let names = try related.map { object in
                        let first = object.entity.attributesByName.keys.sorted().first ?? ""
                        return try object.value(forKey: first).map { "\($0)" } ?? "nil"
                    }.sorted()
                    parts.append("\(relationship)=[\(names.joined(separator: ","))]")
                }
                lines.append(parts.joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    static func context(_ coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The server's tables, rows and schemas, as SQL sees them (to tell "exactly as it was").
    static func serverState(_ configuration: PostgreSQLStoreConfiguration) throws -> [String] {
        let pool = PostgreSQLConnectionPool(configuration: configuration)
        defer { pool.close() }
        return try pool.withSession { session in
            var lines: [String] = []
            let tables = try PostgreSQLStore.tableNames(session).sorted()
            for table in tables {
                let rows = try session.rows("SELECT md5(t::text) FROM \(table) t").compactMap { $0.first.flatMap { String.fromStoreValue($0) } }
                lines.append("\(table): \(rows.sorted().joined(separator: ","))")
            }
            let schemas = try session.rows("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'ocd\\_%grating\\_%' OR nspname LIKE 'ocd\\_replaced\\_%'")
            lines.append("leftover schemas: \(schemas.count)")
            return lines
        }
    }

    @Test(arguments: [1, 2] as [UInt64])
    func theServerHoldsWhatSQLitesMigrationGives(seed: UInt64) throws {
        let (old, new) = try Self.models()
        let mapping = try Self.mapping()
        // SQLite: the reference.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-mapping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let oldFile = folder.appendingPathComponent("old.sqlite"), newFile = folder.appendingPathComponent("new.sqlite")
        let onFile = PersistentStoreCoordinator(managedObjectModel: old)
        try onFile.addPersistentStore(type: .sqlite, at: oldFile)
        try Self.seed(Self.context(onFile), seed: seed)
        onFile.persistentStores.forEach(onFile.remove)
        try MappingModelMigration.migrate(storeAt: oldFile, sourceModel: old, destinationModel: new, mapping: mapping,
                                          into: newFile, batchSize: 4)
        let migratedFile = PersistentStoreCoordinator(managedObjectModel: new)
        try migratedFile.addPersistentStore(type: .sqlite, at: newFile)
        let expected = try Self.dump(Self.context(migratedFile))
        // PostgreSQL.
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let onServer = PersistentStoreCoordinator(managedObjectModel: old)
        try onServer.addPersistentStore(configuration: configuration)
        try Self.seed(Self.context(onServer), seed: seed)
        onServer.postgreSQLStores.forEach(onServer.remove)
        try PostgreSQLStore.migrate(configuration: configuration, from: old, to: new, mapping: mapping, batchSize: 4)

        let migrated = PersistentStoreCoordinator(managedObjectModel: new)
        try migrated.addPersistentStore(configuration: configuration)
        defer { migrated.postgreSQLStores.forEach(migrated.remove) }
        let answer = try Self.dump(Self.context(migrated))
        #expect(expected.count > 20)
        #expect(answer == expected)
        #expect(try Self.serverState(configuration).last == "leftover schemas: 0")
        // The old model no longer opens it.
        let stale = PersistentStoreCoordinator(managedObjectModel: old)
        #expect(throws: (any Error).self) { try stale.addPersistentStore(configuration: configuration) }
        stale.postgreSQLStores.forEach(stale.remove)
    }

    /// Opening the store with the new model and the mapping model in the options migrates it on open (through
    /// `addPersistentStore(type: .postgreSQL, at:)`), to what SQLite's open with the same options gives; a
    /// second instance opening it afterwards finds it migrated.
    @Test func anOpenWithAMappingModelInItsOptionsMigratesAsSQLitesOpenDoes() throws {
        let (old, new) = try Self.models()
        var options = StoreOptions()
        options.mappingModels = [try Self.mapping()]
        // SQLite: the reference, migrated as the store is opened.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-mapping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("garage.sqlite")
        let onFile = PersistentStoreCoordinator(managedObjectModel: old)
        try onFile.addPersistentStore(type: .sqlite, at: file)
        try Self.seed(Self.context(onFile), seed: 5)
        onFile.persistentStores.forEach(onFile.remove)
        let migratedFile = PersistentStoreCoordinator(managedObjectModel: new)
        try migratedFile.addPersistentStore(type: .sqlite, at: file, options: options)
        let expected = try Self.dump(Self.context(migratedFile))
        // PostgreSQL, by URL.
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let onServer = PersistentStoreCoordinator(managedObjectModel: old)
        try onServer.addPersistentStore(configuration: configuration)
        try Self.seed(Self.context(onServer), seed: 5)
        onServer.postgreSQLStores.forEach(onServer.remove)
        let base = try #require(PostgreSQLTestServer.url)
        let schema = try #require(configuration.schema)
        let url = try #require(URL(string: base + (base.contains("?") ? "&" : "?") + "schema=\(schema)"))
        let migrated = PersistentStoreCoordinator(managedObjectModel: new)
        try migrated.addPersistentStore(type: .postgreSQL, at: url, options: options)
        defer { migrated.postgreSQLStores.forEach(migrated.remove) }
        #expect(expected.count > 20)
        #expect(try Self.dump(Self.context(migrated)) == expected)
        #expect(try Self.serverState(configuration).last == "leftover schemas: 0")
        let second = PersistentStoreCoordinator(managedObjectModel: new)
        try second.addPersistentStore(configuration: configuration, options: options)
        defer { second.postgreSQLStores.forEach(second.remove) }
        #expect(try Self.dump(Self.context(second)) == expected)
    }

    /// An open whose mapping model's policy fails part-way throws, and leaves the store exactly as it was
    /// (still opened by its own model).
    @Test func anOpenWhoseMappingFailsLeavesTheStoreAsItWas() throws {
        let (old, new) = try Self.models()
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let onServer = PersistentStoreCoordinator(managedObjectModel: old)
        try onServer.addPersistentStore(configuration: configuration)
        try Self.seed(Self.context(onServer), seed: 6)
        onServer.postgreSQLStores.forEach(onServer.remove)
        let before = try Self.serverState(configuration)

        MigrationManager.register(policy: FailingOnTenthCarPolicy.self, forClassName: "FailingOnTenthCarPolicy")
        var mapping = try Self.mapping()
        let carMapping = try #require(mapping.entityMappings.firstIndex { $0.name == "CarToVehicle" })
        mapping.entityMappings[carMapping].entityMigrationPolicyClassName = "FailingOnTenthCarPolicy"
        var options = StoreOptions()
        options.mappingModels = [mapping]
        let failing = PersistentStoreCoordinator(managedObjectModel: new)
        #expect(throws: MigrationError.self) { try failing.addPersistentStore(configuration: configuration, options: options) }
        #expect(failing.postgreSQLStores.isEmpty)
        let after = try Self.serverState(configuration)
        #expect(after == before, "\(after.filter { !before.contains($0) })")
        let again = PersistentStoreCoordinator(managedObjectModel: old)
        try again.addPersistentStore(configuration: configuration)
        defer { again.postgreSQLStores.forEach(again.remove) }
        #expect(try Self.context(again).count(for: FetchRequest<ManagedObject>(entityName: "Car")) == 25)
    }

    /// A mapping that fails on an object part-way (an expression reading a key the source lacks is refused
    /// before anything; a policy throwing mid-run is what a real failure looks like): nothing changes.
    @Test func aFailingMigrationLeavesTheStoreAsItWas() throws {
        let (old, new) = try Self.models()
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let onServer = PersistentStoreCoordinator(managedObjectModel: old)
        try onServer.addPersistentStore(configuration: configuration)
        try Self.seed(Self.context(onServer), seed: 3)
        onServer.postgreSQLStores.forEach(onServer.remove)
        let before = try Self.serverState(configuration)

        // The wrong models for the mapping: refused before anything is made.
        #expect(throws: MigrationError.self) {
            try PostgreSQLStore.migrate(configuration: configuration, from: new, to: old, mapping: try Self.mapping())
        }
        #expect(try Self.serverState(configuration) == before)

        // A policy that throws on the tenth car, after batches were saved into the new schema.
        MigrationManager.register(policy: FailingOnTenthCarPolicy.self, forClassName: "FailingOnTenthCarPolicy")
        var mapping = try Self.mapping()
        let carMapping = try #require(mapping.entityMappings.firstIndex { $0.name == "CarToVehicle" })
        mapping.entityMappings[carMapping].entityMigrationPolicyClassName = "FailingOnTenthCarPolicy"
        #expect(throws: (any Error).self) {
            try PostgreSQLStore.migrate(configuration: configuration, from: old, to: new, mapping: mapping, batchSize: 3)
        }
        let after = try Self.serverState(configuration)
        #expect(after == before, "\(after.filter { !before.contains($0) })")
        // And the store still opens with its own model.
        let again = PersistentStoreCoordinator(managedObjectModel: old)
        try again.addPersistentStore(configuration: configuration)
        defer { again.postgreSQLStores.forEach(again.remove) }
        #expect(try Self.context(again).count(for: FetchRequest<ManagedObject>(entityName: "Car")) == 25)
    }
}

/// Fails the migration when it reaches the tenth car.
final class FailingOnTenthCarPolicy: EntityMigrationPolicy {
    private var seen = 0

    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
                                             manager: MigrationManager) throws {
        seen += 1
        if seen == 10 { throw MigrationError.stepFailed(path: "test", step: "tenth car", reason: "the test's policy fails here") }
        try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
    }
}
