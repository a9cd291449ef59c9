import Foundation
import GRDB
import Testing
@testable import OpenCoreData

extension Reliability {
    /// A child process migrates a large store at the first version of `Shop.xcdatamodeld` to the current one
    /// and is killed with SIGKILL at a random moment. After each kill the store must be either exactly what it
    /// was (the main file byte for byte, its content table by table) or fully migrated (the content a migration
    /// left alone produces), and the next open — an app launching with the current model — must migrate it.
    @Suite(.serialized) struct MigrationCrashTests {
        /// How many kills the test runs; `OCD_MIGRATION_KILLS` raises it (scripts/crash-kills.sh).
        static var kills: Int { ProcessInfo.processInfo.environment["OCD_MIGRATION_KILLS"].flatMap(Int.init) ?? 20 }

        /// Customers in the store; each has two orders, each order two products, every product one or two
        /// of the 50 tags: about 5 rows per customer plus the links, so a migration that takes long enough
        /// to be killed in the middle.
        static let customers = 2_500

        /// Where the worker was when it was killed, from the lines it had printed.
        enum Moment: String, CaseIterable {
            /// Starting, loading the bundle or planning: nothing written yet.
            case before
            /// Inside the migration's transaction (at least one statement had run).
            case during
            /// The migration had returned.
            case after
        }

        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
        func killedMigrationLeavesTheStoreAsItWasOrMigrated() throws {
            let directory = TemporaryDirectory()
            let bundleURL = try MigrationFixtures.shopBundle()
            let bundle = try ModelVersionBundle(contentsOf: bundleURL)
            let first = bundle.versions[0], current = bundle.current
            #expect(first.name != current.name)

            let source = directory.file("Source.sqlite")
            try LargeShopStore.fill(source, model: first.model, customers: Self.customers)
            let sourceBytes = try Data(contentsOf: source)
            let sourceContent = try StoreContent(source)
            #expect(sourceContent.rowCount > Self.customers * 5, "the source store is smaller than meant")

            // One migration left alone: the reference content, and how long a worker takes to start writing
            // and then to finish (the kills below are timed from those two moments).
            let reference = directory.file("Reference.sqlite")
            try FileManager.default.copyItem(at: source, to: reference)
            let started = ContinuousClock.now
            let referenceWorker = try WorkerProcess.start(["migrate", reference.path, bundleURL.path])
            var referenceOutput = Self.read(referenceWorker, until: "writing")
            let writingStarted = ContinuousClock.now
            referenceOutput += referenceWorker.readAllOutput()
            let status = try referenceWorker.wait()
            let startup = Self.seconds(writingStarted - started), writing = Self.seconds(ContinuousClock.now - writingStarted)
            try #require(status == 0 && referenceOutput.contains("migrated"), "the worker could not migrate: \(referenceOutput)")
            let migratedContent = try StoreContent(reference)
            #expect(try bundle.version(ofStoreAt: reference)?.name == current.name)
            #expect(migratedContent != sourceContent)

            var random = SystemRandomNumberGenerator()
            var moments: [Moment: Int] = [:]
            var unchanged = 0, migrated = 0
            let clock = ContinuousClock.now
            for round in 1...Self.kills {
                let store = directory.file("Round\(round).sqlite"), relaunch = directory.file("Relaunch\(round).sqlite")
                defer { for url in [store, relaunch] { Self.remove(url) } }
                try FileManager.default.copyItem(at: source, to: store)

                let worker = try WorkerProcess.start(["migrate", store.path, bundleURL.path])
                // One round in four is killed from the start (loading, planning, the first statements); the
                // others once the transaction has begun, spread a little past its end: a machine busy with
                // other work stretches the start more than anything, so the moments are measured from the
                // worker's own lines rather than from one timing.
                var output = ""
                if round % 4 == 1 {
                    Thread.sleep(forTimeInterval: Double.random(in: 0...(startup * 1.1), using: &random))
                } else {
                    output = Self.read(worker, until: "writing")
                    Thread.sleep(forTimeInterval: Double.random(in: 0...(writing * 1.1), using: &random))
                }
                worker.kill(SIGKILL)
                try worker.wait()
                output += worker.readAllOutput()
                let lines = output.split(separator: "\n").map(String.init)
                let moment: Moment = lines.contains("migrated") ? .after : lines.contains("writing") ? .during : .before
                moments[moment, default: 0] += 1

                // The next launch: the app opens the store with the current model and it migrates.
                let outcome = try Self.checkKilledStore(
                    store, relaunch: relaunch, label: "round \(round) (\(moment))", sourceBytes: sourceBytes,
                    sourceContent: sourceContent, migratedContent: migratedContent,
                    returned: moment == .after, began: moment != .before) { url in
                    let coordinator = PersistentStoreCoordinator(managedObjectModel: current.model)
                    try coordinator.addPersistentStore(type: .sqlite, at: url)
                    coordinator.persistentStores.forEach(coordinator.remove)
                }
                if outcome == .unchanged { unchanged += 1 } else { migrated += 1 }
            }
            #expect(unchanged + migrated == Self.kills)
            let during = moments[.during] ?? 0
            print("MigrationCrashTests: \(Self.kills) kills of a migration of \(sourceContent.rowCount) rows (reference run: "
                  + "\(String(format: "%.2f", startup)) s to its first statement, \(String(format: "%.2f", writing)) s more to its exit): "
                  + "\(moments[.before] ?? 0) before its transaction, \(during) during it, \(moments[.after] ?? 0) after it; "
                  + "\(unchanged) left the store as it was, \(migrated) migrated; every next open migrated it; "
                  + "\(String(format: "%.0f", Self.seconds(ContinuousClock.now - clock))) s")
        }

