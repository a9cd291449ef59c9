import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// One rule of inferred migration per test, on small bundles written for it: what migrates (and to
/// what), and what is refused, naming the culprit and leaving the file byte for byte as it was.
@Suite struct InferredMigrationRuleTests {
    typealias Object = MigrationFixtures.Object

    /// A store of the bundle's first version holding `objects`; returns the bundle, the store and its bytes.
    static func store(_ directory: TemporaryDirectory, versions: [(name: String, entities: String)],
                      objects: [Object]) throws -> (bundle: URL, url: URL, bytes: Data) {
        let bundle = try MigrationFixtures.bundle(in: directory, versions: versions)
        let url = directory.file("Store.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: versions[0].name), with: objects)
        return (bundle, url, try MigrationFixtures.bytes(url))
    }

    static func open(_ url: URL, bundle: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        coordinator.persistentStores.forEach(coordinator.remove)
    }

    static var notes: [Object] { [Object(entity: "Note", key: "a", values: ["title": "a", "text": "one"]),
                        Object(entity: "Note", key: "b", values: ["title": "b"]),
                        Object(entity: "Note", key: "c", values: ["title": "c"])] }

    static func note(_ text: String) -> String {
        #"<entity name="Note"><attribute name="title" attributeType="String"/>"# + text + "</entity>"
    }

    @Test func aRequiredAttributeWithNullsAndNoDefaultIsRefusedNamingTheRowCount() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, before) = try Self.store(directory, versions: [
            ("V1", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/>"#)),
            ("V2", Self.note(#"<attribute name="text" attributeType="String"/>"#)),
        ], objects: Self.notes)
        #expect(throws: MigrationError.missingRequiredValues(entity: "Note", attribute: "text", rowCount: 2)) {
            try Self.open(url, bundle: bundle)
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }

    /// A relationship that becomes an attribute of the same name is one property removed and one added: the
    /// rows stay, their links go, and the new attribute starts at its default.
    @Test func aRelationshipBecomingAnAttributeOfTheSameNameIsRemovedAndAdded() throws {
        let directory = TemporaryDirectory()
        let pet = #"<entity name="Pet"><attribute name="name" attributeType="String"/></entity>"#
        let (bundle, url, _) = try Self.store(directory, versions: [
            ("V1", pet + #"<entity name="Person"><attribute name="name" attributeType="String"/><relationship name="pet" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Pet"/></entity>"#),
            ("V2", pet + #"<entity name="Person"><attribute name="name" attributeType="String"/><attribute name="pet" optional="YES" attributeType="String" defaultValueString="none"/></entity>"#),
        ], objects: [Object(entity: "Pet", key: "rex", values: ["name": "rex"]),
                     Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pet": ["rex"]]),
                     Object(entity: "Person", key: "bob", values: ["name": "bob"])])
        try Self.open(url, bundle: bundle)
        #expect(try MigrationFixtures.dump(url, model: try ManagedObjectModel(contentsOf: bundle)) == [
            "Person name=ann (String) pet=none (String)",
            "Person name=bob (String) pet=none (String)",
            "Pet name=rex (String)",
        ])
    }

    @Test func aRequiredAttributeWithADefaultFillsTheNulls() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try Self.store(directory, versions: [
            ("V1", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/>"#)),
            ("V2", Self.note(#"<attribute name="text" attributeType="String" defaultValueString="empty"/><attribute name="stars" attributeType="Integer 16" defaultValueString="3"/>"#)),
        ], objects: Self.notes)
        try Self.open(url, bundle: bundle)
        let model = try ManagedObjectModel(contentsOf: bundle)
        #expect(try MigrationFixtures.dump(url, model: model) == [
            "Note stars=3 (Int16) text=empty (String) title=b (String)",
            "Note stars=3 (Int16) text=empty (String) title=c (String)",
            "Note stars=3 (Int16) text=one (String) title=a (String)",
        ])
    }

    @Test func aNewRequiredAttributeWithoutDefaultIsRefusedWhenRowsExist() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, before) = try Self.store(directory, versions: [
            ("V1", Self.note("")),
            ("V2", Self.note(#"<attribute name="text" attributeType="String"/>"#)),
        ], objects: Self.notes.map { Object(entity: "Note", key: $0.key, values: ["title": $0.key]) })
        #expect(throws: MigrationError.missingRequiredValues(entity: "Note", attribute: "text", rowCount: 3)) {
            try Self.open(url, bundle: bundle)
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }

    @Test(arguments: [
        ("String", "Integer 32", true), ("Integer 64", "Integer 16", true), ("Double", "Float", true),
        ("Integer 16", "Integer 64", false), ("Integer 32", "Double", false), ("Float", "Double", false),
        ("Boolean", "Integer 16", false), ("Integer 32", "Decimal", false), ("URI", "String", false),
    ])
    func typeChangesAreConvertedOrRefused(from: String, to: String, refused: Bool) throws {
        let directory = TemporaryDirectory()
        let values: [String: Any] = switch from {
        case "String": ["title": "a", "value": "7"]
        case "URI": ["title": "a", "value": URL(string: "https://example.org/7")!]
        case "Boolean": ["title": "a", "value": true]
        case "Double": ["title": "a", "value": 7.5]
        case "Float": ["title": "a", "value": Float(7.5)]
        case "Integer 16": ["title": "a", "value": Int16(7)]
        case "Integer 32": ["title": "a", "value": Int32(7)]
        default: ["title": "a", "value": Int64(7)]
        }
        let (bundle, url, before) = try Self.store(directory, versions: [
            ("V1", Self.note(#"<attribute name="value" optional="YES" attributeType="\#(from)"/>"#)),
            ("V2", Self.note(#"<attribute name="value" optional="YES" attributeType="\#(to)"/>"#)),
        ], objects: [Object(entity: "Note", key: "a", values: values)])
        if refused {
            #expect(throws: MigrationError.unsupportedTypeChange(entity: "Note", attribute: "value",
                                                                 from: AttributeType(modelFileName: from)!,
                                                                 to: AttributeType(modelFileName: to)!)) {
                try Self.open(url, bundle: bundle)
            }
            #expect(try MigrationFixtures.bytes(url) == before)
            return
        }
        try Self.open(url, bundle: bundle)
        let line = try MigrationFixtures.dump(url, model: ManagedObjectModel(contentsOf: bundle))[0]
        let expected = switch (from, to) {
        case ("Boolean", _): "value=1 (Int16)"
        case ("URI", _): "value=https://example.org/7 (String)"
        case (_, "Double"): "value=\(from == "Float" ? "7.5" : "7.0") (Double)"
        case (_, "Decimal"): "value=7 (Decimal)"
        default: "value=7 (Int64)"
        }
        #expect(line.contains(expected), "\(line)")
    }

    static var pets: [Object] { [
        Object(entity: "Pet", key: "rex", values: ["name": "rex"]), Object(entity: "Pet", key: "tom", values: ["name": "tom"]),
        Object(entity: "Pet", key: "kit", values: ["name": "kit"]),
    ] }

    static func person(_ relationship: String) -> String {
        #"<entity name="Person"><attribute name="name" attributeType="String"/>"# + relationship + "</entity>"
            + #"<entity name="Pet"><attribute name="name" attributeType="String"/></entity>"#
    }

    @Test func aToManyBecomingToOneKeepsSingleLinksAndRefusesSeveral() throws {
        let versions = [
            ("V1", Self.person(#"<relationship name="pets" optional="YES" toMany="YES" destinationEntity="Pet"/>"#)),
            ("V2", Self.person(#"<relationship name="pet" optional="YES" maxCount="1" destinationEntity="Pet" elementID="pets"/>"#)),
            // (V3 has an attribute more: without it, V3 would hash like V1 and open V1's stores as they are.)
            ("V3", Self.person(#"<attribute name="nick" optional="YES" attributeType="String"/><relationship name="pets" optional="YES" toMany="YES" destinationEntity="Pet" elementID="pet"/>"#)),
        ]
        let directory = TemporaryDirectory()
        let (bundle, url, before) = try Self.store(directory, versions: versions, objects: Self.pets + [
            Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pets": ["rex", "tom"]]),
            Object(entity: "Person", key: "bob", values: ["name": "bob"], links: ["pets": ["kit"]]),
        ])
        #expect(throws: MigrationError.severalLinks(entity: "Person", relationship: "pet", rowCount: 1)) {
            try Self.open(url, bundle: bundle)
        }
        #expect(try MigrationFixtures.bytes(url) == before)

        let single = TemporaryDirectory()
        let (singleBundle, singleURL, _) = try Self.store(single, versions: versions, objects: Self.pets + [
            Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pets": ["tom"]]),
            Object(entity: "Person", key: "bob", values: ["name": "bob"], links: ["pets": ["kit"]]),
        ])
        // V1 → V2 → V3: to-many, to-one, to-many again, every link kept.
        try Self.open(singleURL, bundle: singleBundle)
        #expect(try MigrationFixtures.dump(singleURL, model: ManagedObjectModel(contentsOf: singleBundle)).filter { $0.hasPrefix("Person") } == [
            "Person name=ann (String) nick=nil pets->{tom}", "Person name=bob (String) nick=nil pets->{kit}",
        ])
    }

    @Test func aFailureMidWayLeavesTheFileAsItWas() throws {
        // The second version makes `title` unique; two notes share one, so creating the unique index (after
        // every table was rebuilt) fails, and everything before it is rolled back.
        let directory = TemporaryDirectory()
        let (bundle, url, before) = try Self.store(directory, versions: [
            ("V1", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/>"#)),
            ("V2", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/><attribute name="extra" optional="YES" attributeType="String"/><uniquenessConstraints><uniquenessConstraint><constraint value="title"/></uniquenessConstraint></uniquenessConstraints>"#)),
        ], objects: [Object(entity: "Note", key: "a", values: ["title": "same"]), Object(entity: "Note", key: "b", values: ["title": "same"])])
        do {
            try Self.open(url, bundle: bundle)
            Issue.record("migrated despite duplicates")
        } catch let MigrationError.stepFailed(path, step, _) {
            #expect(path == url.path)
            #expect(step.contains("Z_NOTE_UNIQUE_0"))
        }
        #expect(try MigrationFixtures.bytes(url) == before)
        #expect(try ModelVersionBundle(contentsOf: bundle).version(ofStoreAt: url)?.name == "V1")
    }

    @Test func entitiesAndRelationshipsAreRenamedAddedAndRemoved() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try Self.store(directory, versions: [
            ("V1", Self.person(#"<relationship name="pets" optional="YES" toMany="YES" destinationEntity="Pet"/>"#)
                + #"<entity name="Gone"><attribute name="name" attributeType="String"/></entity>"#),
            ("V2", #"<entity name="Owner" elementID="Person"><attribute name="name" attributeType="String"/><relationship name="animals" optional="YES" toMany="YES" destinationEntity="Animal" inverseName="owner" elementID="pets"/></entity>"#
                + #"<entity name="Animal" elementID="Pet"><attribute name="name" attributeType="String"/><relationship name="owner" optional="YES" maxCount="1" destinationEntity="Owner" inverseName="animals"/><relationship name="likes" optional="YES" toMany="YES" destinationEntity="Animal" inverseName="likedBy"/><relationship name="likedBy" optional="YES" toMany="YES" destinationEntity="Animal" inverseName="likes"/></entity>"#),
        ], objects: Self.pets + [
            Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pets": ["rex", "tom"]]),
            Object(entity: "Gone", key: "g", values: ["name": "g"]),
        ])
        try Self.open(url, bundle: bundle)
        let model = try ManagedObjectModel(contentsOf: bundle)
        var keys = MigrationFixtures.keyAttribute
        keys["Owner"] = "name"; keys["Animal"] = "name"
        let fresh = directory.file("Fresh.sqlite")
        try MigrationFixtures.fill(fresh, model: model, with: [
            Object(entity: "Animal", key: "rex", values: ["name": "rex"]), Object(entity: "Animal", key: "tom", values: ["name": "tom"]),
            Object(entity: "Animal", key: "kit", values: ["name": "kit"]),
            Object(entity: "Owner", key: "ann", values: ["name": "ann"], links: ["animals": ["rex", "tom"]]),
        ])
        #expect(try MigrationFixtures.layout(url) == MigrationFixtures.layout(fresh))
        #expect(try MigrationFixtures.dump(url, model: model, keys: keys) == MigrationFixtures.dump(fresh, model: model, keys: keys))
    }
    @Test func aDeleteRuleChangeNeedsNoMigration() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try Self.store(directory, versions: [
            ("V1", Self.person(#"<relationship name="pets" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Pet"/>"#)),
            ("V2", Self.person(#"<relationship name="pets" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Pet"/>"#)),
        ], objects: Self.pets)
        // Delete rules are not part of the version hashes: both versions open the store as it is.
        #expect(try ModelVersionBundle(contentsOf: bundle).version(ofStoreAt: url)?.name == "V2")
        #expect(try StoreMigration.plan(storeAt: url, to: ModelVersionBundle(contentsOf: bundle)).isEmpty)
        try Self.open(url, bundle: bundle)
        #expect(try MigrationFixtures.dump(url, model: ManagedObjectModel(contentsOf: bundle)).count == 3)
    }

    @Test func aStoreWhoseTablesAreNotThoseOfItsVersionIsRefused() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try Self.store(directory, versions: [
            ("V1", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/>"#)),
            ("V2", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/><attribute name="extra" optional="YES" attributeType="String"/>"#)),
        ], objects: Self.notes)
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { try $0.execute(sql: "ALTER TABLE ZNOTE DROP COLUMN ZTEXT") }
        try queue.close()
        let before = try MigrationFixtures.bytes(url)
        #expect(throws: MigrationError.storeDoesNotMatchItsVersion(path: url.path, version: "V1",
                                                                   differences: ["column ZNOTE.ZTEXT is missing"])) {
            try Self.open(url, bundle: bundle)
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }
    @Test func aRefusalInALaterStepRollsBackTheEarlierSteps() throws {
        // V1 → V2 adds an attribute; V2 → V3 makes `text` required without a default while notes lack it.
        // That check runs inside the transaction, after V1 → V2 was written: all of it is rolled back.
        let directory = TemporaryDirectory()
        let (bundle, url, before) = try Self.store(directory, versions: [
            ("V1", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/>"#)),
            ("V2", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/><attribute name="extra" optional="YES" attributeType="String"/>"#)),
            ("V3", Self.note(#"<attribute name="text" attributeType="String"/><attribute name="extra" optional="YES" attributeType="String"/>"#)),
        ], objects: Self.notes)
        let plans = try StoreMigration.plan(storeAt: url, to: ModelVersionBundle(contentsOf: bundle))
        #expect(plans.map(\.targetVersion) == ["V2", "V3"])
        #expect(throws: MigrationError.missingRequiredValues(entity: "Note", attribute: "text", rowCount: 2)) {
            try Self.open(url, bundle: bundle)
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }
    @Test func aNameFreedByARenameBelongsToANewElement() throws {
        // V2 renames `text` to `body` and Note to Memo, and adds a new `text` and a new Note: those start empty.
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try Self.store(directory, versions: [
            ("V1", Self.note(#"<attribute name="text" optional="YES" attributeType="String"/>"#)),
            ("V2", #"<entity name="Memo" elementID="Note"><attribute name="title" attributeType="String"/><attribute name="body" optional="YES" attributeType="String" elementID="text"/><attribute name="text" optional="YES" attributeType="String"/></entity>"#
                + Self.note("")),
        ], objects: [Object(entity: "Note", key: "a", values: ["title": "a", "text": "one"])])
        try Self.open(url, bundle: bundle)
        var keys = MigrationFixtures.keyAttribute
        keys["Memo"] = "title"
        #expect(try MigrationFixtures.dump(url, model: ManagedObjectModel(contentsOf: bundle), keys: keys) == [
            "Memo body=one (String) text=nil title=a (String)",
        ])
    }
}
