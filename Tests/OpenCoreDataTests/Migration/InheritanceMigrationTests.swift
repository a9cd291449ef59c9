import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Inheritance changes: rows move between entity tables and take new entity numbers; what would join two
/// tables, or strand links, is refused.
@Suite struct InheritanceMigrationTests {
    typealias Object = MigrationFixtures.Object

    static let keys = ["Author": "name", "Item": "name", "Book": "name", "Magazine": "name", "Media": "name", "Shelf": "name"]

    /// Migrates a store of the first version holding `old` and compares it with a fresh store of the last
    /// holding `new`, both in `directory`; returns the migrated store.
    @discardableResult
    static func migrateAndCompare(in directory: TemporaryDirectory = TemporaryDirectory(),
                                  versions: [(name: String, entities: String)], old: [Object], new: [Object]) throws -> URL {
        let (bundle, url, _) = try InferredMigrationRuleTests.store(directory, versions: versions, objects: old)
        try InferredMigrationRuleTests.open(url, bundle: bundle)
        let model = try ManagedObjectModel(contentsOf: bundle)
        let fresh = directory.file("Fresh.sqlite")
        try MigrationFixtures.fill(fresh, model: model, with: new)
        #expect(try MigrationFixtures.layout(url) == MigrationFixtures.layout(fresh))
        #expect(try MigrationFixtures.dump(url, model: model, keys: keys) == MigrationFixtures.dump(fresh, model: model, keys: keys))
        return url
    }

