import Foundation
import GRDB
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import OpenCoreData

/// Staged migration on the Catalog fixture bundle (six versions in Xcode's format). "Catalog" keeps an
/// item's price as text; no inferred mapping turns text into a number, so:
/// - "Catalog" → "Catalog 2" (custom stage): adds `priceValue` (Double); `didMigrate` converts the text;
/// - "Catalog 2" → "Catalog 3" (lightweight): drops the text `price`, renames `priceValue` to `price`;
/// - "Catalog 3" → "Catalog 4": adds `stock` (Integer 16, default 0);
/// - "Catalog 4" → "Catalog 5" (custom stage): `willMigrate` trims item names at "Catalog 4", the plan adds
///   an optional `slug` and widens `stock`, `didMigrate` fills `slug` from the name at "Catalog 5";
/// - "Catalog 5" → "Catalog 6": `slug` becomes required without default (refused if any is missing), and
///   `Maker` is renamed `Brand` (`maker` → `brand`).
@Suite struct StagedMigrationTests {
    typealias Object = MigrationFixtures.Object

    static let keys = ["Item": "name", "Maker": "name", "Brand": "name"]

    static func bundleURL() throws -> URL { try InteropFixtures.url("Catalog.xcdatamodeld") }

    /// A handler's failure, naming the item it could not convert.
    struct UnreadablePrice: Error, CustomStringConvertible {
        var item: String
        var text: String
        var description: String { "item '\(item)' has price '\(text)', which is not a number" }
    }

    /// What the handlers did, in order ("didMigrate@Catalog 2": the handler and the version its container
    /// was at), shared with the `@Sendable` handlers.
    final class Journal: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// Version "Catalog" data from `seed`: makers, items with padded names and prices as text (some none),
    /// some items with a maker.
    static func catalogData(seed: UInt64, unreadablePrice: Bool = false) -> [Object] {
        var random = SeededGenerator(seed: seed)
        var objects: [Object] = []
        let makers = (0..<3).map { "Maker \($0)" }
        for maker in makers { objects.append(Object(entity: "Maker", key: maker, values: ["name": maker])) }
        for number in 0..<8 {
            let padding = String(repeating: " ", count: Int.random(in: 0...2, using: &random))
            let name = "\(padding)Desk Lamp \(number)\(padding)"
            var values: [String: Any] = ["name": name]
            switch Int.random(in: 0..<4, using: &random) {
            case 0: break
            case 1: values["price"] = "\(Int.random(in: 1...500, using: &random))"
            case 2: values["price"] = " \(Double(Int.random(in: 1...4000, using: &random)) / 8) "
            default: values["price"] = "\(Double(Int.random(in: 1...4000, using: &random)) / 4)"
            }
            var links: [String: [String]] = [:]
            if Bool.random(using: &random) { links["maker"] = [makers.randomElement(using: &random)!] }
            objects.append(Object(entity: "Item", key: name, values: values, links: links))
        }
        if unreadablePrice {
            objects.append(Object(entity: "Item", key: "Odd Chair", values: ["name": "Odd Chair", "price": "n/a"]))
        }
        return objects
    }

    /// The same data as "Catalog 6" spells it: what the stages' code makes of it.
    static func catalog6Data(from old: [Object]) -> [Object] {
        old.map { object in
            guard object.entity == "Item" else { return Object(entity: "Brand", key: object.key, values: object.values) }
            let name = (object.values["name"] as! String).trimmingCharacters(in: .whitespaces)
            var values: [String: Any] = ["name": name, "stock": Int64(0), "slug": slug(name)]
            if let text = object.values["price"] as? String {
                values["price"] = Double(text.trimmingCharacters(in: .whitespaces))!
            }
            var links: [String: [String]] = [:]
            if let maker = object.links["maker"] { links["brand"] = maker }
            return Object(entity: "Item", key: name, values: values, links: links)
        }
    }

    static func slug(_ name: String) -> String { name.lowercased().replacingOccurrences(of: " ", with: "-") }

