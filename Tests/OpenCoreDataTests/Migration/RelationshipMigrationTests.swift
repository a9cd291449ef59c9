import Foundation
import Testing
@testable import OpenCoreData

/// Relationships whose storage changes between versions: a foreign key becoming a join table and back,
/// ordered becoming unordered, to-one becoming to-many; every link kept or the migration refused.
@Suite struct RelationshipMigrationTests {
    typealias Object = MigrationFixtures.Object

    static let pet = #"<entity name="Pet"><attribute name="name" attributeType="String"/>"#
    static let person = #"<entity name="Person"><attribute name="name" attributeType="String"/>"#

    static let versions: [(name: String, entities: String)] = [
        // One-to-many, ordered.
        ("V1", person + #"<relationship name="pets" optional="YES" toMany="YES" ordered="YES" destinationEntity="Pet" inverseName="owner"/></entity>"#
            + pet + #"<relationship name="owner" optional="YES" maxCount="1" destinationEntity="Person" inverseName="pets"/></entity>"#),
        // Many-to-many, unordered: a join table.
        ("V2", person + #"<relationship name="pets" optional="YES" toMany="YES" destinationEntity="Pet" inverseName="owners"/></entity>"#
            + pet + #"<relationship name="owners" optional="YES" toMany="YES" destinationEntity="Person" inverseName="pets" elementID="owner"/></entity>"#),
        // One-to-many again, unordered: a foreign key.
        ("V3", person + #"<relationship name="pets" optional="YES" toMany="YES" destinationEntity="Pet" inverseName="owner"/></entity>"#
            + pet + #"<attribute name="age" optional="YES" attributeType="Integer 16"/><relationship name="owner" optional="YES" maxCount="1" destinationEntity="Person" inverseName="pets" elementID="owners"/></entity>"#),
    ]

    static var animals: [Object] {
        ["rex", "tom", "kit"].map { Object(entity: "Pet", key: $0, values: ["name": $0]) }
    }

    @Test func linksSurviveAForeignKeyBecomingAJoinTableAndBack() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try InferredMigrationRuleTests.store(directory, versions: Array(Self.versions[0...1]), objects: Self.animals + [
            Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pets": ["tom", "rex"]]),
            Object(entity: "Person", key: "bob", values: ["name": "bob"], links: ["pets": ["kit"]]),
        ])
        try InferredMigrationRuleTests.open(url, bundle: bundle)
        #expect(try MigrationFixtures.dump(url, model: ManagedObjectModel(contentsOf: bundle)) == [
            "Person name=ann (String) pets->{rex,tom}", "Person name=bob (String) pets->{kit}",
            "Pet name=kit (String) owners->{bob}", "Pet name=rex (String) owners->{ann}", "Pet name=tom (String) owners->{ann}",
        ])

        // V2 → V3 in another bundle of all three versions, from a V2 store where no pet has two owners.
        let all = TemporaryDirectory()
        let fullBundle = try MigrationFixtures.bundle(in: all, versions: Self.versions)
        let store = all.file("Store.sqlite")
        try MigrationFixtures.fill(store, model: ManagedObjectModel(contentsOf: fullBundle, version: "V2"), with: Self.animals + [
            Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pets": ["tom", "rex"]]),
        ])
        try InferredMigrationRuleTests.open(store, bundle: fullBundle)
        #expect(try MigrationFixtures.dump(store, model: ManagedObjectModel(contentsOf: fullBundle)) == [
            "Person name=ann (String) pets->{rex,tom}",
            "Pet age=nil name=kit (String) owner=nil", "Pet age=nil name=rex (String) owner->ann", "Pet age=nil name=tom (String) owner->ann",
        ])
    }

    @Test func aManyToManyWhoseObjectsHaveSeveralLinksIsNotNarrowedToOneToMany() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.versions)
        let url = directory.file("Store.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "V2"), with: Self.animals + [
            Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pets": ["tom", "rex"]]),
            Object(entity: "Person", key: "bob", values: ["name": "bob"], links: ["pets": ["tom"]]),
        ])
        let before = try MigrationFixtures.bytes(url)
        #expect(throws: MigrationError.severalLinks(entity: "Pet", relationship: "owner", rowCount: 1)) {
            try InferredMigrationRuleTests.open(url, bundle: bundle)
        }
        #expect(try MigrationFixtures.bytes(url) == before)
    }

    @Test func aPlanMadeStaleByAnotherMigrationChangesNothing() throws {
        let directory = TemporaryDirectory()
        let bundle = try MigrationFixtures.bundle(in: directory, versions: Self.versions)
        let url = directory.file("Store.sqlite")
        try MigrationFixtures.fill(url, model: ManagedObjectModel(contentsOf: bundle, version: "V1"), with: Self.animals + [
            Object(entity: "Person", key: "ann", values: ["name": "ann"], links: ["pets": ["tom", "rex"]]),
        ])
        let versions = try ModelVersionBundle(contentsOf: bundle)
        let stale = try StoreMigration.plan(storeAt: url, to: versions)
        try StoreMigration.migrate(storeAt: url, to: versions)
        let migrated = try MigrationFixtures.bytes(url)
        try MigrationRunner.run(stale, onStoreAt: url.path)
        #expect(try MigrationFixtures.bytes(url) == migrated)
        #expect(try versions.version(ofStoreAt: url)?.name == "V3")
    }
}
