import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Stores in which Core Data wrote many-to-many join tables open with their app's model, and every row and
/// join row reads: the layout names the tables and columns as Core Data did (docs/STORE-LAYOUT.md).
@Suite(.enabled(if: AppleMadeFixtures.available, AppleMadeFixtures.absentMessage))
struct CoreDataJoinTableCorpusTests {
    /// A store, its app's model bundle, and the join table Core Data made in it with its columns.
    static let stores: [(store: String, bundle: String, table: String, columns: Set<String>)] = [
        ("duckduckgo-BrowserServicesKit/Bookmarks_V4.sqlite", "duckduckgo-BrowserServicesKit/BookmarksModel.xcdatamodeld",
         "Z_1FAVORITES", ["Z_1FAVORITEFOLDERS", "Z_1FAVORITES", "Z_FOK_1FAVORITES"]),
        ("duckduckgo-BrowserServicesKit/Bookmarks_V5.sqlite", "duckduckgo-BrowserServicesKit/BookmarksModel.xcdatamodeld",
         "Z_1FAVORITES", ["Z_1FAVORITEFOLDERS", "Z_1FAVORITES", "Z_FOK_1FAVORITES"]),
        ("carekit-apple-CareKit/SampleStore2.0.sqlite", "carekit-apple-CareKit/CareKitStore.xcdatamodeld",
         "Z_4TASK", ["Z_4NOTES", "Z_11TASK"]),
        ("bignerdranch-CoreDataStack/Deprecated/TestModel.sqlite", "bignerdranch-CoreDataStack/Sample.xcdatamodeld",
         "Z_1BOOKS", ["Z_1AUTHORS", "Z_2BOOKS"]),
    ]

    /// The model version of `bundle` that wrote the store at `copy`, numbered as the store numbers it.
    static func appModel(_ bundle: String, forStoreAt copy: URL) throws -> ManagedObjectModel {
        let bundleURL = try AppleMadeFixtures.url(bundle)
        let version = try #require(try ModelVersionBundle(contentsOf: bundleURL).version(ofStoreAt: copy))
        return try ManagedObjectModel(contentsOf: bundleURL.appendingPathComponent(version.name + ".xcdatamodel"),
                                      numberedLikeStoreAt: copy)
    }

    @Test(arguments: stores.map { ($0.store, $0.bundle, $0.table, $0.columns) })
    func opensWithTheAppsModelAndReadsEveryJoinRow(_ store: String, _ bundle: String, _ table: String,
                                                   _ columns: Set<String>) throws {
        let directory = TemporaryDirectory()
        let copy = try AppleMadeFixtures.copyOfStore(store, into: directory.url)
        let model = try Self.appModel(bundle, forStoreAt: copy)
        let join = try #require(model.schema.joinTables.first { $0.name == table })
        #expect(Set(join.columns) == columns)
        let summary = try CorpusStoreReading.readEverything(storeAt: copy, model: model)
        #expect(summary.linksByJoinTable.keys.contains(table))
    }

    /// The join table of a relationship that is its own inverse: two key columns of one name would clash,
    /// so the second gets a `1`; each link is a row from either side.
    @Test func aManyToManyThatIsItsOwnInverseIsStoredAndReadBack() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Person") {
                Attribute("name", .string)
                ToMany("friends", "Person", inverse: "friends")
            }
        }
        let join = try #require(model.schema.joinTables.first)
        #expect(join.name == "Z_1FRIENDS")
        #expect(join.columns == ["Z_1FRIENDS", "Z_1FRIENDS1"])
        let stack = try TestStack(model: model)
        let context = stack.context()
        let ann = try context.insertNewObject(forEntityName: "Person")
        let bob = try context.insertNewObject(forEntityName: "Person")
        try ann.setValue("Ann", forKey: "name")
        try bob.setValue("Bob", forKey: "name")
        try ann.setValue(Set([bob]), forKey: "friends")
        try context.save()
        let reader = try stack.freshContext()
        let people = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
        let friendsByName = try Dictionary(uniqueKeysWithValues: people.map { person in
            (try person.value(forKey: "name") as? String ?? "",
             try (person.value(forKey: "friends") as? Set<ManagedObject> ?? []).map { try $0.value(forKey: "name") as? String ?? "" })
        })
        #expect(friendsByName == ["Ann": ["Bob"], "Bob": ["Ann"]])
    }
}