    /// The two custom stages and a lightweight stage over the versions between them. `failing` names a
    /// handler ("didMigrate@Catalog 5") that throws instead of doing its work; `during` runs in every
    /// handler before its work (with the handler's name).
    static func manager(journal: Journal = Journal(), failing: String? = nil,
                        during: (@Sendable (String) throws -> Void)? = nil) -> StagedMigrationManager {
        @Sendable func begin(_ name: String, _ manager: StagedMigrationManager) throws -> ManagedObjectContext {
            let container = try #require(manager.container)
            let entry = "\(name)@\(container.managedObjectModel.versionName ?? "?")"
            journal.add(entry)
            try during?(entry)
            if entry == failing { throw UnreadablePrice(item: "any", text: "stage told to fail") }
            return container.newBackgroundContext()
        }
        let prices = CustomMigrationStage(migratingFrom: "Catalog", to: "Catalog 2")
        prices.label = "prices as numbers"
        prices.didMigrateHandler = { manager, _ in
            let context = try begin("didMigrate", manager)
            try context.performAndWait {
                for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                    guard let text = try item.value(forKey: "price") as? String else { continue }
                    guard let price = Double(text.trimmingCharacters(in: .whitespaces)) else {
                        throw UnreadablePrice(item: try item.value(forKey: "name") as? String ?? "?", text: text)
                    }
                    try item.setValue(price, forKey: "priceValue")
                }
                try context.save()
            }
        }
        let slugs = CustomMigrationStage(migratingFrom: "Catalog 4.xcdatamodel", to: "Catalog 5")
        slugs.willMigrateHandler = { manager, _ in
            let context = try begin("willMigrate", manager)
            try context.performAndWait {
                for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                    let name = try item.value(forKey: "name") as! String
                    try item.setValue(name.trimmingCharacters(in: .whitespaces), forKey: "name")
                }
                try context.save()
            }
        }
        slugs.didMigrateHandler = { manager, _ in
            let context = try begin("didMigrate", manager)
            try context.performAndWait {
                for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                    try item.setValue(slug(try item.value(forKey: "name") as! String), forKey: "slug")
                }
                try context.save()
            }
        }
        return StagedMigrationManager(stages: [slugs, LightweightMigrationStage(["Catalog 2", "Catalog 3", "Catalog 4"]), prices])
    }

    /// A store of version `version` holding `objects`, and its bytes.
    static func store(_ directory: TemporaryDirectory, version: String = "Catalog", objects: [Object]) throws -> (url: URL, bytes: Data) {
        let url = directory.file("Store.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundleURL(), version: version), with: objects)
        return (url, try MigrationFixtures.bytes(url))
    }

    /// Files the migration left in the store's folder besides the store itself.
    static func leftovers(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("migrating") }
    }

    @Test func theBundleHasSixVersions() throws {
        let bundle = try ModelVersionBundle(contentsOf: Self.bundleURL())
        #expect(bundle.versions.map(\.name) == (1...6).map { $0 == 1 ? "Catalog" : "Catalog \($0)" })
        #expect(bundle.current.name == "Catalog 6")
        #expect(Set(bundle.versions.map(\.hashDigest)).count == 6)
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func aStoreSeveralVersionsBehindGoesThroughEveryStageInOneOpen(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let data = Self.catalogData(seed: seed)
        let (url, _) = try Self.store(directory, objects: data)
        let journal = Journal()

        let current = try ManagedObjectModel(contentsOf: Self.bundleURL())
        let container = PersistentContainer(name: "Catalog", managedObjectModel: current)
        let description = PersistentStoreDescription(url: url)
        try description.setOption(Self.manager(journal: journal), forKey: StoreOptions.Key.stagedMigrationManager)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let coordinator = container.persistentStoreCoordinator
        coordinator.persistentStores.forEach(coordinator.remove)

        #expect(journal.all == ["didMigrate@Catalog 2", "willMigrate@Catalog 4", "didMigrate@Catalog 5"])
        let fresh = directory.file("Fresh.sqlite")
        try MigrationFixtures.fill(fresh, model: current, with: Self.catalog6Data(from: data))
        #expect(try MigrationFixtures.dump(url, model: current, keys: Self.keys) == MigrationFixtures.dump(fresh, model: current, keys: Self.keys))
        #expect(try MigrationFixtures.layout(url) == MigrationFixtures.layout(fresh))
        #expect(try ModelVersionBundle(contentsOf: Self.bundleURL()).version(ofStoreAt: url)?.name == "Catalog 6")
        #expect(try StoreMetadata.read(storeAt: url.path).versionIdentifiers == ["6.0"])
        #expect(try Self.leftovers(directory).isEmpty)
    }

    @Test func withoutTheStagesTheOpenIsRefusedAndTheStoreKept() throws {
        let directory = TemporaryDirectory()
        let (url, before) = try Self.store(directory, objects: Self.catalogData(seed: 5))
        // Inferred alone, the prices would be dropped and no slug made: the required slug is refused.
        #expect(throws: MigrationError.missingRequiredValues(entity: "Item", attribute: "slug", rowCount: 8)) {
            try PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(contentsOf: Self.bundleURL()))
                .addPersistentStore(type: .sqlite, at: url)
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }

    @Test(arguments: ["didMigrate@Catalog 2", "willMigrate@Catalog 4", "didMigrate@Catalog 5"])
    func aThrowingHandlerLeavesTheStoreByteForByteAsItWas(failing: String) throws {
        let directory = TemporaryDirectory()
        let (url, before) = try Self.store(directory, objects: Self.catalogData(seed: 6))
        let bundle = try ModelVersionBundle(contentsOf: Self.bundleURL())
        do {
            try StoreMigration.migrate(storeAt: url, to: bundle, stagedMigrationManager: Self.manager(failing: failing))
            Issue.record("migrated although a handler threw")
        } catch let MigrationError.stageFailed(path, stage, reason) {
            #expect(path == url.path)
            let (handler, version) = (failing.split(separator: "@")[0], failing.split(separator: "@")[1])
            #expect(stage.contains("(\(handler), at '\(version)')"))
            #expect(stage.contains(failing == "didMigrate@Catalog 2" ? "prices as numbers" : "custom stage 'Catalog 4.xcdatamodel' → 'Catalog 5'"))
            #expect(reason.contains("stage told to fail"))
        }
        #expect(try MigrationFixtures.bytes(url) == before)
        #expect(try bundle.version(ofStoreAt: url)?.name == "Catalog")
        #expect(try Self.leftovers(directory).isEmpty)
    }

    @Test func aPriceTheHandlerCannotConvertRefusesTheOpenNamingStageAndItem() throws {
        let directory = TemporaryDirectory()
        let (url, before) = try Self.store(directory, objects: Self.catalogData(seed: 7, unreadablePrice: true))
        var options = StoreOptions()
        try options.setOption(Self.manager(), forKey: StoreOptions.Key.stagedMigrationManager)
        do {
            try PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(contentsOf: Self.bundleURL()))
                .addPersistentStore(type: .sqlite, at: url, options: options)
            Issue.record("opened although a price is not a number")
        } catch let MigrationError.stageFailed(path, stage, reason) {
            #expect(path == url.path)
            #expect(stage == "prices as numbers (didMigrate, at 'Catalog 2')")
            #expect(reason == "item 'Odd Chair' has price 'n/a', which is not a number")
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }

    @Test func aStoreAtAVersionBetweenTheStagesStartsWhereItIs() throws {
        let directory = TemporaryDirectory()
        let bundle = try ModelVersionBundle(contentsOf: Self.bundleURL())
        let items = [Object(entity: "Item", key: " Shelf ", values: ["name": " Shelf ", "price": 12.5])]
        let (url, _) = try Self.store(directory, version: "Catalog 3", objects: items)
        let journal = Journal()
        let plans = try StoreMigration.migrate(storeAt: url, to: bundle, version: "Catalog 5",
                                               stagedMigrationManager: Self.manager(journal: journal))
        #expect(plans.map { "\($0.sourceVersion) → \($0.targetVersion)" } == ["Catalog 3 → Catalog 4", "Catalog 4 → Catalog 5"])
        #expect(journal.all == ["willMigrate@Catalog 4", "didMigrate@Catalog 5"])
        let v5 = try #require(bundle.version(named: "Catalog 5")).model
        #expect(try MigrationFixtures.dump(url, model: v5, keys: Self.keys)
            == ["Item maker=nil name=Shelf (String) price=12.5 (Double) slug=shelf (String) stock=0 (Int64)"])
        // Already there: nothing is copied, no handler runs.
        let bytes = try MigrationFixtures.bytes(url)
        #expect(try StoreMigration.migrate(storeAt: url, to: bundle, version: "Catalog 5",
                                           stagedMigrationManager: Self.manager(journal: journal)).isEmpty)
        #expect(journal.all.count == 2)
        #expect(try MigrationFixtures.bytes(url) == bytes)
    }

    @Test func aCommitByAnotherConnectionMeanwhileIsNeverOverwritten() throws {
        let directory = TemporaryDirectory()
        let (url, _) = try Self.store(directory, objects: Self.catalogData(seed: 8))
        let bundle = try ModelVersionBundle(contentsOf: Self.bundleURL())
        let manager = Self.manager(during: { entry in
            guard entry == "didMigrate@Catalog 5" else { return }
            let other = try DatabaseQueue(path: url.path)
            try other.write { try $0.execute(sql: "UPDATE ZMAKER SET ZNAME = 'Renamed Elsewhere' WHERE Z_PK = 1") }
            try other.close()
        })
        #expect(throws: MigrationError.storeChangedDuringMigration(path: url.path)) {
            try StoreMigration.migrate(storeAt: url, to: bundle, stagedMigrationManager: manager)
        }
        #expect(try bundle.version(ofStoreAt: url)?.name == "Catalog")
        let v1 = try #require(bundle.version(named: "Catalog")).model
        #expect(try MigrationFixtures.dump(url, model: v1, keys: Self.keys).contains { $0.hasPrefix("Maker") && $0.contains("name=Renamed Elsewhere") })
        #expect(try Self.leftovers(directory).isEmpty)
    }

    @Test func aWriteBackThatCannotTakeTheLockLeavesTheStoreByteForByteAsItWas() throws {
        let directory = TemporaryDirectory()
        let (url, before) = try Self.store(directory, objects: Self.catalogData(seed: 9))
        let bundle = try ModelVersionBundle(contentsOf: Self.bundleURL())
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true  // the lock is held across accesses on purpose
        let holder = try DatabaseQueue(path: url.path, configuration: configuration)
        let manager = Self.manager(during: { entry in
            // Another connection takes the write lock (and keeps it) before the copy is written back.
            guard entry == "didMigrate@Catalog 5" else { return }
            try holder.inDatabase { try $0.execute(sql: "BEGIN IMMEDIATE") }
        })
        do {
            try StoreMigration.migrate(storeAt: url, to: bundle, stagedMigrationManager: manager, busyTimeout: 0.1)
            Issue.record("written back although another connection held the write lock")
        } catch StoreError.busy(let path) {
            #expect(path == url.path)
        }
        try holder.inDatabase { try $0.execute(sql: "ROLLBACK") }
        try holder.close()
        #expect(try MigrationFixtures.bytes(url) == before)
        #expect(try Self.leftovers(directory).isEmpty)
    }

    @Test func aCopyLeftByAMigrationThatDiedIsRemovedAndOneInUseIsKept() throws {
        let directory = TemporaryDirectory()
        let (url, _) = try Self.store(directory, objects: Self.catalogData(seed: 11))
        let dead = directory.file(".Store.sqlite.migrating-DEAD").path, busy = directory.file(".Store.sqlite.migrating-BUSY").path
        let other = directory.file(".Other.sqlite.migrating-DEAD").path
        for path in [dead, dead + "-wal", busy, other] { try Data("half a copy".utf8).write(to: URL(fileURLWithPath: path)) }
        // A migration still working on its copy holds the copy's flock (here: through another descriptor).
        let holder = open(busy, O_RDWR)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)

        try StoreMigration.migrate(storeAt: url, to: ModelVersionBundle(contentsOf: Self.bundleURL()),
                                   stagedMigrationManager: Self.manager())
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("migrating") })
        #expect(left == [".Store.sqlite.migrating-BUSY", ".Other.sqlite.migrating-DEAD"])
    }

    /// A migration killed after its write-back leaves the store migrated and its copy (with the store a
    /// mapping model made from it) behind; the store then opens without migrating, and that open removes them.
    @Test func copiesLeftByAMigrationThatDiedAfterItsWriteBackAreRemovedByTheNextWritableOpen() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        let current = try ManagedObjectModel(contentsOf: Self.bundleURL())
        try MigrationFixtures.fill(url, model: current, with: [])
        let dead = directory.file(".Store.sqlite.migrating-DEAD").path, busy = directory.file(".Store.sqlite.migrating-BUSY").path
        let derived = StoreFileReplacement.derivedPath(of: dead), busyDerived = StoreFileReplacement.derivedPath(of: busy)
        let orphan = StoreFileReplacement.derivedPath(of: directory.file(".Store.sqlite.migrating-GONE").path)
        for path in [dead, dead + "-wal", derived, derived + "-shm", busy, busyDerived, orphan] {
            try Data("half a copy".utf8).write(to: URL(fileURLWithPath: path))
        }
        let holder = open(busy, O_RDWR)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)
        func openStore(readOnly: Bool) throws {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(readOnly: readOnly))
            coordinator.persistentStores.forEach(coordinator.remove)
        }
        // A read-only open writes nothing, not even this.
        try openStore(readOnly: true)
        #expect(try Self.leftovers(directory).count == 7)
        try openStore(readOnly: false)
        #expect(Set(try Self.leftovers(directory)) == [".Store.sqlite.migrating-BUSY", ".Store.sqlite.migrating-BUSY.derived"])
    }

    /// A kill between removing a copy and its log leaves the log alone; a store opened with a model that is
    /// not from a bundle (a compiled model, one built in code) clears the leftovers too.
    @Test func logsWhoseCopyIsGoneAreRemovedByAnyWritableOpen() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Store.sqlite")
        let current = try ManagedObjectModel(contentsOf: Self.bundleURL())
        try MigrationFixtures.fill(url, model: current, with: [])
        let gone = directory.file(".Store.sqlite.migrating-GONE").path
        let dead = directory.file(".Store.sqlite.migrating-DEAD").path
        for path in [gone + "-wal", gone + "-shm", StoreFileReplacement.derivedPath(of: gone) + "-journal", dead] {
            try Data("half a copy".utf8).write(to: URL(fileURLWithPath: path))
        }
        // The same model, read from its version folder rather than the bundle: it names no bundle.
        let version = try #require(current.versionName)
        let lone = try ManagedObjectModel(contentsOf: Self.bundleURL().appendingPathComponent("\(version).xcdatamodel"))
        #expect(lone.versionBundleURL == nil)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: lone)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        coordinator.persistentStores.forEach(coordinator.remove)
        #expect(try Self.leftovers(directory).isEmpty)
    }

    @Test func stagesThatTheBundleCannotPlaceAreRefusedBeforeAnythingIsCopied() throws {
        let directory = TemporaryDirectory()
        let (url, before) = try Self.store(directory, objects: Self.catalogData(seed: 10))
        let bundle = try ModelVersionBundle(contentsOf: Self.bundleURL())
        let misspelt = LightweightMigrationStage(["Catalog 2", "Catalgo 3"])
        let backwards = CustomMigrationStage(migratingFrom: "Catalog 3", to: "Catalog 2")
        let first = CustomMigrationStage(migratingFrom: "Catalog", to: "Catalog 2")
        let second = CustomMigrationStage(migratingFrom: "Catalog", to: "Catalog 3")
        for (stages, culprit) in [([misspelt], "Catalgo 3"), ([backwards], "does not come after"), ([first, second], "also starts at")]
            as [([MigrationStage], String)] {
            do {
                try StoreMigration.migrate(storeAt: url, to: bundle, stagedMigrationManager: StagedMigrationManager(stages: stages))
                Issue.record("\(stages) accepted")
            } catch let MigrationError.invalidStage(stage, reason) {
                #expect(stage == stages.last!.description)
                #expect(reason.contains(culprit))
            }
        }
        #expect(try MigrationFixtures.bytes(url) == before)
        #expect(try Self.leftovers(directory).isEmpty)
    }

    @Test func stagesArePlacedByVersionAndTheRestIsInferred() throws {
        let bundle = try ModelVersionBundle(contentsOf: Self.bundleURL())
        let prices = CustomMigrationStage(migratingFrom: bundle.versions[0].hashDigest, to: "Catalog 2")
        let slugs = CustomMigrationStage(migratingFrom: "Catalog 4", to: "Catalog 5")
        let manager = StagedMigrationManager(stages: [slugs, prices])
        typealias Segment = StagedMigrationRunner.Segment
        #expect(try StagedMigrationRunner.segments(of: manager, in: bundle, from: 0, to: 5) == [
            Segment(from: 0, to: 1, stage: prices), Segment(from: 1, to: 3, stage: nil),
            Segment(from: 3, to: 4, stage: slugs), Segment(from: 4, to: 5, stage: nil),
        ])
        #expect(try StagedMigrationRunner.segments(of: manager, in: bundle, from: 2, to: 4) == [
            Segment(from: 2, to: 3, stage: nil), Segment(from: 3, to: 4, stage: slugs),
        ])
        // A custom stage that would pass the target is not run; the way there is inferred.
        #expect(try StagedMigrationRunner.segments(of: manager, in: bundle, from: 3, to: 3).isEmpty)
        let long = CustomMigrationStage(migratingFrom: "Catalog 2", to: "Catalog 6")
        #expect(try StagedMigrationRunner.segments(of: StagedMigrationManager(stages: [long]), in: bundle, from: 1, to: 4) == [
            Segment(from: 1, to: 4, stage: nil),
        ])
    }

    @Test func theManagerIsPassedUnderCoreDatasOptionName() throws {
        let manager = StagedMigrationManager(stages: [])
        let description = PersistentStoreDescription(url: nil)
        try description.setOption(manager, forKey: "NSPersistentStoreStagedMigrationManagerOptionKey")
        #expect(description.options.stagedMigrationManager === manager)
        expectObjectGraphError(.invalidStoreOption(name: "NSReadOnlyPersistentStoreOption", value: "a staged migration manager",
                                                   expected: "another value (NSPersistentStoreStagedMigrationManagerOptionKey takes one)")) {
            try description.setOption(manager, forKey: "NSReadOnlyPersistentStoreOption")
        }
        #expect(manager.container == nil)
    }
}
