import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Each store of the corpus opens with the model it carries (`Z_MODELCACHE`), as Core Data reads it when the
/// app's model files are gone: in the library, and in `ocd inspect`, `ocd fetch` and `ocd model convert`
/// without `--model`.
@Suite(.enabled(if: AppleMadeFixtures.available, AppleMadeFixtures.absentMessage))
struct CarriedModelOpeningTests {
    @Test(arguments: StoreModelCacheCorpusTests.stores.map(\.store))
    func opensWithTheModelItCarries(_ store: String) throws {
        let directory = TemporaryDirectory()
        let copy = try AppleMadeFixtures.copyOfStore(store, into: directory.url)
        let model = try #require(try ManagedObjectModel.cachedModel(ofStoreAt: copy))
        // Read-only, as a reader of a device's store opens it: alemar11's SampleModel2 stores hold Core Data's
        // triggers for a derived attribute, which call a function only Core Data has, so a writable open
        // refuses them; their cached model's Book hash differs (StoreModelCacheCorpusTests.knownToDiffer),
        // which a read-only open reads past.
        let summary = try CorpusStoreReading.readEverything(storeAt: copy, model: model, readOnly: true)
        #expect(summary.objectsByRootEntity.count == model.entitiesByNumber.filter { $0.superentity == nil }.count)
    }

    /// Stores with a join table, an ordered relationship, rows only in the write-ahead log, and an entity
    /// renamed by a migration: inspected, counted and converted back to Xcode's format without a model.
    static let commandLineStores = [
        ("duckduckgo-BrowserServicesKit/Bookmarks_V5.sqlite", "BookmarkEntity"),
        ("carekit-apple-CareKit/SampleStore2.0.sqlite", "OCKCDTask"),
        ("wibosco-CoreDataMigration-Example/SQLite/CoreDataMigration_Example_WAL.sqlite", "Post"),
        ("alemar11-CoreDataPlus/Fixtures/SampleModel_V2.sqlite", "LuxuryCar"),
    ]

    @Test(.enabled(if: OcdBinary.url != nil, "ocd is not built"), arguments: commandLineStores)
    func ocdOpensTheStoreWithoutAModel(_ store: String, _ entity: String) throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let copy = try AppleMadeFixtures.copyOfStore(store, into: directory.url.appendingPathComponent("store"))
        let model = try #require(try ManagedObjectModel.cachedModel(ofStoreAt: copy))
        let table = try #require(model.entitiesByName[entity]).tableName
        let entityNumbers = try #require(model.entitiesByName[entity]).entityNumbersIncludingSubentities
        let rows = try DatabaseQueue(path: copy.path).read {
            try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table) WHERE Z_ENT IN (\(entityNumbers.map(String.init).joined(separator: ",")))") ?? 0
        }

        let inspect = try OcdBinary.run(["inspect", copy.path], binary: binary)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("model cache"), "\(inspect.stdout)")
        #expect(inspect.stdout.contains(entity), "\(inspect.stdout)")

        let fetch = try OcdBinary.run(["fetch", copy.path, "--entity", entity, "--count"], binary: binary)
        #expect(fetch.status == 0, "\(fetch.stderr)")
        #expect(fetch.stdout == "\(rows)\n", "\(fetch.stderr)")

        let bundle = directory.file("Recovered.xcdatamodeld")
        let convert = try OcdBinary.run(["model", "convert", copy.path, "--output", bundle.path], binary: binary)
        #expect(convert.status == 0, "\(convert.stderr)")
        let recovered = try ManagedObjectModel(contentsOf: bundle)
        #expect(recovered.entityVersionHashesByName == model.entityVersionHashesByName)
    }
}
