import Foundation
import Testing
@testable import OpenCoreData

/// The model every Core Data store of the corpus carries in `Z_MODELCACHE` (DEFLATE of a keyed archive whose
/// entities are an `NSKnownKeysDictionary1`), read as Core Data reads it when the model files are gone.
@Suite(.enabled(if: AppleMadeFixtures.available, AppleMadeFixtures.absentMessage))
struct StoreModelCacheCorpusTests {
    /// Each store of the corpus and the source model bundle of the app that wrote it (SOURCES.md pairs them);
    /// nil for alemar11's SampleModel2, whose model is built in code.
    static let stores: [(store: String, bundle: String?)] = [
        ("SRGSSR-srguserdata-apple/UserData_DB_v1/Data.sqlite", "SRGSSR-srguserdata-apple/SRGUserData.xcdatamodeld"),
        ("SRGSSR-srguserdata-apple/UserData_DB_v3/Data.sqlite", "SRGSSR-srguserdata-apple/SRGUserData.xcdatamodeld"),
        ("SRGSSR-srguserdata-apple/UserData_DB_v5/Data.sqlite", "SRGSSR-srguserdata-apple/SRGUserData.xcdatamodeld"),
        ("alemar11-CoreDataPlus/Fixtures/SampleModel2_V1.sqlite", nil),
        ("alemar11-CoreDataPlus/Fixtures/SampleModel2_V2.sqlite", nil),
        ("alemar11-CoreDataPlus/Fixtures/SampleModel3_V1.sqlite", "alemar11-CoreDataPlus/SampleModel3.xcdatamodeld"),
        ("alemar11-CoreDataPlus/Fixtures/SampleModel_V1.sqlite", "alemar11-CoreDataPlus/SampleModel.xcdatamodeld"),
        ("alemar11-CoreDataPlus/Fixtures/SampleModel_V2.sqlite", "alemar11-CoreDataPlus/SampleModel.xcdatamodeld"),
        ("bignerdranch-CoreDataStack/Deprecated/TestModel.sqlite", "bignerdranch-CoreDataStack/Sample.xcdatamodeld"),
        ("carekit-apple-CareKit/SampleStore2.0.sqlite", "carekit-apple-CareKit/CareKitStore.xcdatamodeld"),
        ("duckduckgo-BrowserServicesKit/Bookmarks_V1.sqlite", "duckduckgo-BrowserServicesKit/BookmarksModel.xcdatamodeld"),
        ("duckduckgo-BrowserServicesKit/Bookmarks_V2.sqlite", "duckduckgo-BrowserServicesKit/BookmarksModel.xcdatamodeld"),
        ("duckduckgo-BrowserServicesKit/Bookmarks_V3.sqlite", "duckduckgo-BrowserServicesKit/BookmarksModel.xcdatamodeld"),
        ("duckduckgo-BrowserServicesKit/Bookmarks_V4.sqlite", "duckduckgo-BrowserServicesKit/BookmarksModel.xcdatamodeld"),
        ("duckduckgo-BrowserServicesKit/Bookmarks_V5.sqlite", "duckduckgo-BrowserServicesKit/BookmarksModel.xcdatamodeld"),
        ("duckduckgo-BrowserServicesKit/SyncMetadata_V3.sqlite", "duckduckgo-BrowserServicesKit/SyncMetadata.xcdatamodeld"),
        ("wibosco-CoreDataMigration-Example/SQLite/CoreDataMigration_Example_1.sqlite",
         "wibosco-CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld"),
        ("wibosco-CoreDataMigration-Example/SQLite/CoreDataMigration_Example_2.sqlite",
         "wibosco-CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld"),
        ("wibosco-CoreDataMigration-Example/SQLite/CoreDataMigration_Example_3.sqlite",
         "wibosco-CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld"),
        ("wibosco-CoreDataMigration-Example/SQLite/CoreDataMigration_Example_WAL.sqlite",
         "wibosco-CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld"),
        ("wibosco-CoreDataMigrationRevised-Example/SQLite/CoreDataMigration_Example_1.sqlite",
         "wibosco-CoreDataMigrationRevised-Example/CoreDataMigration_Example.xcdatamodeld"),
        ("wibosco-CoreDataMigrationRevised-Example/SQLite/CoreDataMigration_Example_2.sqlite",
         "wibosco-CoreDataMigrationRevised-Example/CoreDataMigration_Example.xcdatamodeld"),
        ("wibosco-CoreDataMigrationRevised-Example/SQLite/CoreDataMigration_Example_3.sqlite",
         "wibosco-CoreDataMigrationRevised-Example/CoreDataMigration_Example.xcdatamodeld"),
    ]

