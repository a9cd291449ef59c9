import Foundation
import Testing
@testable import OpenCoreData

/// Composite attributes in the model: read from Xcode's XML, written back, hashed, checked, laid out.
@Suite struct CompositeAttributeTests {
    /// A quake with a composite `magnitude` (a nested composite `source` inside) and a plain attribute whose
    /// column could clash with an element's.
    static let xml = InteropFixtures.modelXML("""
        <entity name="Quake" representedClassName="Quake">
            <attribute name="code" optional="YES" attributeType="String"/>
            <attribute name="magnitude" optional="YES" attributeType="Composite" composite="Magnitude"/>
            <attribute name="magnitude_richter" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
        </entity>
        <composite name="Magnitude">
            <attribute name="richter" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
            <attribute name="scale" optional="YES" attributeType="String" defaultValueString="ML"/>
            <attribute name="source" optional="YES" attributeType="Composite" composite="Source"/>
        </composite>
        <composite name="Source">
            <attribute name="agency" attributeType="String"/>
            <attribute name="reviewed" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
        </composite>
        """)

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(xmlData: xml, source: "composite")
    }

    @Test func modelFileCompositeLoadsWithItsElements() throws {
        let quake = try #require(try Self.model().entitiesByName["Quake"])
        let magnitude = try #require(quake.attributesByName["magnitude"] as? CompositeAttributeDescription)
        #expect(magnitude.attributeType == .composite)
        #expect(magnitude.compositeTypeName == "Magnitude")
        #expect(magnitude.elements.map(\.name) == ["richter", "scale", "source"])
        #expect(magnitude.elements.map(\.attributeType) == [.double, .string, .composite])
        #expect(magnitude.elements.map(\.isOptional) == [false, true, true])
        #expect(magnitude.elements[0].defaultValue as? Double == 0)
        #expect(magnitude.elements[1].defaultValue as? String == "ML")
        let source = try #require(magnitude.elements[2] as? CompositeAttributeDescription)
        #expect(source.elements.map(\.name) == ["agency", "reviewed"])
        // Each leaf element has a slot of its own, named by its key path.
        for key in ["magnitude.richter", "magnitude.scale", "magnitude.source.agency", "magnitude.source.reviewed"] {
            #expect(quake.slotByName[key] != nil, "\(key)")
        }
    }

    @Test func eachElementHasAColumnNamedByItsPath() throws {
        let model = try Self.model()
        let table = try #require(model.schema.table(named: "ZQUAKE"))
        let names = table.columns.map(\.name)
        #expect(names == ["Z_PK", "Z_ENT", "Z_OPT", "ZCODE", "ZMAGNITUDE_RICHTER", "ZMAGNITUDE_SCALE",
                          "ZMAGNITUDE_SOURCE_AGENCY", "ZMAGNITUDE_SOURCE_REVIEWED", "ZMAGNITUDE_RICHTER1"])
        #expect(table.columns.map(\.sqlType) == ["INTEGER PRIMARY KEY", "INTEGER", "INTEGER", "VARCHAR", "FLOAT",
                                                 "VARCHAR", "VARCHAR", "INTEGER", "INTEGER"])
    }

    @Test func writtenModelFileReadsBackTheSame() throws {
        let model = try Self.model()
        let text = String(decoding: model.xcodeModelXML(), as: UTF8.self)
        #expect(text.contains(#"attributeType="Composite" composite="Magnitude""#))
        #expect(text.contains(#"<composite name="Magnitude">"#))
        #expect(text.contains(#"<composite name="Source">"#))
        let reread = try ManagedObjectModel(xmlData: model.xcodeModelXML(), source: "rewritten")
        #expect(reread.entityVersionHashesByName == model.entityVersionHashesByName)
        let magnitude = try #require(reread.entitiesByName["Quake"]?.attributesByName["magnitude"] as? CompositeAttributeDescription)
        #expect(magnitude.elements.map(\.name) == ["richter", "scale", "source"])
    }

    @Test func compositeBuiltInCodeIsWrittenWithATypeName() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Place", properties: [
            CompositeAttributeDescription(name: "location", elements: [
                AttributeDescription(name: "latitude", type: .double, isOptional: false),
                AttributeDescription(name: "longitude", type: .double, isOptional: false),
            ]),
        ])])
        let text = String(decoding: model.xcodeModelXML(), as: UTF8.self)
        #expect(text.contains(#"composite="Location""#))
        #expect(text.contains(#"<composite name="Location">"#))
        let reread = try ManagedObjectModel(xmlData: model.xcodeModelXML(), source: "rewritten")
        #expect(reread.entityVersionHashesByName == model.entityVersionHashesByName)
    }

    @Test func plainAttributeOfCompositeTypeIsRefused() {
        #expect(throws: ModelError.self) {
            try ManagedObjectModel(entities: [EntityDescription(name: "Place", properties: [
                AttributeDescription(name: "location", type: .composite),
            ])])
        }
    }

    @Test func versionHashFollowsTheElements() throws {
        func hash(_ elements: [AttributeDescription]) throws -> Data {
            let model = try ManagedObjectModel(entities: [EntityDescription(name: "Place", properties: [
                CompositeAttributeDescription(name: "location", elements: elements),
            ])])
            return try #require(model.entityVersionHashesByName["Place"])
        }
        let base = try hash([AttributeDescription(name: "latitude", type: .double)])
        #expect(try hash([AttributeDescription(name: "latitude", type: .double)]) == base)
        #expect(try hash([AttributeDescription(name: "latitude", type: .float)]) != base)
        #expect(try hash([AttributeDescription(name: "lat", type: .double)]) != base)
        #expect(try hash([AttributeDescription(name: "latitude", type: .double),
                          AttributeDescription(name: "longitude", type: .double)]) != base)
    }

    @Test(arguments: [
        ("<attribute name=\"m\" optional=\"YES\" attributeType=\"Composite\" composite=\"Nope\"/>", "", "Nope"),
        ("<attribute name=\"m\" optional=\"YES\" attributeType=\"Composite\" composite=\"C\"/>",
         "<composite name=\"C\"/>", "no elements"),
        ("<attribute name=\"m\" optional=\"YES\" attributeType=\"Composite\" composite=\"C\"/>",
         "<composite name=\"C\"><attribute name=\"t\" attributeType=\"Transformable\"/></composite>", "m.t"),
        ("<attribute name=\"m\" optional=\"YES\" attributeType=\"Composite\" composite=\"C\"/>",
         "<composite name=\"C\"><attribute name=\"x\" attributeType=\"String\"/><attribute name=\"x\" attributeType=\"Double\"/></composite>",
         "declared twice"),
        ("<attribute name=\"m\" optional=\"YES\" attributeType=\"Composite\" composite=\"C\"/>",
         "<composite name=\"C\"><attribute name=\"c\" attributeType=\"Composite\" composite=\"C\"/></composite>",
         "contains itself"),
    ])
    func badCompositeIsRefusedNamingEntityAndAttribute(attribute: String, composites: String, detail: String) {
        let xml = InteropFixtures.modelXML("""
            <entity name="Quake">\(attribute)</entity>
            \(composites)
            """)
        do {
            _ = try ManagedObjectModel(xmlData: xml, source: "bad")
            Issue.record("the model loaded")
        } catch let ModelError.invalidComposite(entity, attribute, reason) {
            #expect(entity == "Quake")
            #expect(attribute == "m")
            #expect(reason.contains(detail), "\(reason)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
