import Foundation
import Testing
@testable import OpenCoreData

/// Migrating filled stores of the Shop fixture bundle (three versions in Xcode's format): every object of
/// a migrated store must equal what a fresh store of the new version holds when filled with the same data
/// as the new version spells it.
@Suite struct ShopMigrationTests {
    typealias Object = MigrationFixtures.Object

    /// Version "Shop" data, drawn from `seed`: customers, orders (some without customer), products in at
    /// most one order's items, tags on products, legacy rows.
    static func shopData(seed: UInt64) -> [Object] {
        var random = SeededGenerator(seed: seed)
        var objects: [Object] = []
        let tags = (0..<4).map { "t\($0)" }
        let products = (0..<7).map { "p\($0)" }
        let customers = (0..<4).map { "c\($0)" }
        for tag in tags { objects.append(Object(entity: "Tag", key: tag, values: ["label": tag])) }
        for product in products {
            let chosen = tags.filter { _ in Bool.random(using: &random) }
            objects.append(Object(entity: "Product", key: product, values: ["title": product], links: ["tags": chosen]))
        }
        for customer in customers {
            var values: [String: Any] = ["name": customer]
            if Bool.random(using: &random) { values["email"] = "\(customer)@example.org" }
            if Bool.random(using: &random) { values["age"] = Int16.random(in: 18...99, using: &random) }
            if Bool.random(using: &random) { values["vip"] = Bool.random(using: &random) }
            if Bool.random(using: &random) { values["nickname"] = "nick-\(customer)" }
            objects.append(Object(entity: "Customer", key: customer, values: values))
        }
        var owner: [String: String] = [:]
        for product in products where Int.random(in: 0..<3, using: &random) > 0 {
            owner[product] = "\(100 + Int.random(in: 0..<5, using: &random))"
        }
        for number in 100..<105 {
            var values: [String: Any] = ["number": Int32(number)]
            if Bool.random(using: &random) { values["total"] = Float(Int.random(in: 1...999, using: &random)) / 8 }
            if Bool.random(using: &random) { values["note"] = "note \(number)" }
            var links: [String: [String]] = ["items": products.filter { owner[$0] == "\(number)" }]
            if Int.random(in: 0..<4, using: &random) > 0 { links["customer"] = [customers.randomElement(using: &random)!] }
            objects.append(Object(entity: "Order", key: "\(number)", values: values, links: links))
        }
        objects.append(Object(entity: "Legacy", key: "L1", values: ["code": "L1"]))
        return objects
    }

    /// The same data as version "Shop 3" spells it (through "Shop 2": renamed entities and properties,
    /// widened types, defaults for new required attributes, lists ordered by old primary key).
    static func shop3Data(from old: [Object]) -> [Object] {
        var result: [Object] = []
        let orders = old.filter { $0.entity == "Order" }
        for object in old {
            switch object.entity {
            case "Tag":
                result.append(object)
            case "Product":
                let tags = (object.links["tags"] ?? []).sorted()
                let purchase = orders.first { ($0.links["items"] ?? []).contains(object.key) }
                var links = ["tags": tags]
                if let purchase { links["purchase"] = [purchase.key] }
                result.append(Object(entity: "Product", key: object.key, values: object.values, links: links))
            case "Customer":
                var values: [String: Any] = ["name": object.values["name"]!, "loyalty": Int32(0),
                                             "nickname": object.values["nickname"] ?? "friend"]
                values["contact"] = object.values["email"]
                values["age"] = (object.values["age"] as? Int16).map { Int64($0) }
                values["isVIP"] = object.values["vip"]
                let purchases = orders.filter { $0.links["customer"] == [object.key] }.map(\.key).sorted()
                result.append(Object(entity: "Customer", key: object.key, values: values.compactMapValues { $0 },
                                     links: ["purchases": purchases]))
            case "Order":
                var values: [String: Any] = ["number": Int64(object.values["number"] as! Int32)]
                values["total"] = (object.values["total"] as? Float).map { Double($0) }
                values["note"] = object.values["note"]
                result.append(Object(entity: "Purchase", key: object.key, values: values.compactMapValues { $0 }))
            default:
                break  // Legacy is gone in "Shop 2".
            }
        }
        return result
    }