    @Test func aSubentityLeavingItsParentMovesItsRowsToATableOfItsOwn() throws {
        let item = #"<entity name="Item"><attribute name="name" attributeType="String"/></entity>"#
        let magazine = #"<entity name="Magazine" parentEntity="Item"><attribute name="issue" optional="YES" attributeType="Integer 32"/></entity>"#
        // Item keeps a sub-entity, so a to-one to Item keeps its entity-number column, renumbered.
        let shelf = #"<entity name="Shelf"><attribute name="name" attributeType="String"/><relationship name="favorite" optional="YES" maxCount="1" destinationEntity="Item"/></entity>"#
        let directory = TemporaryDirectory()
        let url = try Self.migrateAndCompare(in: directory, versions: [
            ("V1", item + magazine + shelf + #"<entity name="Book" parentEntity="Item"><attribute name="pages" optional="YES" attributeType="Integer 32"/></entity>"#),
            ("V2", item + magazine + shelf + #"<entity name="Author"><attribute name="name" optional="YES" attributeType="String"/></entity><entity name="Book"><attribute name="name" attributeType="String"/><attribute name="pages" optional="YES" attributeType="Integer 32"/></entity>"#),
        ], old: [
            Object(entity: "Item", key: "i", values: ["name": "i"]),
            Object(entity: "Book", key: "b1", values: ["name": "b1", "pages": Int32(10)]),
            Object(entity: "Magazine", key: "m", values: ["name": "m", "issue": Int32(3)]),
            Object(entity: "Book", key: "b2", values: ["name": "b2"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["favorite": ["m"]]),
        ], new: [
            Object(entity: "Item", key: "i", values: ["name": "i"]),
            Object(entity: "Book", key: "b1", values: ["name": "b1", "pages": Int32(10)]),
            Object(entity: "Magazine", key: "m", values: ["name": "m", "issue": Int32(3)]),
            Object(entity: "Book", key: "b2", values: ["name": "b2"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["favorite": ["m"]]),
        ])
        // V1 numbered Item 1, Book 2, Magazine 3, Shelf 4; V2 numbers Author 1, Book 2, Item 3, Magazine 4,
        // Shelf 5: the column, named after the destination Item (Z1_FAVORITE, then Z3_FAVORITE), holds
        // Magazine's new number.
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT Z3_FAVORITE FROM ZSHELF") } == 4)
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT Z_ENT FROM ZITEM WHERE ZNAME = 'm'") } == 4)
    }

    @Test func aNewAbstractParentTakesItsOnlyChildsRowsAndLinks() throws {
        let shelf = #"<entity name="Shelf"><attribute name="name" attributeType="String"/><relationship name="books" optional="YES" toMany="YES" destinationEntity="Book" inverseName="shelf"/></entity>"#
        try Self.migrateAndCompare(versions: [
            ("V1", shelf + #"<entity name="Book"><attribute name="name" attributeType="String"/><attribute name="pages" optional="YES" attributeType="Integer 32"/><relationship name="shelf" optional="YES" maxCount="1" destinationEntity="Shelf" inverseName="books"/></entity>"#),
            ("V2", shelf + #"<entity name="Media" isAbstract="YES"><attribute name="name" attributeType="String"/></entity><entity name="Book" parentEntity="Media"><attribute name="pages" optional="YES" attributeType="Integer 32"/><relationship name="shelf" optional="YES" maxCount="1" destinationEntity="Shelf" inverseName="books"/></entity>"#),
        ], old: [
            Object(entity: "Book", key: "b1", values: ["name": "b1", "pages": Int32(10)]),
            Object(entity: "Book", key: "b2", values: ["name": "b2"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["books": ["b1", "b2"]]),
        ], new: [
            Object(entity: "Book", key: "b1", values: ["name": "b1", "pages": Int32(10)]),
            Object(entity: "Book", key: "b2", values: ["name": "b2"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["books": ["b1", "b2"]]),
        ])
    }

    @Test func twoTablesJoinedUnderANewParentKeepEveryObjectAndLink() throws {
        // Book and Magazine rows both start at key 1: Magazine's keys move up past Book's, links with them.
        let shelf = #"<entity name="Shelf"><attribute name="name" attributeType="String"/><relationship name="books" optional="YES" toMany="YES" destinationEntity="Book" inverseName="shelf"/><relationship name="magazines" optional="YES" toMany="YES" destinationEntity="Magazine" inverseName="shelves"/><relationship name="favorite" optional="YES" maxCount="1" destinationEntity="Media"/></entity>"#
        let book = #"<attribute name="pages" optional="YES" attributeType="Integer 32"/><relationship name="shelf" optional="YES" maxCount="1" destinationEntity="Shelf" inverseName="books"/></entity>"#
        let magazine = #"<relationship name="shelves" optional="YES" toMany="YES" destinationEntity="Shelf" inverseName="magazines"/></entity>"#
        let directory = TemporaryDirectory()
        let objects = [
            Object(entity: "Book", key: "b1", values: ["name": "b1", "pages": Int32(10)]),
            Object(entity: "Magazine", key: "m1", values: ["name": "m1"]),
            Object(entity: "Book", key: "b2", values: ["name": "b2"]),
            Object(entity: "Magazine", key: "m2", values: ["name": "m2"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["books": ["b1", "b2"], "magazines": ["m2"]]),
            Object(entity: "Shelf", key: "t", values: ["name": "t"], links: ["magazines": ["m1", "m2"]]),
        ]
        let v1Shelf = shelf.replacingOccurrences(of: #"<relationship name="favorite" optional="YES" maxCount="1" destinationEntity="Media"/>"#, with: "")
        let url = try Self.migrateAndCompare(in: directory, versions: [
            ("V1", v1Shelf + #"<entity name="Book"><attribute name="name" attributeType="String"/>"# + book
                + #"<entity name="Magazine"><attribute name="name" attributeType="String"/>"# + magazine),
            ("V2", shelf + #"<entity name="Media"><attribute name="name" attributeType="String"/></entity>"#
                + #"<entity name="Book" parentEntity="Media">"# + book + #"<entity name="Magazine" parentEntity="Media">"# + magazine),
        ], old: objects, new: objects)
        // New objects get keys above every moved one.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: directory.file("Test.xcdatamodeld")))
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let media = try context.insertNewObject(forEntityName: "Magazine")
        try media.setValue("m3", forKey: "name")
        try context.save()
        #expect(media.objectID.primaryKey == 5)
    }

    @Test func linksToObjectsThatLeaveTheDestinationEntityAreRefused() throws {
        let versions = [
            ("V1", #"<entity name="Item"><attribute name="name" attributeType="String"/><relationship name="shelf" optional="YES" maxCount="1" destinationEntity="Shelf" inverseName="items"/></entity><entity name="Book" parentEntity="Item"/><entity name="Shelf"><attribute name="name" attributeType="String"/><relationship name="items" optional="YES" toMany="YES" destinationEntity="Item" inverseName="shelf"/></entity>"#),
            ("V2", #"<entity name="Item"><attribute name="name" attributeType="String"/><relationship name="shelf" optional="YES" maxCount="1" destinationEntity="Shelf" inverseName="items"/></entity><entity name="Book"><attribute name="name" attributeType="String"/></entity><entity name="Shelf"><attribute name="name" attributeType="String"/><relationship name="items" optional="YES" toMany="YES" destinationEntity="Item" inverseName="shelf"/></entity>"#),
        ]
        let directory = TemporaryDirectory()
        let (bundle, url, before) = try InferredMigrationRuleTests.store(directory, versions: versions, objects: [
            Object(entity: "Item", key: "i", values: ["name": "i"]), Object(entity: "Book", key: "b", values: ["name": "b"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["items": ["i", "b"]]),
        ])
        #expect(throws: MigrationError.linksWouldBeLost(entity: "Item", relationship: "shelf", rowCount: 1)) {
            try InferredMigrationRuleTests.open(url, bundle: bundle)
        }
        #expect(try MigrationFixtures.bytes(url) == before)

        try Self.migrateAndCompare(versions: versions, old: [
            Object(entity: "Item", key: "i", values: ["name": "i"]), Object(entity: "Book", key: "b", values: ["name": "b"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["items": ["i"]]),
        ], new: [
            Object(entity: "Item", key: "i", values: ["name": "i"]), Object(entity: "Book", key: "b", values: ["name": "b"]),
            Object(entity: "Shelf", key: "s", values: ["name": "s"], links: ["items": ["i"]]),
        ])
    }
}