    /// Stores whose cached model does not yet hash as they record: alemar11's SampleModel2 (a model built in
    /// code) gives `Book` and its sub-entity `GraphicNovel` other hashes than Core Data did (the entity holds a
    /// derived attribute `pages.@count`, uniqueness constraints and validation rules; which of them Core Data
    /// hashes otherwise is not found yet), and its `ZPAGE` names the to-one's entity column `Z1_BOOK` after
    /// the destination's number where the layout here uses the source's (docs/STORE-LAYOUT.md).
    static let knownToDiffer: Set<String> = [
        "alemar11-CoreDataPlus/Fixtures/SampleModel2_V1.sqlite", "alemar11-CoreDataPlus/Fixtures/SampleModel2_V2.sqlite",
    ]

    /// The list above is the whole corpus: a store added to it is not left out silently.
    @Test func everyStoreOfTheCorpusIsListed() throws {
        let root = try #require(AppleMadeFixtures.root)
        let found = AppleMadeFixtures.files(endingWith: ".sqlite").map { String($0.path.dropFirst(root.path.count + 1)) }
        #expect(found == Self.stores.map(\.store).sorted())
    }

    /// Each cache yields a model whose version hashes are the store's metadata hashes: the model that wrote it.
    @Test(arguments: stores.map(\.store))
    func cachedModelHashesAsTheStoreRecords(_ store: String) throws {
        let directory = TemporaryDirectory()
        let copy = try AppleMadeFixtures.copyOfStore(store, into: directory.url)
        let model = try #require(try ManagedObjectModel.cachedModel(ofStoreAt: copy))
        let recorded = try StoreMetadata.read(storeAt: copy.path).versionHashes
        #expect(!model.entities.isEmpty)
        withKnownIssue("Book's hash differs (see knownToDiffer)") {
            #expect(model.entityVersionHashesByName == recorded)
        } when: { Self.knownToDiffer.contains(store) }
    }

    /// Where the corpus has the app's source model, one of its versions is the cached model: same hashes,
    /// same entities and properties.
    @Test(arguments: stores.filter { $0.bundle != nil }.map { ($0.store, $0.bundle!) })
    func cachedModelIsAVersionOfTheAppsModel(_ store: String, _ bundle: String) throws {
        let directory = TemporaryDirectory()
        let copy = try AppleMadeFixtures.copyOfStore(store, into: directory.url)
        let cached = try #require(try ManagedObjectModel.cachedModel(ofStoreAt: copy))
        let bundleURL = try AppleMadeFixtures.url(bundle)
        let versions = XcodeModelLoader.versionNames(inBundle: bundleURL)
        let match = try versions.lazy.map { try ManagedObjectModel(contentsOf: bundleURL, version: $0) }
            .first { $0.entityVersionHashesByName == cached.entityVersionHashesByName }
        let source = try #require(match, "no version of \(bundle) hashes as the cache of \(store)")
        #expect(source.entities.map(\.name).sorted() == cached.entities.map(\.name).sorted())
        for entity in source.entities {
            let cachedEntity = try #require(cached.entitiesByName[entity.name])
            #expect(entity.properties.map(\.name).sorted() == cachedEntity.properties.map(\.name).sorted(),
                    "\(entity.name)")
        }
    }
}
