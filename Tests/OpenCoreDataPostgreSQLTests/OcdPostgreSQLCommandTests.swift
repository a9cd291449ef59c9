import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// `ocd inspect`, `fetch`, `history` and `watch` given a `postgresql://` URL instead of a store file, run as the built
/// binary against a store written through the store's own API or through contexts; `fetch` and `inspect`
/// run contexts on it and answer as on a store file; the commands that cannot work on that store yet
/// refuse it by name instead of taking the URL for a file.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable && TestProgram.ocd != nil,
                "needs a built ocd and OCD_POSTGRES_URL: export OCD_POSTGRES_URL=$(scripts/postgres-server.sh start) to run these"))
struct OcdPostgreSQLCommandTests {
    /// A store with three tags and an author, written in two saves with history, and its model as a bundle.
    struct Fixture {
        let configuration: PostgreSQLStoreConfiguration
        let url: String
        let modelPath: String
        let store: PostgreSQLStore
        let folder: URL

        init() throws {
            configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
            url = OcdPostgreSQLCommandTests.url(of: configuration)
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-cli-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let model = try LibraryModel.make()
            modelPath = folder.appendingPathComponent("Library.xcdatamodeld").path
            try ManagedObjectModel.writeModelBundle(versions: [(name: "Library", model: model)], currentVersion: "Library",
                                                    to: URL(fileURLWithPath: modelPath))
            store = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true)
            let tag = model.entitiesByName["Tag"]!
            try store.apply(StoreChangeSet(inserts: [1, 2, 3].map {
                PostgreSQLChangeFeedTests.tagInsert(model, key: $0, label: ["apple", "banana", "blueberry"][Int($0) - 1])
            }), history: HistoryEntry(author: "fixture", changes: [1, 2, 3].map {
                .init(type: .insert, entityNumber: tag.entityNumber, primaryKey: $0)
            }))
        }

        func save(label: String, key: Int64, author: String) throws {
            let model = store.model
            let tag = model.entitiesByName["Tag"]!
            try store.apply(StoreChangeSet(inserts: [PostgreSQLChangeFeedTests.tagInsert(model, key: key, label: label)]),
                            history: HistoryEntry(author: author, changes: [.init(type: .insert, entityNumber: tag.entityNumber, primaryKey: key)]))
        }

