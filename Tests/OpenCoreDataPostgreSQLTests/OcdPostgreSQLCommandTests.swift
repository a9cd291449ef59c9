import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// `ocd inspect`, `fetch` and `watch` given a `postgresql://` URL instead of a store file, run as the built
/// binary against a store written through the store's own API; the commands that cannot work on that store
/// yet refuse it by name instead of taking the URL for a file.
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
            let base = PostgreSQLTestServer.url!
            url = base + (base.contains("?") ? "&" : "?") + "schema=\(configuration.schema!)"
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
        try refused(["fetch", fixture.url, "--entity", "Tag"], saying: "--model is required for a PostgreSQL store")
        try refused(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Tag", "--keys", "books.@count"],
                    saying: "only the attributes of Tag")
        try refused(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Nope"], saying: "the model has no entity 'Nope'")
        try refused(["fetch", fixture.url, "--model", fixture.modelPath, "--entity", "Tag", "--predicate", "label MATCHES 'a.*'"],
                    saying: "fetch failed")
        try refused(["inspect", fixture.url + "&bogus=1", "--model", fixture.modelPath], saying: "unknown parameter 'bogus'")
        let empty = try PostgreSQLTestServer.freshConfiguration()
        let base = PostgreSQLTestServer.url!
        try refused(["inspect", base + (base.contains("?") ? "&" : "?") + "schema=\(empty.schema!)", "--model", fixture.modelPath],
                    saying: "holds no store")
        try refused(["import", fixture.url, "--model", fixture.modelPath, "--entity", "Tag", "--csv", "/dev/null"],
                    saying: "ocd import does not take a PostgreSQL store yet")
        try refused(["banks", "import", "--store", fixture.url], saying: "do not run on a PostgreSQL store yet")
        #expect(!FileManager.default.fileExists(atPath: fixture.url), "a file was made under the URL's name")
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
