import Foundation
import Testing
@testable import OpenCoreData

/// Inheritance changes: rows move between entity tables and take new entity numbers; what would join two
/// tables, or strand links, is refused.
@Suite struct InheritanceMigrationTests {
    typealias Object = MigrationFixtures.Object

    static let keys = ["Item": "name", "Book": "name", "Magazine": "name", "Media": "name", "Shelf": "name"]

    static func migrateAndCompare(versions: [(name: String, entities: String)], old: [Object], new: [Object]) throws {
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try InferredMigrationRuleTests.store(directory, versions: versions, objects: old)
        try InferredMigrationRuleTests.open(url, bundle: bundle)
        let model = try ManagedObjectModel(contentsOf: bundle)
        let fresh = directory.file("Fresh.sqlite")
        try MigrationFixtures.fill(fresh, model: model, with: new)
        #expect(try MigrationFixtures.layout(url) == MigrationFixtures.layout(fresh))
        #expect(try MigrationFixtures.dump(url, model: model, keys: keys) == MigrationFixtures.dump(fresh, model: model, keys: keys))
    }

    @Test func aSubentityLeavingItsParentMovesItsRowsToATableOfItsOwn() throws {
        let item = #"<entity name="Item"><attribute name="name" attributeType="String"/></entity>"#
        let magazine = #"<entity name="Magazine" parentEntity="Item"><attribute name="issue" optional="YES" attributeType="Integer 32"/></entity>"#
        try Self.migrateAndCompare(versions: [
            ("V1", item + magazine + #"<entity name="Book" parentEntity="Item"><attribute name="pages" optional="YES" attributeType="Integer 32"/></entity>"#),
            ("V2", item + magazine + #"<entity name="Book"><attribute name="name" attributeType="String"/><attribute name="pages" optional="YES" attributeType="Integer 32"/></entity>"#),
        ], old: [
            Object(entity: "Item", key: "i", values: ["name": "i"]),
            Object(entity: "Book", key: "b1", values: ["name": "b1", "pages": Int32(10)]),
            Object(entity: "Magazine", key: "m", values: ["name": "m", "issue": Int32(3)]),
            Object(entity: "Book", key: "b2", values: ["name": "b2"]),
        ], new: [
            Object(entity: "Item", key: "i", values: ["name": "i"]),
            Object(entity: "Book", key: "b1", values: ["name": "b1", "pages": Int32(10)]),
            Object(entity: "Magazine", key: "m", values: ["name": "m", "issue": Int32(3)]),
            Object(entity: "Book", key: "b2", values: ["name": "b2"]),
        ])
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

    @Test func joiningTwoTablesUnderANewParentIsRefused() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, before) = try InferredMigrationRuleTests.store(directory, versions: [
            ("V1", #"<entity name="Book"><attribute name="name" attributeType="String"/></entity><entity name="Magazine"><attribute name="name" attributeType="String"/></entity>"#),
            ("V2", #"<entity name="Media"><attribute name="name" attributeType="String"/></entity><entity name="Book" parentEntity="Media"/><entity name="Magazine" parentEntity="Media"/>"#),
        ], objects: [Object(entity: "Book", key: "b", values: ["name": "b"]), Object(entity: "Magazine", key: "m", values: ["name": "m"])])
        do {
            try InferredMigrationRuleTests.open(url, bundle: bundle)
            Issue.record("joined two tables")
        } catch let MigrationError.unsupportedChange(entity, property, reason) {
            #expect(entity == "Media" && property == nil)
            #expect(reason.contains("ZBOOK and ZMAGAZINE"))
        }
        #expect(try MigrationFixtures.bytes(url) == before)
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