        /// What a kill left the store as.
        enum KillOutcome { case unchanged, migrated }

        /// Checks the store a killed migration left at `store`: copies its files (WAL, journal) to `relaunch`;
        /// the store must hold the source content with its main file byte-identical (before and after the
        /// recovering read; not when the migration had `returned`) or `migratedContent` (not before it
        /// `began` writing), compared through `normalized`; then `open` (the next launch) must migrate the
        /// copy to `migratedContent`. `label` names the round in failures.
        static func checkKilledStore(_ store: URL, relaunch: URL, label: String, sourceBytes: Data, sourceContent: StoreContent,
                                     migratedContent: StoreContent, returned: Bool, began: Bool,
                                     normalized: (StoreContent) -> StoreContent = { $0 },
                                     open: (URL) throws -> Void) throws -> KillOutcome {
            // The files as the killed process left them, for the relaunch below: reading `store` first
            // recovers it.
            for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: store.path + suffix) {
                try FileManager.default.copyItem(atPath: store.path + suffix, toPath: relaunch.path + suffix)
            }
            let mainFileUntouched = try Data(contentsOf: store) == sourceBytes
            let content = try StoreContent(store)
            let outcome: KillOutcome
            if content == sourceContent {
                outcome = .unchanged
                #expect(!returned, "\(label): the migration returned but the store is as it was")
                #expect(mainFileUntouched, "\(label): the store holds what it did, but its main file changed")
                #expect(try Data(contentsOf: store) == sourceBytes, "\(label): recovering the store changed its main file")
            } else {
                outcome = .migrated
                #expect(normalized(content) == migratedContent,
                        "\(label): the store is neither as it was nor migrated: \(content.differences(from: sourceContent, migrated: migratedContent))")
                #expect(began, "\(label): the store was migrated before the worker began writing")
            }
            try open(relaunch)
            let relaunched = normalized(try StoreContent(relaunch))
            #expect(relaunched == migratedContent,
                    "\(label): the open after the kill did not migrate the store to the reference: \(relaunched.differences(from: sourceContent, migrated: migratedContent))")
            return outcome
        }

        /// Reads the worker's output until a line equals `line` or the output ends; returns what it read.
        static func read(_ worker: ChildProcess, until line: String) -> String {
            var buffer = ""
            while !buffer.split(separator: "\n").contains(Substring(line)) {
                let chunk = worker.output.availableData
                if chunk.isEmpty { break }
                buffer += String(decoding: chunk, as: UTF8.self)
            }
            return buffer
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        static func remove(_ url: URL) {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
    }
}