    /// A store of version "Shop" filled with `shopData(seed:)`, and its bytes.
    static func shopStore(in directory: TemporaryDirectory, seed: UInt64) throws -> (url: URL, bytes: Data) {
        let url = directory.file("Store.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: MigrationFixtures.shopBundle(), version: "Shop"),
                                   with: shopData(seed: seed))
        return (url, try MigrationFixtures.bytes(url))
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func openingAStoreOfTheFirstVersionMigratesItThroughEveryVersion(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.shopBundle()
        let old = directory.file("Old.sqlite"), fresh = directory.file("Fresh.sqlite")
        let data = Self.shopData(seed: seed)
        try MigrationFixtures.fill(old, model: ManagedObjectModel(contentsOf: bundle, version: "Shop"), with: data)

        let current = try ManagedObjectModel(contentsOf: bundle)
        #expect(current.versionName == "Shop 3")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
        try coordinator.addPersistentStore(type: .sqlite, at: old)
        coordinator.persistentStores.forEach(coordinator.remove)

        try MigrationFixtures.fill(fresh, model: current, with: Self.shop3Data(from: data))
        #expect(try MigrationFixtures.dump(old, model: current) == MigrationFixtures.dump(fresh, model: current))
        #expect(try MigrationFixtures.layout(old) == MigrationFixtures.layout(fresh))
        #expect(try ModelVersionBundle(contentsOf: bundle).version(ofStoreAt: old)?.name == "Shop 3")
        let metadata = try StoreMetadata.read(storeAt: old.path)
        #expect(metadata.versionIdentifiers == ["3.0"])
    }

    @Test func aMigratedStoreKeepsItsIdentityAndHandsOutNewKeysAboveTheOldOnes() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.shopBundle()
        let url = directory.file("Store.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "Shop"), with: Self.shopData(seed: 9))
        let uuid = try StoreMetadata.read(storeAt: url.path).storeUUID

        let current = try ManagedObjectModel(contentsOf: bundle)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        #expect(coordinator.persistentStores[0].identifier == uuid.uuidString.uppercased())
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let customer = try context.insertNewObject(forEntityName: "Customer")
        try customer.setValue("new", forKey: "name")
        try context.save()
        #expect(customer.objectID.primaryKey == 5)  // four customers came before
        let request = FetchRequest<ManagedObject>(entityName: "Customer")
        #expect(try context.count(for: request) == 5)
    }

    @Test func aContainerMigratesWhenItLoadsItsStore() throws {
        let directory = TemporaryDirectory()
        let (url, _) = try Self.shopStore(in: directory, seed: 8)
        let container = PersistentContainer(name: "Shop", managedObjectModel: try ManagedObjectModel(contentsOf: MigrationFixtures.shopBundle()))
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let purchases = try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Purchase")) }
        #expect(purchases == 5)
    }

    @Test func theDryRunPlanNamesEachStepAndRunsNothing() throws {
        let directory = TemporaryDirectory()
        let bundleURL = try MigrationFixtures.shopBundle()
        let (url, before) = try Self.shopStore(in: directory, seed: 4)
        let bundle = try ModelVersionBundle(contentsOf: bundleURL)
        let plans = try StoreMigration.plan(storeAt: url, to: bundle)
        #expect(plans.map { "\($0.sourceVersion) → \($0.targetVersion)" } == ["Shop → Shop 2", "Shop 2 → Shop 3"])
        let first = plans[0].steps
        #expect(first.contains { $0.kind == .copyRows && $0.subject == "Purchase" && $0.summary.contains("(from Order)") })
        #expect(!first.contains { $0.kind == .copyRows && $0.subject == "Legacy" })
        #expect(first.contains { $0.kind == .dropTable && $0.summary == "drop old ZLEGACY" })
        #expect(first.last { $0.kind != .cleanUp }?.kind == .writeMetadata)
        #expect(first.allSatisfy { $0.sql.allSatisfy { !$0.contains("c0@example.org") } })
        #expect(try MigrationFixtures.bytes(url) == before)
        #expect(try bundle.version(ofStoreAt: url)?.name == "Shop")
    }

    @Test func versionsLoadByNameWithTheirIdentifiers() throws {
        let bundle = try ModelVersionBundle(contentsOf: MigrationFixtures.shopBundle())
        #expect(bundle.versions.map(\.name) == ["Shop", "Shop 2", "Shop 3"])
        #expect(bundle.versions.map(\.isCurrent) == [false, false, true])
        #expect(bundle.current.name == "Shop 3")
        #expect(bundle.versions.map(\.model.versionIdentifiers) == [["1.0"], ["2.0"], ["3.0"]])
        #expect(Set(bundle.versions.map(\.hashDigest)).count == 3)
        let second = try ManagedObjectModel(contentsOf: MigrationFixtures.shopBundle(), version: "Shop 2.xcdatamodel")
        #expect(second.entityVersionHashesByName == bundle.version(named: "Shop 2")?.model.entityVersionHashesByName)
        #expect(throws: ModelError.versionNotFound(bundle: try MigrationFixtures.shopBundle().path, version: "Shop 9",
                                                   available: ["Shop", "Shop 2", "Shop 3"])) {
            try ManagedObjectModel(contentsOf: MigrationFixtures.shopBundle(), version: "Shop 9")
        }
    }

    @Test func withoutAutomaticMigrationOrReadOnlyTheOpenSaysMigrationIsNeeded() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.shopBundle()
        let (url, before) = try Self.shopStore(in: directory, seed: 5)
        let current = try ManagedObjectModel(contentsOf: bundle)
        let description = PersistentStoreDescription(url: url)
        #expect(description.shouldMigrateStoreAutomatically && description.shouldInferMappingModelAutomatically)
        try description.setOption(false, forKey: StoreOptions.Key.migratePersistentStoresAutomatically)
        let refusals: [(StoreOptions, String)] = [
            (description.options, "automatic migration is turned off"),
            (StoreOptions(infersMappingModelAutomatically: false), "inferring the mapping is turned off"),
            (StoreOptions(readOnly: true), "read-only"),
        ]
        for (options, reason) in refusals {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
            do {
                try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
                Issue.record("opened without migrating")
            } catch let MigrationError.migrationNeeded(path, storeVersion, modelVersion, why) {
                #expect(path == url.path && storeVersion == "Shop" && modelVersion == "Shop 3")
                #expect(why.contains(reason))
            }
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }

    @Test func aStoreOfALaterVersionIsNeverMigratedBack() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.shopBundle()
        let url = directory.file("Store.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle), with: [])
        #expect(throws: MigrationError.storeIsNewer(path: url.path, storeVersion: "Shop 3", modelVersion: "Shop")) {
            try PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(contentsOf: bundle, version: "Shop"))
                .addPersistentStore(type: .sqlite, at: url)
        }
    }
}
