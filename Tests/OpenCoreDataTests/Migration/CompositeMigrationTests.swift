import Foundation
import Testing
@testable import OpenCoreData

/// Inferred migration of composite attributes: element changes migrate like attribute changes; a change
/// that would lose values is refused naming the attribute, and the store is left as it was.
@Suite struct CompositeMigrationTests {
    typealias Object = MigrationFixtures.Object

    static func place(_ attributes: String, composites: String = "") -> String {
        #"<entity name="Place"><attribute name="title" attributeType="String"/>"# + attributes + "</entity>" + composites
    }

    static let location = #"<attribute name="location" optional="YES" attributeType="Composite" composite="Location"/>"#

    static var places: [Object] {
        [Object(entity: "Place", key: "a", values: ["title": "a", "location": ["latitude": 1.5, "floor": 3] as [String: Any]]),
         Object(entity: "Place", key: "b", values: ["title": "b"])]
    }

    static let before = place(location, composites: """
        <composite name="Location">
            <attribute name="latitude" attributeType="Double"/>
            <attribute name="floor" optional="YES" attributeType="Integer 16"/>
        </composite>
        """)

    @Test func addedAndWidenedElementsMigrateKeepingTheValues() throws {
        let directory = TemporaryDirectory()
        let (bundle, url, _) = try InferredMigrationRuleTests.store(directory, versions: [
            ("V1", Self.before),
            ("V2", Self.place(Self.location, composites: """
                <composite name="Location">
                    <attribute name="latitude" attributeType="Double"/>
                    <attribute name="floor" optional="YES" attributeType="Integer 64"/>
                    <attribute name="label" optional="YES" attributeType="String" defaultValueString="none"/>
                </composite>
                """)),
        ], objects: Self.places)
        try InferredMigrationRuleTests.open(url, bundle: bundle)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(contentsOf: bundle))
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let request = FetchRequest<ManagedObject>(entityName: "Place")
        request.sortDescriptors = [QuerySortDescriptor(key: "title")]
        let places = try context.fetch(request)
        let location = try #require(try places[0].value(forKey: "location") as? [String: Any])
        #expect(location["latitude"] as? Double == 1.5)
        #expect(location["floor"] as? Int64 == 3)
        #expect(location["label"] as? String == "none")
        #expect((try places[1].value(forKey: "location") as? [String: Any])?["latitude"] == nil)
    }

    @Test(arguments: [
        ("becomes", place(#"<attribute name="location" optional="YES" attributeType="String"/>"#),
         place(location, composites: #"<composite name="Location"><attribute name="latitude" optional="YES" attributeType="Double"/></composite>"#)),
        ("stops", before, place(#"<attribute name="location" optional="YES" attributeType="String"/>"#)),
        ("renamed", before, place(#"<attribute name="place" optional="YES" attributeType="Composite" composite="Location" renamingIdentifier="location"/>"#,
                                  composites: #"<composite name="Location"><attribute name="latitude" attributeType="Double"/><attribute name="floor" optional="YES" attributeType="Integer 16"/></composite>"#)),
        ("renaming identifier", before, place(location, composites: #"<composite name="Location"><attribute name="lat" attributeType="Double" renamingIdentifier="latitude"/><attribute name="floor" optional="YES" attributeType="Integer 16"/></composite>"#)),
    ])
    func changesThatWouldLoseValuesAreRefusedNamingTheAttribute(detail: String, from: String, to: String) throws {
        let directory = TemporaryDirectory()
        let objects = from.contains("Composite") ? Self.places
            : [Object(entity: "Place", key: "a", values: ["title": "a", "location": "home"])]
        let (bundle, url, bytes) = try InferredMigrationRuleTests.store(directory, versions: [("V1", from), ("V2", to)],
                                                                        objects: objects)
        #expect { try InferredMigrationRuleTests.open(url, bundle: bundle) } throws: { error in
            guard case let MigrationError.unsupportedChange(entity, property, reason) = error else { return false }
            return entity == "Place" && (property == "location" || property == "place") && reason.contains(detail)
        }
        #expect(try MigrationFixtures.bytes(url) == bytes)
    }
}
