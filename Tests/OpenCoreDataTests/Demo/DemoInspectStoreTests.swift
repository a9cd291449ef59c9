import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// `ocd inspect` on stores ocd did not write: without a model (the store's own tables), and with a model
/// whose entity numbers differ from the store's; the framework version and Core Data's history and
/// CloudKit tables it reports.
@Suite("Demo: ocd inspect on foreign stores (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoInspectStoreTests {
    @Test func inspectsAStoreWithoutItsModel() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let modelURL = try RenumberedStoreFixture.modelFolder(in: directory)
        let store = directory.file("Library.sqlite")
        try RenumberedStoreFixture.renumberedStore(model: ManagedObjectModel(contentsOf: modelURL), at: store)
        let before = try Data(contentsOf: store)

        let output = try OcdBinary.run(["inspect", store.path], binary: binary)
        #expect(output.status == 0, "\(output.stderr)")
        for expected in ["no model", "pass --model", "Author — 1 row in ZAUTHOR", "\nBook — 1 row in ZBOOK",
                         "Ebook : Book — 1 row in ZBOOK", "ZNAME: text", "ZTITLE: text", "ZAUTHOR: integer"] {
            #expect(output.stdout.contains(expected), "missing '\(expected)' in \(output.stdout)")
        }

        let withModel = try OcdBinary.run(["inspect", store.path, "--model", modelURL.path], binary: binary)
        #expect(withModel.status == 0, "\(withModel.stderr)")
        #expect(withModel.stdout.contains("Ebook : Book — 1 row"), "\(withModel.stdout)")
        let fetch = try OcdBinary.run(["fetch", store.path, "--model", modelURL.path, "--entity", "Book", "--count"],
                                      binary: binary)
        #expect(fetch.stdout == "2\n", "\(fetch.stderr)")
        #expect(try Data(contentsOf: store) == before, "read-only commands leave the file alone")
    }

    @Test func printsTheFrameworkVersionAndTheHistoryAndCloudKitTables() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let modelURL = try RenumberedStoreFixture.modelFolder(in: directory)
        let store = directory.file("Library.sqlite")
        try RenumberedStoreFixture.renumberedStore(model: ManagedObjectModel(contentsOf: modelURL), at: store)

        let plain = try OcdBinary.run(["inspect", store.path, "--model", modelURL.path], binary: binary)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("Written by framework version 1414 (NSPersistenceFrameworkVersion), version hashes version 3"),
                "\(plain.stdout)")
        #expect(plain.stdout.contains("No persistent history or CloudKit tables"), "\(plain.stdout)")

        // As a device's store has them: Core Data's newer metadata keys, history and CloudKit tables.
        try DatabaseQueue(path: store.path).write { db in
            let data = try #require(try Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA"))
            var plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
            plist["NSPersistenceFrameworkVersion"] = 1335
            plist["NSPersistenceMaximumFrameworkVersion"] = 1340
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?",
                           arguments: [try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)])
            try db.execute(sql: """
                CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP TIMESTAMP);
                CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER);
                CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCKRECORDID VARCHAR);
                INSERT INTO ATRANSACTION VALUES (1, 16002, 1, 0), (2, 16002, 1, 1);
                INSERT INTO ACHANGE VALUES (1, 16001, 1, 0);
                INSERT INTO ANSCKRECORDMETADATA VALUES (1, 16010, 1, 'record-1'), (2, 16010, 1, 'record-2'), (3, 16010, 1, 'record-3');
                """)
        }
        let before = try Data(contentsOf: store)
        for arguments in [["inspect", store.path, "--model", modelURL.path], ["inspect", store.path]] {
            let output = try OcdBinary.run(arguments, binary: binary)
            #expect(output.status == 0, "\(output.stderr)")
            for expected in [
                "Written by framework version 1335 (NSPersistenceFrameworkVersion), opened by versions up to 1340 (NSPersistenceMaximumFrameworkVersion), version hashes version 3",
                "ACHANGE (persistent history) — 1 row", "ANSCKRECORDMETADATA (CloudKit mirroring) — 3 rows",
                "ATRANSACTION (persistent history) — 2 rows",
            ] {
                #expect(output.stdout.contains(expected), "missing '\(expected)' in \(output.stdout)")
            }
            #expect(!output.stdout.contains("No persistent history"))
        }
        #expect(try Data(contentsOf: store) == before, "read-only commands leave the file alone")
    }
}