        func remove() {
            store.close()
            PostgreSQLTestServer.drop(configuration)
            try? FileManager.default.removeItem(at: folder)
        }
    }

    static func ocd(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try TestProgram.run(TestProgram.ocd!, arguments)
    }

    /// The test server's URL with the schema of `configuration`, as a user passes it to ocd.
    static func url(of configuration: PostgreSQLStoreConfiguration) -> String {
        let base = PostgreSQLTestServer.url!
        return base + (base.contains("?") ? "&" : "?") + "schema=\(configuration.schema!)"
    }

    /// The same library saved through contexts into a store file and into a PostgreSQL schema, and its model
    /// as a bundle: what a command answers on one it must answer on the other.
    struct TwinStores {
        let folder: URL
        let file: String
        let configuration: PostgreSQLStoreConfiguration
        let url: String
        let modelPath: String
        /// The stores' UUIDs (object URIs name them), the file's then the server's.
        let identifiers: (file: String, server: String)

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-twins-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let model = try ShelfModel.make()
            modelPath = folder.appendingPathComponent("Shelf.xcdatamodeld").path
            try ManagedObjectModel.writeModelBundle(versions: [(name: "Shelf", model: model)], currentVersion: "Shelf",
                                                    to: URL(fileURLWithPath: modelPath))
            file = folder.appendingPathComponent("Shelf.sqlite").path
            configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
            url = OcdPostgreSQLCommandTests.url(of: configuration)
            let onFile = PersistentStoreCoordinator(managedObjectModel: model)
            try onFile.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: file))
            let onServer = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try onServer.addPersistentStore(configuration: configuration)
            defer { onServer.remove(store) }
            identifiers = (try #require(onFile.persistentStores.first).identifier, store.identifier)
            for coordinator in [onFile, onServer] {
                let context = ManagedObjectContext(concurrencyType: .confinement)
                context.persistentStoreCoordinator = coordinator
                try ShelfModel.seed(context)
            }
        }

        func remove() {
            PostgreSQLTestServer.drop(configuration)
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test func inspectShowsEntitiesColumnsRowsAndHistory() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let output = try Self.ocd(["inspect", fixture.url, "--model", fixture.modelPath, "--sample", "2"])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("store UUID \(fixture.store.identifier)") == true, "\(output.stdout)")
        #expect(lines.first?.contains("NSStoreType PostgreSQL") == true)
        #expect(lines.first?.contains("sslmode") == false)
        #expect(lines.contains("Tag — 3 rows in ZTAG"), "\(output.stdout)")
        #expect(lines.contains("Author — 0 rows in ZAUTHOR"))
        #expect(lines.contains("  label: String (ZLABEL), books → many Book"), "\(output.stdout)")
        #expect(lines.filter { $0.hasPrefix("  p") && $0.contains("label=") }.count == 2, "two sample rows of Tag")
        #expect(lines.contains("History: 1 transaction in ATRANSACTION, 3 changes in ACHANGE, 3 in ATRANSACTIONSTRING; the last is #1"),
                "\(output.stdout)")
    }

    @Test func fetchRunsPredicateSortLimitAndJSONOnTheServer() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let json = try Self.ocd(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Tag",
                                 "--predicate", "label BEGINSWITH[c] 'B'", "--sort", "label:desc", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout == "{\"label\":\"blueberry\"}\n{\"label\":\"banana\"}\n")
        let limited = try Self.ocd(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Tag", "--sort", "label",
                                    "--limit", "1", "--offset", "1"])
        #expect(limited.stdout == "label=banana\n", "\(limited.stderr)")
        let count = try Self.ocd(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Tag", "--count",
                                  "--predicate", "label CONTAINS 'an'"])
        #expect(count.stdout == "1\n", "\(count.stderr)")
    }

    /// `ocd fetch` on a URL runs the same fetch request through a context as on a store file: key paths
    /// through relationships, predicates across them, sorts, limits, counts and JSON come out the same.
    @Test func fetchAnswersAsOnAStoreFile() throws {
        let twins = try TwinStores()
        defer { twins.remove() }
        let cases: [[String]] = [
            ["--entity", "Book", "--sort", "title"],
            ["--entity", "Book", "--keys", "title,author.name,tags.@count", "--predicate", "ANY tags.label == 'red'",
             "--sort", "pages:desc", "--json"],
            ["--entity", "Book", "--keys", "title,price", "--predicate", "author.name ENDSWITH '1' AND pages > 120",
             "--sort", "author.born", "--sort", "title:desc", "--limit", "3", "--offset", "1"],
            ["--entity", "Author", "--keys", "name,books.@count,books.@sum.pages,books.@max.price", "--sort", "name:desc"],
            ["--entity", "Tag", "--keys", "label,books.@avg.pages", "--sort", "label", "--json"],
            ["--entity", "Book", "--count", "--predicate", "SUBQUERY(tags, $t, $t.label BEGINSWITH[c] 'G').@count > 0"],
        ]
        for arguments in cases {
            let onFile = try Self.ocd(["fetch", twins.file, "--model", twins.modelPath] + arguments)
            let onServer = try Self.ocd(["fetch", twins.url, "--model", twins.modelPath] + arguments)
            #expect(onFile.status == 0 && onServer.status == 0, "\(arguments): \(onFile.stderr) \(onServer.stderr)")
            #expect(!onFile.stdout.isEmpty)
            #expect(onServer.stdout == onFile.stdout, "\(arguments)")
        }
    }

    /// The todo commands (population, asynchronous fetch with progress, statistics from background
    /// operations, batch update) on a URL print what they print on a store file, timings aside.
    @Test func todoCommandsAnswerAsOnAStoreFile() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-todo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stores = [folder.appendingPathComponent("Todo.sqlite").path, Self.url(of: configuration)]
        /// Output without timings, progress and the store's name; lines sorted where background operations finish in any order.
        func run(_ arguments: [String], store: String, sorted: Bool = false) throws -> [String] {
            let output = try Self.ocd(["todo"] + arguments + ["--store", store])
            #expect(output.status == 0, "\(arguments) on \(store): \(output.stderr)")
            // Progress lines come as rows arrive, so their number differs from run to run.
            let lines = output.stdout
                .replacingOccurrences(of: #"[0-9]+\.[0-9]+s\b|\(after [^)]*\)|[0-9]+× faster|memory \+[0-9.]+ MB| into .*\.$"#,
                                      with: "#", options: [.regularExpression])
                .split(separator: "\n").map(String.init)
                .filter { !$0.contains("%") && $0.range(of: #"^ *Fetched [0-9]+ records$"#, options: .regularExpression) == nil }
            return sorted ? lines.sorted() : lines
        }
        var outputs: [[String]] = []
        for store in stores {
            outputs.append(try run(["populate", "--count", "600"], store: store)
                + run(["list"], store: store) + run(["stats"], store: store, sorted: true)
                + run(["done", "--compare"], store: store) + run(["stats"], store: store, sorted: true))
        }
        #expect(outputs[0].count > 10)
        #expect(outputs[1] == outputs[0])
    }

    /// `ocd migrate URL --mapping`: a dry run lists the entity mappings and changes nothing; the run migrates
    /// the server's store to the target version as the library call does.
    @Test func migrateByAMappingModelOnAURL() throws {
        let (old, new) = try PostgreSQLMappingMigrationTests.models()
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let seeded = PersistentStoreCoordinator(managedObjectModel: old)
        try seeded.addPersistentStore(configuration: configuration)
        try PostgreSQLMappingMigrationTests.seed(PostgreSQLMappingMigrationTests.context(seeded), seed: 4)
        let cars = try PostgreSQLMappingMigrationTests.context(seeded).fetch(FetchRequest<ManagedObject>(entityName: "Car"))
        let kept = try cars.filter { try $0.value(forKey: "scrapped") as? Bool != true }.count
        seeded.postgreSQLStores.forEach(seeded.remove)
        let fixtures = PostgreSQLMappingMigrationTests.fixtures
        let arguments = ["migrate", Self.url(of: configuration), "--model", fixtures.appendingPathComponent("Garage.xcdatamodeld").path,
                         "--mapping", fixtures.appendingPathComponent("Garage1to2.xcmappingmodel").path, "--to", "Garage 2"]
        let dry = try Self.ocd(arguments + ["--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("is at version 'Garage'") && dry.stdout.contains("CarToVehicle") && dry.stdout.contains("Dry run"))
        let bundle = try ModelVersionBundle(contentsOf: fixtures.appendingPathComponent("Garage.xcdatamodeld"))
        #expect(try PostgreSQLStore.storedVersion(configuration: configuration, in: bundle)?.name == "Garage")
        let run = try Self.ocd(arguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("Migrated"))
        #expect(try PostgreSQLStore.storedVersion(configuration: configuration, in: bundle)?.name == "Garage 2")
        let migrated = PersistentStoreCoordinator(managedObjectModel: new)
        try migrated.addPersistentStore(configuration: configuration)
        defer { migrated.postgreSQLStores.forEach(migrated.remove) }
        #expect(try PostgreSQLMappingMigrationTests.context(migrated).count(for: FetchRequest<ManagedObject>(entityName: "Vehicle")) == kept)
    }

    /// `ocd inspect` on a URL lists the entities as on a store file (counts, tables, columns, sample objects
    /// with their relationships), between the store's own metadata and history lines.
    @Test func inspectListsEntitiesAsOnAStoreFile() throws {
        let twins = try TwinStores()
        defer { twins.remove() }
        let onFile = try Self.ocd(["inspect", twins.file, "--model", twins.modelPath, "--sample", "2"])
        let onServer = try Self.ocd(["inspect", twins.url, "--model", twins.modelPath, "--sample", "2"])
        #expect(onFile.status == 0 && onServer.status == 0, "\(onFile.stderr) \(onServer.stderr)")
        func entityLines(_ text: String) -> [String] {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let first = lines.firstIndex(where: { $0.hasPrefix("Author — ") }) else { return [] }
            return Array(lines[first...].prefix { !$0.hasPrefix("History:") })
                .filter { !$0.isEmpty }
        }
        let expected = entityLines(onFile.stdout)
        #expect(expected.contains("Book — 12 rows in ZBOOK"), "\(onFile.stdout)")
        #expect(expected.contains { $0.hasPrefix("  p") && $0.contains("author=") && $0.contains("tags=") }, "\(onFile.stdout)")
        // Object URIs name their store: the same objects, as far as the stores' UUIDs.
        #expect(entityLines(onServer.stdout.replacingOccurrences(of: twins.identifiers.server, with: twins.identifiers.file)) == expected,
                "\(onServer.stdout)")
        #expect(onServer.stdout.contains("NSStoreType PostgreSQL"))
        #expect(onServer.stdout.hasSuffix("History: none (the store keeps no persistent history tables)\n"), "\(onServer.stdout)")
    }

    /// `ocd import` on a URL saves the rows through a context: into an empty schema (the store is created
    /// there), with history when asked; a bad row refuses the whole file and nothing is saved.
    @Test func importSavesRowsThroughAContext() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-import-\(UUID().uuidString)")
        defer {
            PostgreSQLTestServer.drop(configuration)
            try? FileManager.default.removeItem(at: folder)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = try ShelfModel.make()
        let modelPath = folder.appendingPathComponent("Shelf.xcdatamodeld").path
        try ManagedObjectModel.writeModelBundle(versions: [(name: "Shelf", model: model)], currentVersion: "Shelf",
                                                to: URL(fileURLWithPath: modelPath))
        let url = Self.url(of: configuration)
        let good = folder.appendingPathComponent("good.csv")
        try "title,pages,price\nDune,412,9.5\nEmma,474,\n".write(to: good, atomically: true, encoding: .utf8)
        let imported = try Self.ocd(["import", url, "--model", modelPath, "--entity", "Book", "--csv", good.path,
                                     "--history", "--author", "tester"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Imported 2 rows into Book (postgresql://"), "\(imported.stdout)")
        let bad = folder.appendingPathComponent("bad.csv")
        try "title,pages\nFlop,1\nFlip,many\n".write(to: bad, atomically: true, encoding: .utf8)
        let refused = try Self.ocd(["import", url, "--model", modelPath, "--entity", "Book", "--csv", bad.path])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("nothing was imported"), "\(refused.stderr)")

        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(configuration: configuration)
        defer { coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let books = try context.fetch(bookRequest())
        #expect(try titles(books) == ["Dune", "Emma"])
        #expect(try books.map { try $0.value(forKey: "pages") as? Int64 } == [412, 474])
        #expect(try books.map { try $0.value(forKey: "price") as? Double } == [9.5, nil])
        let history = try #require(try store.historySummary())
        #expect(history.transactions == 1, "one save, recorded with its author")
    }

    /// The two-browser demo without a terminal: `ocd banks browse --plain --follow 1` on a URL prints the
    /// list and waits; another `ocd` process saves a bank into the same database; the browser merges that
    /// save from the change feed and prints the list again with the bank in it.
    @Test func aBrowserSeesAnotherProcessSave() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-banks-\(UUID().uuidString)")
        defer {
            PostgreSQLTestServer.drop(configuration)
            try? FileManager.default.removeItem(at: folder)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = Self.url(of: configuration)
        let imported = try Self.ocd(["banks", "import", "--store", url])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("Imported 561 banks into postgresql://"), "\(imported.stdout)")

        let browser = try TestProgram(TestProgram.ocd!, ["banks", "browse", "--store", url, "--plain", "--follow", "1"])
        #expect(PostgreSQLChangeFeedTests.eventually(60) { browser.stderr.contains("Following") }, "\(browser.stderr)")
        let bank = folder.appendingPathComponent("bank.csv")
        try "name,city,state\nDemo Bank,Twin Peaks,ZZ\n".write(to: bank, atomically: true, encoding: .utf8)
        let model = folder.appendingPathComponent("Banks.xcdatamodeld").path
        try ManagedObjectModel.writeModelBundle(versions: [(name: "Banks", model: Self.bankModel())], currentVersion: "Banks",
                                                to: URL(fileURLWithPath: model))
        let saved = try Self.ocd(["import", url, "--model", model, "--entity", "FailedBankInfo", "--csv", bank.path])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(try browser.wait(seconds: 60) == 0, "\(browser.stderr)")
        let parts = browser.stdout.components(separatedBy: "\nChanged elsewhere: ")
        #expect(parts.count == 2, "\(browser.stdout)")
        #expect(parts[0].contains("TX — ") && !parts[0].contains("Demo Bank"), "\(parts[0])")
        #expect(parts.last?.hasPrefix("+1 −0\n") == true, "\(parts.last ?? "")")
        #expect(parts.last?.contains("ZZ — 1 bank\n") == true && parts.last?.contains("Demo Bank, Twin Peaks") == true)
    }

    /// The two-browser demo as docs/POSTGRESQL.md gives it, in two tmux panes on one database: a bank
    /// deleted in one browser (`d`) leaves the other's list with no key pressed, and the other way round.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux"))
    func twoBrowsersSeeEachOthersEdits() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let url = Self.url(of: configuration)
        let imported = try Self.ocd(["banks", "import", "--store", url])
        #expect(imported.status == 0, "\(imported.stderr)")
        let session = "ocd-pg-\(UUID().uuidString.prefix(8))"
        // A tmux server of this test's own (its own socket), stopped at the end.
        func tmux(_ arguments: [String]) throws -> String {
            try TestProgram.run("/usr/bin/tmux", ["-L", session] + arguments, seconds: 30).stdout
        }
        defer { _ = try? tmux(["kill-server"]) }
        let browse = "\(TestProgram.ocd!) banks browse --store '\(url)'"
        _ = try tmux(["new-session", "-d", "-s", session, "-x", "100", "-y", "20", browse])
        _ = try tmux(["split-window", "-t", session, "-v", browse])
        func waitFor(_ text: String, in pane: Int) throws -> String {
            var last = ""
            #expect(PostgreSQLChangeFeedTests.eventually(60) {
                last = (try? tmux(["capture-pane", "-p", "-t", "\(session).\(pane)"])) ?? ""
                return last.contains(text)
            }, "pane \(pane) never showed '\(text)': \(last)")
            return last
        }
        _ = try waitFor("bank 1 of 561", in: 0)
        _ = try waitFor("bank 1 of 561", in: 1)
        _ = try tmux(["send-keys", "-t", "\(session).0", "d"])
        _ = try waitFor("of 560", in: 0)
        _ = try waitFor("of 560", in: 1)
        _ = try tmux(["send-keys", "-t", "\(session).1", "d"])
        _ = try waitFor("of 559", in: 1)
        _ = try waitFor("of 559", in: 0)
        // Pane 1 first: once pane 0's browser quits, tmux renumbers the pane left to 0.
        for pane in [1, 0] { _ = try tmux(["send-keys", "-t", "\(session).\(pane)", "q"]) }
        // Both browsers quit (closing their store), which ends the session and its server; killing the
        // server instead could leave a browser behind.
        #expect(PostgreSQLChangeFeedTests.eventually(60) {
            ((try? TestProgram.run("/usr/bin/tmux", ["-L", session, "has-session"], seconds: 30))?.status ?? 0) != 0
        }, "the browsers did not quit on q")
    }

    /// ocd's banks model, declared as Sources/ocd/Models/BankModel.swift declares it (without the classes,
    /// which are not part of the version hashes): a second process writes the browser's store with it.
    static func bankModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("FailedBankDetails") {
                Attribute("closeDate", .date)
                Attribute("updatedDate", .date)
                Attribute("zip", .integer32, default: Int32(0))
                ToOne("info", "FailedBankInfo", inverse: "details")
            }
            EntityDescription("FailedBankInfo") {
                Attribute("city", .string)
                Attribute("name", .string)
                Attribute("state", .string)
                ToOne("details", "FailedBankDetails", inverse: "info", deleteRule: .cascade)
            }
        }
    }

    /// ocd-bench's multi-writer scenario, its "ours" side through contexts: every process count on both
    /// sides ends with every object's row there once and the keys below `Z_MAX`.
    @Test func benchMultiWriterLosesNothing() throws {
        let bench = TestProgram.packageRoot.appendingPathComponent(".build/debug/ocd-bench").path
        try #require(FileManager.default.isExecutableFile(atPath: bench), "ocd-bench is not built")
        let output = try TestProgram.run(bench, ["--store", PostgreSQLTestServer.url!, "--rows", "2500", "--processes", "1,2"],
                                         seconds: 600)
        #expect(output.status == 0, "\(output.stdout) \(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map { $0.split(whereSeparator: \.isWhitespace).map(String.init) }
        let results = lines.filter { $0.count == 9 && ["ours", "raw"].contains($0[1]) }
        #expect(results.map { "\($0[0]) \($0[1])" } == ["1 ours", "1 raw", "2 ours", "2 raw"], "\(output.stdout)")
        for line in results {
            #expect(line[4] == "0" && line[5] == "2500" && line[6] == "2500" && line[7] == "0" && line[8] == "ok", "\(line)")
        }
    }

    /// Every mistake is one clear error line and a failing status, never a crash or a file named like the URL.
    @Test func mistakesAreNamed() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        func refused(_ arguments: [String], saying text: String) throws {
            let output = try Self.ocd(arguments)
            #expect(output.status != 0, "\(arguments) succeeded")
            let errors = output.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
            #expect(errors.count == 1 && errors[0].contains(text), "\(arguments): \(output.stderr)")
        }
        // Without --model, the model the store carries serves (every writable open records it).
        let withoutModel = try Self.ocd(["fetch", fixture.url, "--entity", "Tag"])
        #expect(withoutModel.status == 0 && withoutModel.stdout.contains("blueberry"), "\(withoutModel.stderr)")
        try refused(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Tag", "--keys", "books.nope"],
                    saying: "--keys 'books.nope'")
        try refused(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Nope"], saying: "the model has no entity 'Nope'")
        // A pattern PostgreSQL's SQL cannot read alike (a look-ahead) is answered in the app, not refused.
        let lookahead = try Self.ocd(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Tag",
                                      "--predicate", "label MATCHES 'a(?=b)'"])
        #expect(lookahead.status == 0, "\(lookahead.stderr)")
        try refused(["inspect", fixture.url + "&bogus=1", "--model", fixture.modelPath], saying: "unknown parameter 'bogus'")
        let empty = try PostgreSQLTestServer.freshConfiguration()
        let base = PostgreSQLTestServer.url!
        try refused(["inspect", base + (base.contains("?") ? "&" : "?") + "schema=\(empty.schema!)", "--model", fixture.modelPath],
                    saying: "holds no store")
        // ocd history takes the URL now: what it refuses is a reader that is not registered.
        try refused(["history", fixture.url, "--model", fixture.modelPath, "--unregister", "nobody"],
                    saying: "has no history reader named 'nobody'")
        try refused(["import", fixture.url, "--model", fixture.modelPath, "--entity", "Nope", "--csv", "/dev/null"],
                    saying: "the model has no entity 'Nope'")
        #expect(!FileManager.default.fileExists(atPath: fixture.url), "a file was made under the URL's name")
    }

    /// ocd's own stores open on a URL as on a file: with the built-in model they were written by, no
    /// `--model`; a reading command on an empty schema says so and creates nothing; `--sql-debug` shows the
    /// statements sent to the server.
    @Test func builtInModelsEmptySchemasAndTheStatementLog() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration()
        defer { PostgreSQLTestServer.drop(configuration) }
        let url = Self.url(of: configuration)
        let list = try Self.ocd(["todo", "list", "--store", url])
        #expect(list.status != 0 && list.stderr.contains("holds no store"), "\(list.stdout) \(list.stderr)")
        #expect(try !PostgreSQLStorePresence.find(configuration: configuration).hasStore, "todo list made a store")
        let populate = try Self.ocd(["todo", "populate", "--count", "30", "--store", url, "--sql-debug"])
        #expect(populate.status == 0, "\(populate.stderr)")
        #expect(populate.stderr.contains("CoreData: sql: INSERT INTO"), "\(populate.stderr.prefix(600))")
        let fetch = try Self.ocd(["fetch", url, "--entity", "Item", "--limit", "3"])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        #expect(fetch.stdout.split(separator: "\n").count == 3, "\(fetch.stdout)")
        let inspect = try Self.ocd(["inspect", url])
        #expect(inspect.status == 0 && inspect.stdout.contains("Z_MODELCACHE"), "\(inspect.stdout) \(inspect.stderr)")
        // The model the store carries converts to a bundle with the same version hashes.
        let cached = try #require(try PostgreSQLStore.cachedModel(configuration: configuration))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-pg-convert-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = folder.appendingPathComponent("Todo.xcdatamodeld")
        let convert = try Self.ocd(["model", "convert", url, "--output", bundle.path])
        #expect(convert.status == 0, "\(convert.stderr)")
        let converted = try ManagedObjectModel(contentsOf: bundle)
        #expect(converted.entityVersionHashesByName == cached.entityVersionHashesByName)
        #expect(cached.entitiesByName["Item"] != nil)
        // A store without the cache (written before stores carried their model) opens with ocd's own model.
        let reader = try PostgreSQLStore(model: cached, configuration: configuration, options: StoreOptions(readOnly: true))
        try reader.pool.withSession { try $0.execute("DELETE FROM Z_MODELCACHE") }
        reader.close()
        let builtIn = try Self.ocd(["inspect", url])
        #expect(builtIn.status == 0 && builtIn.stdout.contains("to-do"), "\(builtIn.stdout) \(builtIn.stderr)")
        let noCache = try Self.ocd(["model", "convert", url, "--output", folder.appendingPathComponent("Other.xcdatamodeld").path])
        #expect(noCache.status != 0 && noCache.stderr.contains("carries no model"), "\(noCache.stderr)")
    }

    /// A server that cannot be reached is named with what failed: the address and that nothing listens there,
    /// or the server's own refusal for a database that does not exist.
    @Test func connectionFailuresSayWhatFailed() throws {
        let refused = try Self.ocd(["inspect", "postgresql://ocd@127.0.0.1:1/ocd"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("connection refused at 127.0.0.1:1"), "\(refused.stderr)")
        let configuration = try PostgreSQLStoreConfiguration(url: PostgreSQLTestServer.url!)
        var missing = configuration
        missing.database = "ocd_no_such_database"
        let noDatabase = try Self.ocd(["inspect", missing.redactedURL])
        #expect(noDatabase.stderr.contains("no such database") && noDatabase.stderr.contains("3D000"), "\(noDatabase.stderr)")
    }

    /// `ocd history` on a URL prints the store's history (all of it, or after a transaction), registers a
    /// reader through the newest transaction it read, lists and unregisters it; a store without history
    /// is refused by name.
    @Test func historyPrintsRegistersListsAndUnregistersReaders() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        try fixture.save(label: "cherry", key: 4, author: "second")
        let all = try Self.ocd(["history", fixture.url, "--model", fixture.modelPath, "--json"])
        #expect(all.status == 0, "\(all.stderr)")
        let lines = all.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        #expect(lines.map { $0["author"] as? String } == ["fixture", "second"], "\(all.stdout)")
        #expect(lines.map { ($0["inserted"] as? [String])?.count } == [3, 1])

        let registered = try Self.ocd(["history", fixture.url, "--model", fixture.modelPath, "--after", "1", "--register", "indexer"])
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(registered.stdout.split(separator: "\n").count == 1 && registered.stdout.hasPrefix("#2 ")
                && registered.stdout.contains("by second") && registered.stdout.contains("1 inserted"),
                "\(registered.stdout)")
        #expect(registered.stderr.contains("registered reader 'indexer', seen through 2"), "\(registered.stderr)")
        let listed = try Self.ocd(["history", fixture.url, "--model", fixture.modelPath, "--readers"])
        #expect(listed.status == 0 && listed.stdout.hasPrefix("indexer: seen through 2, updated "), "\(listed.stdout) \(listed.stderr)")
        let unregistered = try Self.ocd(["history", fixture.url, "--model", fixture.modelPath, "--unregister", "indexer"])
        #expect(unregistered.status == 0 && unregistered.stderr.contains("unregistered reader 'indexer'"), "\(unregistered.stderr)")
        #expect(try Self.ocd(["history", fixture.url, "--model", fixture.modelPath, "--readers"]).stdout.isEmpty)

        let twins = try TwinStores()
        defer { twins.remove() }
        let none = try Self.ocd(["history", twins.url, "--model", twins.modelPath])
        #expect(none.status != 0 && none.stderr.contains("has no persistent history"), "\(none.stderr)")
    }

    /// `ocd watch` prints the transactions other instances commit, from the change feed, and stops after --count.
    @Test func watchPrintsEachTransactionFromTheFeed() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let watcher = try TestProgram(TestProgram.ocd!, ["watch", fixture.url, "--model", fixture.modelPath, "--count", "2"])
        #expect(PostgreSQLChangeFeedTests.eventually(60) { watcher.stderr.contains("Watching") }, "\(watcher.stderr)")
        try fixture.save(label: "cherry", key: 4, author: "first")
        try fixture.save(label: "damson", key: 5, author: "second")
        #expect(try watcher.wait(seconds: 60) == 0, "\(watcher.stderr)")
        let lines = watcher.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
        // Only what was committed after it started: not the fixture's first transaction.
        #expect(lines.map { $0["author"] as? String } == ["first", "second"], "\(watcher.stdout)")
        #expect(lines.map { ($0["inserted"] as? [String])?.count } == [1, 1])
    }
}
