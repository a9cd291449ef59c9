import Foundation
import Testing
@testable import OpenCoreData

/// Fetched properties from an Xcode model, read from objects in real SQLite stores: the results equal a fresh
/// fetch with the predicate (its variables put in by hand), stay until the object is refreshed, and the
/// property leaves the store's layout and version hashes alone.
@Suite struct FetchedPropertyTests {
    static func xml(fetchedProperties: Bool = true) -> Data {
        InteropFixtures.modelXML("""
        <entity name="Person">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="city" optional="YES" attributeType="String"/>
            <attribute name="age" optional="YES" attributeType="Integer 64" defaultValueString="0"/>
            \(fetchedProperties ? """
            <fetchedProperty name="neighbours" optional="YES">
                <fetchRequest name="fetchedPropertyFetchRequest" entity="Person" predicateString="city == $FETCH_SOURCE.city AND SELF != $FETCH_SOURCE"/>
            </fetchedProperty>
            <fetchedProperty name="inTown" optional="YES">
                <fetchRequest name="fetchedPropertyFetchRequest" entity="Person" predicateString="city == $FETCHED_PROPERTY.userInfo.town"/>
                <userInfo><entry key="town" value="Rome"/></userInfo>
            </fetchedProperty>
            """ : "")
        </entity>
        """)
    }

    static func model() throws -> ManagedObjectModel { try ManagedObjectModel(xmlData: xml(), source: "fetched") }

    private func people(_ context: ManagedObjectContext) throws {
        for (name, city, age) in [("Ann", "Oslo", 30), ("Bo", "Oslo", 50), ("Cy", "Rome", 45), ("Di", "Oslo", 20)] {
            let person = try context.insertNewObject(forEntityName: "Person")
            try person.setValue(name, forKey: "name")
            try person.setValue(city, forKey: "city")
            try person.setValue(Int64(age), forKey: "age")
        }
        try context.save()
    }

