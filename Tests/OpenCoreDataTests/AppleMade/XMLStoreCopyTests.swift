import Foundation
import Testing
@testable import OpenCoreData

/// `migratePersistentStore` and `ocd copy` between XML and SQLite stores, on the corpus's XML stores
/// (copied to a temporary folder): every object and relationship survives XML → SQLite → XML.
@Suite(.enabled(if: AppleMadeFixtures.available, AppleMadeFixtures.absentMessage))
struct XMLStoreCopyTests {
    @Test(arguments: XMLStoreCorpusTests.files.prefix(5)) func xmlToSQLiteToXMLKeepsEveryObject(_ url: URL) throws {
        let source = try XMLStoreCorpusTests.copy(url)
        let folder = source.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = folder.appendingPathComponent("store.sqlite")
        let back = folder.appendingPathComponent("back.xml")
        let model = try ManagedObjectModel.derivedModel(ofXMLStoreAt: source)
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let xml = try coordinator.addPersistentStore(type: .xml, at: source, options: StoreOptions(readOnly: true))
            let migrated = try coordinator.migratePersistentStore(xml, to: sqlite, type: .sqlite)
            #expect(coordinator.persistentStores.map(\.typeName) == ["SQLite"])
            #expect(migrated.url == sqlite)
        }
        do {
            // Core Data's names this time.
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: sqlite,
                                                           options: [ReadOnlyPersistentStoreOption: true])
            try coordinator.migratePersistentStore(store, to: back, options: nil, withType: XMLStoreType)
        }
        // The ids are new (the SQLite store knows none), so objects are compared by what they hold, with
        // each relationship's targets described by their contents too.
        #expect(try Self.shape(of: back) == Self.shape(of: source))
    }

    /// Each object as its type, attributes and, for each relationship, its targets' types and attributes.
    static func shape(of url: URL) throws -> [String] {
        let objects = try XMLStoreCorpusTests.snapshot(of: url)
        func plain(_ object: XMLStoreCorpusTests.FileObject) -> String {
            object.type + " " + object.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
        return objects.values.map { object in
            plain(object) + " | " + object.relationships.sorted { $0.key < $1.key }.map { name, ids in
                name + ":" + ids.compactMap { objects[$0].map(plain) }.sorted().joined(separator: ";")
            }.joined(separator: " ")
        }.sorted()
    }

    @Test(.enabled(if: OcdBinary.url != nil, "ocd is not built")) func ocdCopyMakesAnSQLiteStoreOcdFetchReads() throws {
        let binary = try #require(OcdBinary.url)
        let url = try #require(XMLStoreCorpusTests.files.first { $0.path.contains("wibosco-CoreDataMigration-Example/Migration1to2") })
        let source = try XMLStoreCorpusTests.copy(url)
        let folder = source.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let map = folder.appendingPathComponent("map.xml")
        try FileManager.default.moveItem(at: source, to: map)
        let out = folder.appendingPathComponent("out.sqlite")
        let expected = try #require(XMLStoreCorpusTests.objectCounts(in: map)["XDDEVATTRIBUTEMAPPING"])

        let copy = try OcdBinary.run(["copy", map.path, out.path], binary: binary)
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(copy.stdout.contains("Copied"))
        let fetch = try OcdBinary.run(["fetch", out.path, "--model", map.path, "--entity", "XDDevAttributeMapping", "--count"], binary: binary)
        #expect(fetch.status == 0, "\(fetch.stderr)")
        #expect(fetch.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(expected)", "\(fetch.stdout)")
        let names = try OcdBinary.run(["fetch", out.path, "--model", map.path, "--entity", "XDDevAttributeMapping", "--keys", "name"], binary: binary)
        #expect(names.stdout.contains("hexColor"), "\(names.stdout)")

        // An existing destination is refused, and left as it was, unless --replace.
        let before = try Data(contentsOf: out)
        let again = try OcdBinary.run(["copy", map.path, out.path], binary: binary)
        #expect(again.status != 0 && again.stderr.contains("--replace"))
        #expect(try Data(contentsOf: out) == before)
        let replaced = try OcdBinary.run(["copy", map.path, out.path, "--replace"], binary: binary)
        #expect(replaced.status == 0, "\(replaced.stderr)")

        // The XML store itself reads without a model, as the SQLite copy does.
        let direct = try OcdBinary.run(["fetch", map.path, "--entity", "XDDevAttributeMapping", "--count"], binary: binary)
        #expect(direct.status == 0, "\(direct.stderr)")
        #expect(direct.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(expected)", "\(direct.stdout)")

        // And back to XML, which opens without a model and holds the same objects.
        let back = folder.appendingPathComponent("back.xml")
        let toXML = try OcdBinary.run(["copy", out.path, back.path, "--model", map.path], binary: binary)
        #expect(toXML.status == 0, "\(toXML.stderr)")
        #expect(try XMLStoreCopyTests.shape(of: back) == XMLStoreCopyTests.shape(of: map))
    }
}
