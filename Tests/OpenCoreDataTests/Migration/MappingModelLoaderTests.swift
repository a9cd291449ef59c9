import Foundation
import Testing
@testable import OpenCoreData

/// Reading Xcode's `xcmapping.xml`: the fixture's mappings as written, and hostile files refused with
/// typed errors naming the culprit.
@Suite struct MappingModelLoaderTests {
    static func fixtureXML() throws -> String {
        try String(contentsOf: InteropFixtures.url("Garage1to2.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
    }

    /// The fixture's text with `original` replaced by `replacement` (which must occur), read back.
    static func load(replacing original: String, with replacement: String) throws -> MappingModel {
        let text = try fixtureXML()
        #expect(text.contains(original), "the fixture no longer holds \(original)")
        return try MappingModelXML.read(Data(text.replacingOccurrences(of: original, with: replacement).utf8), path: "test.xml")
    }

    /// A mapping model of 20,000 attribute mappings of one name loads: nothing in reading it compares every
    /// mapping with every other (a quadratic read would keep this test from ending).
    @Test func manyMappingsLoadInTimeLinearInThem() throws {
        let count = 20_000
        let sameName = (0..<count).map { index in
            """
                <object type="XDDEVATTRIBUTEMAPPING" id="a\(index)">
                    <attribute name="name" type="string">name</attribute>
                    <attribute name="valueexpressionstring" type="string">$source.name</attribute>
                    <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z103"></relationship>
                </object>
            """
        }.joined(separator: "\n")
        let ids = (0..<count).map { "a\($0)" }.joined(separator: " ")
        let text = try Self.fixtureXML()
            .replacingOccurrences(of: #"destination="XDDEVATTRIBUTEMAPPING" idrefs="z104""#,
                                  with: #"destination="XDDEVATTRIBUTEMAPPING" idrefs=""# + ids + #"""#)
            .replacingOccurrences(of: "</database>", with: sameName + "\n</database>")
        let model = try MappingModelXML.read(Data(text.utf8), path: "test.xml")
        #expect(model.entityMappings.first { $0.name == "OwnerToPerson" }?.attributeMappings.count == count)
    }

    @Test func theFixtureReadsAsWritten() throws {
        let mapping = try MappingModel(contentsOf: InteropFixtures.url("Garage1to2.xcmappingmodel"))
        #expect(mapping.sourceModelVersionName == "Garage")
        #expect(mapping.destinationModelVersionName == "Garage 2")
        #expect(mapping.entityMappings.map(\.name) == ["OwnerToPerson", "CarToVehicle", "BrandToBrand", "NoteToNone", "Garage"])
        #expect(mapping.entityMappings.map(\.mappingType) == [.transform, .transform, .copy, .remove, .add])
        let car = try #require(mapping.entityMapping(named: "CarToVehicle"))
        #expect(car.sourceEntityName == "Car")
        #expect(car.destinationEntityName == "Vehicle")
        #expect(car.sourceExpression == MappingSourceFetch(entityName: "Car", predicate: try QueryPredicate(format: "scrapped == NO")))
        #expect(car.entityMigrationPolicyClassName == nil)
        let values = Dictionary(uniqueKeysWithValues: car.attributeMappings.map { ($0.name, $0.valueExpression) })
        #expect(values["priceInCents"] == .value(try QueryExpression(format: "$source.price * 100")))
        #expect(values["year"] == .value(try QueryExpression(format: "$source.year")))
        #expect(values["model"] == .value(try QueryExpression(format: "$source.model")))
        #expect(values["title"] == .value(try QueryExpression(format: "uppercase:($source.make)")))
        var driver = PropertyMapping(
            name: "driver", valueExpression: .destinationInstances(entityMappingName: "OwnerToPerson",
                                                                   sourceInstances: try QueryExpression(format: "$source.owner")))
        // Generated from `sourcemappingname` and `sourcekeypath`: used where the source has `owner`.
        driver.isGenerated = true
        #expect(car.relationshipMappings == [driver])
        #expect(mapping.entityMapping(named: "NoteToNone")?.sourceExpression == nil)
    }

    @Test func expressionsReadBackFromTheirFormat() throws {
        for text in ["$source.price * 100", "$source.owner.name",
                     #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "A", $source.cars)"#,
                     #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#] {
            let expression = try MappingExpression(format: text)
            #expect(try MappingExpression(format: expression.format) == expression)
        }
        let fetch = try MappingSourceFetch(format:
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "year > 2000"), $manager.sourceContext, NO)"#)
        #expect(fetch == MappingSourceFetch(entityName: "Car", predicate: try QueryPredicate(format: "year > 2000")))
        #expect(try MappingSourceFetch(format:
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"), $manager.sourceContext, NO)"#).predicate == nil)
    }

    @Test func managerFunctionsOtherThanTheSupportedOnesAreRefusedByName() throws {
        #expect(throws: MigrationError.unsupportedMapping(
            entityMapping: "CarToVehicle", reason: "the migration manager function 'sourceInstancesForEntityMappingNamed:destinationInstances:' is not supported")) {
            try Self.load(replacing: "$source.price * 100",
                          with: #"FUNCTION($manager, "sourceInstancesForEntityMappingNamed:destinationInstances:", "A", $source)"#)
        }
        #expect(throws: MigrationError.self) {
            try Self.load(replacing: "$source.price * 100", with: "$manager.sourceModel")
        }
        // Archived expressions are read (ArchivedMappingExpressionTests); a damaged archive is refused by name.
        #expect(throws: MigrationError.unsupportedMapping(
            entityMapping: "CarToVehicle",
            reason: "the archived value expression of 'priceInCents' (valueexpressiondata) is not read: the archive cannot be read: not a readable binary property list: not a binary property list")) {
            try Self.load(replacing: #"<attribute name="valueexpressionstring" type="string">$source.price * 100</attribute>"#,
                          with: #"<attribute name="valueexpressiondata" type="binary">YnBsaXN0MDA=</attribute>"#)
        }
    }

    @Test func hostileFilesAreRefusedWithTypedErrors() throws {
        func reason(_ original: String, _ replacement: String) -> String? {
            do {
                _ = try Self.load(replacing: original, with: replacement)
                return nil
            } catch MigrationError.invalidMappingModel(_, let reason) {
                return reason
            } catch {
                return "unexpected \(error)"
            }
        }
        #expect(reason(#"idrefs="z111 z112"#, #"idrefs="z111 z999"#)
                == "XDDEVENTITYMAPPING 'z110' refers in 'attributemappings' to 'z999', which is no object of the file")
        #expect(reason(#"idrefs="z103 z110"#, #"idrefs="z104 z110"#)
                == "XDDEVMAPPINGMODEL 'z101' refers in 'entitymappings' to 'z104', a XDDEVATTRIBUTEMAPPING, not a XDDEVENTITYMAPPING")
        #expect(reason(#"id="z104""#, #"id="z105""#)?.hasPrefix("two objects have the id 'z105'") == true)
        #expect(reason(#"<object type="XDDEVMAPPINGMODEL" id="z101">"#, #"<object type="XDDEVNOTHING" id="z101">"#)
                == "no object of type XDDEVMAPPINGMODEL")
        #expect(reason(#"<attribute name="mappingnumber" type="int16">2</attribute>"#,
                       #"<attribute name="mappingnumber" type="int16">two</attribute>"#)
                == "XDDEVENTITYMAPPING 'z110' has the mappingnumber 'two', which is not a number")
        #expect(reason(#"<attribute name="mappingtypename" type="string">Copy</attribute>"#,
                       #"<attribute name="mappingtypename" type="string">Clone</attribute>"#)
                == "entity mapping 'BrandToBrand' has the mapping type 'Clone', which Core Data does not have")
        #expect(reason(#"<attribute name="name" type="string">title</attribute>"#, "")?.contains("has no name") == true)
        #expect(reason("$source.price * 100", "$source.price * ")?.hasPrefix("entity mapping 'CarToVehicle', 'priceInCents': ") == true)
        #expect(reason("scrapped == NO", "scrapped ==")?.hasPrefix("entity mapping 'CarToVehicle', source filter: ") == true)
        #expect(reason("<database>", "<datbase>")?.contains("invalid XML") == true)
        #expect(reason(#"<attribute name="sourcename" type="string">Note</attribute>"#, "")?.contains("names neither a source nor a destination entity") == true)
        #expect(throws: MigrationError.invalidMappingModel(path: "/nonexistent/x.xcmappingmodel/xcmapping.xml", reason: "the file cannot be read")) {
            try MappingModel(contentsOf: URL(fileURLWithPath: "/nonexistent/x.xcmappingmodel/xcmapping.xml"))
        }
    }

    /// Each attribute and relationship of an entity or property mapping is either honoured (docs/MIGRATION.md
    /// lists how) or refused by name: nothing the file holds is skipped.
    @Test func whatAMappingHoldsIsReadOrRefusedByName() throws {
        let carSource = #"<attribute name="sourcename" type="string">Car</attribute>"#
        let price = #"<attribute name="valueexpressionstring" type="string">$source.price * 100</attribute>"#
        let year = #"<attribute name="name" type="string">year</attribute>"#
        func refusal(_ original: String, adding extra: String) -> MigrationError? {
            do {
                _ = try Self.load(replacing: original, with: original + extra)
                return nil
            } catch let error as MigrationError {
                return error
            } catch {
                Issue.record("unexpected \(error)")
                return nil
            }
        }
        #expect(refusal(carSource, adding: #"<attribute name="userinfo" type="binary">AAAA</attribute>"#)
                == .unsupportedMapping(entityMapping: "CarToVehicle", reason: "the attribute 'userinfo' of the entity mapping is not read"))
        #expect(refusal(carSource, adding: #"<relationship name="sourceentity" type="1/1" idrefs="z101"></relationship>"#)
                == .unsupportedMapping(entityMapping: "CarToVehicle", reason: "the relationship 'sourceentity' of the entity mapping is not read"))
        #expect(refusal(price, adding: #"<attribute name="comment" type="string">cents</attribute>"#)
                == .unsupportedMapping(entityMapping: "CarToVehicle", reason: "the attribute 'comment' of the attribute mapping 'priceInCents' is not read"))
        #expect(refusal(year, adding: #"<attribute name="sourcemappingname" type="string">OwnerToPerson</attribute>"#)
                == .unsupportedMapping(entityMapping: "CarToVehicle",
                                       reason: "the attribute mapping 'year' names the entity mapping 'OwnerToPerson' (sourcemappingname), which only a relationship mapping can"))
        // Empty, they carry nothing.
        #expect(refusal(carSource, adding: #"<attribute name="userinfo" type="binary"></attribute>"#) == nil)
        #expect(refusal(carSource, adding: #"<relationship name="sourceentity" type="1/1" idrefs=""></relationship>"#) == nil)

        guard case .invalidMappingModel(_, let element)? = refusal(carSource, adding: "<fetchedproperty name=\"x\"/>") else {
            Issue.record("an element other than attribute or relationship was read")
            return
        }
        #expect(element.hasPrefix("the object 'z110' holds a <fetchedproperty>"))
        guard case .invalidMappingModel(_, let twice)? = refusal(carSource, adding: carSource) else {
            Issue.record("an attribute given twice was read")
            return
        }
        #expect(twice.hasPrefix("the object 'z110' holds 'sourcename' twice"))
    }

    /// Damaged copies of the fixture either read or fail with a ``MigrationError``: never a crash or a hang.
    @Test func damagedFilesNeverCrash() throws {
        let original = Data(try Self.fixtureXML().utf8)
        var generator = InteropFixtures.SeededGenerator(seed: 22)
        for round in 0..<300 {
            let damaged = InteropFixtures.damaged(original, round: round, using: &generator)
            do {
                _ = try MappingModelXML.read(damaged, path: "damaged.xml")
            } catch is MigrationError {
            } catch {
                Issue.record("round \(round): \(error)")
            }
        }
    }
}