    private func person(_ name: String, in context: ManagedObjectContext) throws -> ManagedObject {
        let request = FetchRequest<ManagedObject>(entityName: "Person")
        request.predicate = try QueryPredicate(format: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    private func names(_ value: Any?) throws -> Set<String> {
        let objects = try #require(value as? [ManagedObject])
        return Set(try objects.map { try #require(try $0.value(forKey: "name") as? String) })
    }

    @Test func modelFileLoadsFetchedProperties() throws {
        let person = try #require(try Self.model().entitiesByName["Person"])
        let neighbours = try #require(person.fetchedProperty(named: "neighbours"))
        #expect(neighbours.entityName == "Person")
        #expect(neighbours.predicate == (try QueryPredicate(format: "city == $FETCH_SOURCE.city AND SELF != $FETCH_SOURCE")))
        #expect(person.fetchedProperty(named: "inTown")?.userInfo == ["town": "Rome"])
        #expect(person.propertiesByName["neighbours"] == nil)   // no slot, no column
    }

    @Test func fetchedPropertiesLeaveHashesAndColumnsAlone() throws {
        let with = try Self.model()
        let without = try ManagedObjectModel(xmlData: Self.xml(fetchedProperties: false), source: "plain")
        #expect(with.entityVersionHashesByName == without.entityVersionHashesByName)
        #expect(with.entitiesByName["Person"]?.tableColumnCount == without.entitiesByName["Person"]?.tableColumnCount)
    }

    @Test func resultsEqualAFreshFetchWithThePredicate() throws {
        let stack = try TestStack(model: Self.model())
        try people(stack.context())
        let context = stack.context()
        for person in try context.fetch(FetchRequest<ManagedObject>(entityName: "Person")) {
            let city = try #require(try person.value(forKey: "city") as? String)
            let reference = FetchRequest<ManagedObject>(entityName: "Person")
            reference.predicate = try QueryPredicate(format: "city == %@ AND SELF != %@", city, person)
            let expected: [ManagedObject] = try context.fetch(reference)
            #expect(try names(person.value(forKey: "neighbours")) == names(expected))
        }
        let ann = try person("Ann", in: context)
        #expect(try names(ann.value(forKey: "neighbours")) == ["Bo", "Di"])
        #expect(try names(ann.value(forKey: "inTown")) == ["Cy"])
        #expect(try names(ann.value(forKeyPath: "neighbours")) == ["Bo", "Di"])
    }

    @Test func anUnsavedSourceAndUnsavedResultsCount() throws {
        let stack = try TestStack(model: Self.model())
        try people(stack.context())
        let context = stack.context()
        let newcomer = try context.insertNewObject(forEntityName: "Person")
        try newcomer.setValue("Ed", forKey: "name")
        try newcomer.setValue("Rome", forKey: "city")
        let visitor = try context.insertNewObject(forEntityName: "Person")
        try visitor.setValue("Flo", forKey: "name")
        try visitor.setValue("Rome", forKey: "city")
        // Unsaved objects are among the results.
        #expect(try names(newcomer.value(forKey: "inTown")) == ["Cy", "Ed", "Flo"])
        // The source itself has only a temporary ID: comparing with it is refused as any fetch refuses it.
        #expect(throws: QueryLanguageError.self) { try newcomer.value(forKey: "neighbours") }
        try context.save()
        context.refresh(newcomer, mergeChanges: true)
        #expect(try names(newcomer.value(forKey: "neighbours")) == ["Cy", "Flo"])
    }

    @Test func resultsAreKeptUntilRefresh() throws {
        let stack = try TestStack(model: Self.model())
        try people(stack.context())
        let context = stack.context()
        let ann = try person("Ann", in: context)
        #expect(try names(ann.value(forKey: "neighbours")) == ["Bo", "Di"])

        // Another context moves Cy to Oslo: Ann's cached result does not change...
        let other = stack.context()
        try person("Cy", in: other).setValue("Oslo", forKey: "city")
        try other.save()
        #expect(try names(ann.value(forKey: "neighbours")) == ["Bo", "Di"])
        // ...until Ann is refreshed.
        context.refresh(ann, mergeChanges: true)
        #expect(try names(ann.value(forKey: "neighbours")) == ["Bo", "Cy", "Di"])
        context.refresh(ann, mergeChanges: false)
        #expect(try names(ann.value(forKey: "neighbours")) == ["Bo", "Cy", "Di"])
    }

    @Test func builtInCodeAndNamedThroughFetchedProperty() throws {
        let byName = FetchedPropertyDescription(name: "sameName", entityName: "Tag",
                                                predicate: try QueryPredicate(format: "label == $FETCHED_PROPERTY.name"))
        let model = try ManagedObjectModel {
            EntityDescription("Tag") {
                Attribute("label", .string)
                byName
            }
        }
        #expect(model.entitiesByName["Tag"]?.allProperties.map(\.name) == ["label"])
        let stack = try TestStack(model: model)
        let context = stack.context()
        for label in ["sameName", "other", "sameName"] {
            try context.insertNewObject(forEntityName: "Tag").setValue(label, forKey: "label")
        }
        try context.save()
        let reader = stack.context()
        let tag = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).first)
        #expect((try tag.value(forKey: "sameName") as? [ManagedObject])?.count == 2)
        #expect(throws: ObjectGraphError.self) { try tag.setValue([], forKey: "sameName") }
    }

    @Test func badFetchedPropertiesAreRefusedAtLoad() throws {
        let unknownEntity = InteropFixtures.modelXML("""
        <entity name="A"><attribute name="x" optional="YES" attributeType="String"/>
            <fetchedProperty name="f" optional="YES"><fetchRequest name="r" entity="Nope" predicateString="x == 1"/></fetchedProperty>
        </entity>
        """)
        #expect(throws: ModelError.invalidFetchedProperty(
            entity: "A", property: "f", reason: "it fetches entity 'Nope', which the model does not have")) {
            try ManagedObjectModel(xmlData: unknownEntity, source: "unknown entity")
        }
        let badPredicate = InteropFixtures.modelXML("""
        <entity name="A"><attribute name="x" optional="YES" attributeType="String"/>
            <fetchedProperty name="f" optional="YES"><fetchRequest name="r" entity="A" predicateString="x =="/></fetchedProperty>
        </entity>
        """)
        do {
            _ = try ManagedObjectModel(xmlData: badPredicate, source: "bad predicate")
            Issue.record("a predicate that does not parse must be refused")
        } catch ModelError.invalidFetchedProperty(let entity, let property, _) {
            #expect(entity == "A" && property == "f")
        }
        let clash = InteropFixtures.modelXML("""
        <entity name="A"><attribute name="x" optional="YES" attributeType="String"/>
            <fetchedProperty name="x" optional="YES"><fetchRequest name="r" entity="A"/></fetchedProperty>
        </entity>
        """)
        #expect(throws: ModelError.duplicateProperty(entity: "A", property: "x")) {
            try ManagedObjectModel(xmlData: clash, source: "clash")
        }
    }
}