// Namespaced in the suite, so they cannot clash with other suites' helpers.
extension Reliability.MigrationCrashTests {
    /// A large store at the first version of `Shop.xcdatamodeld`, written through the library.
    enum LargeShopStore {
        /// Fills a new store at `url`: `customers` customers with two orders each, two products per order (each
        /// product in one order only, so the current version's to-one `Product.purchase` can hold it), and 50
        /// tags, each product linked to one or two. Saves in slices; the store is left checkpointed to one file.
        static func fill(_ url: URL, model: ManagedObjectModel, customers: Int) throws {
            try Reliability.MigrationCrashTests.writeStore(url, model: model) { context in
                var tagIDs: [ManagedObjectID] = []
                for number in 0..<50 {
                    let tag = try context.insertNewObject(forEntityName: "Tag")
                    try tag.setValue("tag \(number)", forKey: "label")
                    try context.save()
                    tagIDs.append(tag.objectID)
                }
                let slice = 1_000
                for start in stride(from: 0, to: customers, by: slice) {
                    let tags = try tagIDs.map { try context.existingObject(with: $0) }
                    for index in start..<min(start + slice, customers) {
                        let customer = try context.insertNewObject(forEntityName: "Customer")
                        try customer.setValue("customer \(index)", forKey: "name")
                        try customer.setValue(index % 3 == 0 ? nil : "c\(index)@example.com", forKey: "email")
                        try customer.setValue(Int16(index % 90), forKey: "age")
                        try customer.setValue(index % 7 == 0, forKey: "vip")
                        if index % 5 != 0 { try customer.setValue("nick \(index)", forKey: "nickname") }
                        var orders: Set<ManagedObject> = []
                        for orderIndex in 0..<2 {
                            let order = try context.insertNewObject(forEntityName: "Order")
                            try order.setValue(Int32(index * 2 + orderIndex), forKey: "number")
                            try order.setValue(Float(index % 1000) / 4, forKey: "total")
                            if orderIndex == 1 { try order.setValue("note \(index)", forKey: "note") }
                            var items: Set<ManagedObject> = []
                            for productIndex in 0..<2 {
                                let product = try context.insertNewObject(forEntityName: "Product")
                                let number = (index * 2 + orderIndex) * 2 + productIndex
                                try product.setValue("product \(number)", forKey: "title")
                                var linked: Set<ManagedObject> = [tags[number % 50]]
                                if number % 3 == 0 { linked.insert(tags[(number * 7 + 1) % 50]) }
                                try product.setValue(linked, forKey: "tags")
                                items.insert(product)
                            }
                            try order.setValue(items, forKey: "items")
                            orders.insert(order)
                        }
                        try customer.setValue(orders, forKey: "orders")
                    }
                    try context.save()
                    context.reset()
                }
            }
        }
    }

    /// Writes a new store of `model` at `url` through one context that `body` fills (saving as it goes),
    /// then leaves it checkpointed to one file, no WAL: the state every round starts from is the main file alone.
    static func writeStore(_ url: URL, model: ManagedObjectModel, _ body: (ManagedObjectContext) throws -> Void) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        try body(context)
        coordinator.persistentStores.forEach(coordinator.remove)
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
    }

    /// A store's logical content, table by table: the schema (tables and indexes) and every row in key order,
    /// each table reduced to its row count and a hash of its values (types included). `Z_METADATA` is compared
    /// decoded, since its property list may be written with its keys in another order. Reading opens the file
    /// writable, which is what recovers a WAL or a hot journal a killed process left.
    struct StoreContent: Equatable {
        var schema: [String]
        var tables: [String: TableContent]
        var metadata: StoreMetadata

        struct TableContent: Equatable {
            var rows: Int
            var hash: Int
        }

        var rowCount: Int { tables.values.reduce(0) { $0 + $1.rows } }

        init(_ url: URL) throws {
            let queue = try DatabaseQueue(path: url.path)
            defer { try? queue.close() }
            (schema, tables, metadata) = try queue.read { db in
                let schema = try String.fetchAll(db, sql: """
                    SELECT type || ' ' || name || ': ' || IFNULL(sql, '') FROM sqlite_master
                    WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name
                    """)
                var tables: [String: TableContent] = [:]
                for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'Z_METADATA'") {
                    var hasher = Hasher(), rows = 0
                    let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM \"\(table)\" ORDER BY rowid")
                    while let row = try cursor.next() {
                        rows += 1
                        for value in row.databaseValues { Self.combine(StoreValue(value), into: &hasher) }
                    }
                    tables[table] = TableContent(rows: rows, hash: hasher.finalize())
                }
                return (schema, tables, try StoreMetadata.read(db, path: url.path))
            }
        }

        private static func combine(_ value: StoreValue, into hasher: inout Hasher) {
            switch value.storage {
            case .null: hasher.combine(0)
            case .int64(let integer): hasher.combine(1); hasher.combine(integer)
            case .double(let double): hasher.combine(2); hasher.combine(double.bitPattern)
            case .string(let string): hasher.combine(3); hasher.combine(string)
            case .blob(let data): hasher.combine(4); hasher.combine(data)
            }
        }

        /// Which tables differ from both the source and the migrated content (for a failure message).
        func differences(from source: StoreContent, migrated: StoreContent) -> String {
            let names = Set(tables.keys).union(source.tables.keys).union(migrated.tables.keys).sorted()
            let differing = names.filter { tables[$0] != source.tables[$0] && tables[$0] != migrated.tables[$0] }
            return "tables \(differing.map { "\($0) (\(tables[$0]?.rows ?? 0) rows)" }), schema as source \(schema == source.schema), "
                + "as migrated \(schema == migrated.schema), metadata version \(metadata.versionIdentifiers)"
        }
    }
}
