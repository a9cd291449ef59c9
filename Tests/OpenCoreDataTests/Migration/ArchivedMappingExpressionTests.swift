import Foundation
import Testing
@testable import OpenCoreData

/// Value expressions archived into a mapping model (`valueexpressiondata`): the archives are written here
/// with the keys and classes `NSExpression`'s coder uses (no archive made by Xcode is at hand), read back
/// as expression text, and run through the `Garage1to2` fixture, which must then migrate exactly as with
/// its written expressions.
@Suite struct ArchivedMappingExpressionTests {
    typealias Instance = KeyedArchiveWriter.Instance
    typealias Garage = MappingModelMigrationTests

    /// `NSExpression` subclasses as their coder writes them.
    enum Archived {
        static func constant(_ value: Any) -> Instance {
            Instance(classNames: ["NSConstantValueExpression", "NSExpression"], fields: ["NSConstantValue": value], integers: ["NSExpressionType": 0])
        }
        static var evaluatedObject: Instance {
            Instance(classNames: ["NSSelfExpression", "NSExpression"], fields: [:], integers: ["NSExpressionType": 1])
        }
        static func variable(_ name: String) -> Instance {
            Instance(classNames: ["NSVariableExpression", "NSExpression"], fields: ["NSVariable": name], integers: ["NSExpressionType": 2])
        }
        static func keyPath(_ path: String, of operand: Instance = evaluatedObject) -> Instance {
            let specifier = Instance(classNames: ["NSKeyPathSpecifierExpression", "NSExpression"], fields: ["NSKeyPath": path], integers: ["NSExpressionType": 10])
            return Instance(classNames: ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression"],
                            fields: ["NSOperand": operand, "NSSelectorName": "valueForKeyPath:", "NSArguments": [specifier]], integers: ["NSExpressionType": 3])
        }
        static func function(_ operand: Instance?, _ selector: String, _ arguments: [Instance]) -> Instance {
            var fields: [String: Any] = ["NSSelectorName": selector, "NSArguments": arguments]
            if let operand { fields["NSOperand"] = operand }
            return Instance(classNames: ["NSFunctionExpression", "NSExpression"], fields: fields, integers: ["NSExpressionType": 4])
        }
        /// A built-in function: its operand is a constant (the class holding the functions).
        static func builtIn(_ selector: String, _ arguments: [Instance]) -> Instance {
            function(constant("_NSPredicateUtilities"), selector, arguments)
        }
        /// A source expression as Core Data's coder writes an `NSFetchRequestExpression` (`NSFRExpression`,
        /// `NSMOCExpression`, `NSCountOnlyFlag`): `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", entity, predicate), $manager.sourceContext, NO)`.
        static func fetch(_ entity: String, _ predicate: String, selector: String = MappingSourceFetch.fetchRequestSelector,
                          context: Instance? = Archived.keyPath("sourceContext", of: Archived.variable("manager")), countOnly: Bool = false) -> Instance {
            let request = function(variable("manager"), selector, [constant(entity), constant(predicate)])
            var fields: [String: Any] = ["NSFRExpression": request]
            if let context { fields["NSMOCExpression"] = context }
            return Instance(classNames: ["NSFetchRequestExpression", "NSExpression"], fields: fields,
                            integers: ["NSExpressionType": 50], booleans: ["NSCountOnlyFlag": countOnly])
        }
        static func base64(_ expression: Instance) throws -> String {
            try KeyedArchiveWriter.archive(expression).base64EncodedString()
        }
    }

    /// Computed: archive instances hold `Any`, so they are not `Sendable` statics.
    static var cases: [(Instance, String)] { [
        (Archived.keyPath("price", of: Archived.variable("source")), "$source.price"),
        (Archived.keyPath("owner.name", of: Archived.variable("source")), "$source.owner.name"),
        (Archived.keyPath("name", of: Archived.keyPath("owner", of: Archived.variable("source"))), "$source.owner.name"),
        (Archived.keyPath("plate"), "plate"),
        (Archived.constant("Fiat \"500\""), #""Fiat \"500\"""#),
        (Archived.constant(42), "42"),
        (Archived.constant(2.5), "2.5"),
        (Archived.constant(true), "YES"),
        (Archived.builtIn("multiply:by:", [Archived.keyPath("price", of: Archived.variable("source")), Archived.constant(100)]),
         "$source.price * 100"),
        (Archived.function(Archived.keyPath("make", of: Archived.variable("source")), "uppercaseString", []),
         #"FUNCTION($source.make, "uppercaseString")"#),
        (Archived.function(Archived.variable("source"), "valueForKey:", [Archived.constant("model")]), "$source.model"),
        (Archived.function(Archived.variable("entityPolicy"), "centsFromDollars:", [Archived.keyPath("price", of: Archived.variable("source"))]),
         #"FUNCTION($entityPolicy, "centsFromDollars:", $source.price)"#),
        (Archived.function(Archived.variable("manager"), MappingExpression.destinationInstancesSelector,
                           [Archived.constant("CarToVehicle"), Archived.keyPath("cars", of: Archived.variable("source"))]),
         #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "CarToVehicle", $source.cars)"#),
    ] }

    @Test(arguments: 0..<13)
    func anArchivedExpressionReadsAsTheExpressionWritten(index: Int) throws {
        let (archived, written) = Self.cases[index]
        let text = try ArchivedMappingExpression.format(ofBase64: try Archived.base64(archived))
        #expect(try MappingExpression(format: text) == MappingExpression(format: written), "read as \(text)")
    }

    /// The fixture with the written expressions of `replacements` (text → archive) archived instead.
    static func archivedFixture(_ replacements: [(String, Instance)]) throws -> MappingModel {
        var text = try MappingModelLoaderTests.fixtureXML()
        for (written, archived) in replacements {
            let line = #"<attribute name="valueexpressionstring" type="string">\#(written)</attribute>"#
            #expect(text.contains(line), "the fixture writes \(written)")
            text = text.replacingOccurrences(
                of: line, with: #"<attribute name="valueexpressiondata" type="binary">\#(try Archived.base64(archived))</attribute>"#)
        }
        return try MappingModelXML.read(Data(text.utf8), path: "archived.xml")
    }

    @Test func aMappingModelWithArchivedExpressionsMigratesAsWithWrittenOnes() throws {
        let source = Archived.variable("source")
        let mapping = try Self.archivedFixture([
            ("$source.price * 100", Archived.builtIn("multiply:by:", [Archived.keyPath("price", of: source), Archived.constant(100)])),
            (#"FUNCTION($source.make, "uppercaseString")"#, Archived.function(Archived.keyPath("make", of: source), "uppercaseString", [])),
            (#"FUNCTION($source, "valueForKey:", "model")"#, Archived.function(source, "valueForKey:", [Archived.constant("model")])),
            ("$source.owner.name", Archived.keyPath("owner.name", of: source)),
            (#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "CarToVehicle", $source.cars)"#,
             Archived.function(Archived.variable("manager"), MappingExpression.destinationInstancesSelector,
                               [Archived.constant("CarToVehicle"), Archived.keyPath("cars", of: source)])),
        ])
        #expect(mapping == (try Garage.mapping()))

        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let data = Garage.garageData(seed: 8)
        let store = try Garage.oldStore("old.sqlite", in: directory, with: data)
        let migrated = directory.file("migrated.sqlite")
        try MappingModelMigration.migrate(storeAt: store, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
        try Garage.expectHoldsWhatTheMappingGives(migrated, from: data, model: new, in: directory)
    }

    @Test func otherArchivedExpressionsAreRefusedByName() throws {
        let subquery = Instance(classNames: ["NSSubqueryExpression", "NSExpression"], fields: [:], integers: ["NSExpressionType": 13])
        let refusals: [(Instance, String)] = [
            (subquery, "NSSubqueryExpression"),
            (Archived.builtIn("multiply:by:", [subquery, Archived.constant(1)]), "NSSubqueryExpression"),
            (Archived.constant(Date(timeIntervalSinceReferenceDate: 0)), "NSDate"),
            (Archived.builtIn("bitwiseXor:with:", [Archived.constant(1), Archived.constant(2)]), "bitwiseXor:with:"),
            (Archived.variable("not a name"), "NSVariable"),
        ]
        for (archived, culprit) in refusals {
            #expect {
                try Self.archivedFixture([("$source.price * 100", archived)])
            } throws: { error in
                guard case MigrationError.unsupportedMapping("CarToVehicle", let reason)? = error as? MigrationError else { return false }
                return reason.contains("priceInCents") && reason.contains(culprit)
            }
        }
        // Not an archive at all.
        let text = try MappingModelLoaderTests.fixtureXML().replacingOccurrences(
            of: #"<attribute name="valueexpressionstring" type="string">$source.price * 100</attribute>"#,
            with: #"<attribute name="valueexpressiondata" type="binary">bm90IGFuIGFyY2hpdmU=</attribute>"#)
        #expect {
            try MappingModelXML.read(Data(text.utf8), path: "garbage.xml")
        } throws: { error in
            guard case MigrationError.unsupportedMapping("CarToVehicle", let reason)? = error as? MigrationError else { return false }
            return reason.contains("priceInCents") && reason.contains("archive")
        }
    }

    /// The `CarToVehicle` mapping of the fixture with its filter (`sourcefilterpredicatestring`, from which
    /// Xcode generates the source expression) replaced by the archived source expression `archived`.
    static func fixtureWithArchivedSource(_ archived: Instance) throws -> MappingModel {
        try MappingModelLoaderTests.load(
            replacing: #"""
                <attribute name="sourcefilterpredicatestring" type="string">scrapped == NO</attribute>
                        <attribute name="autogenerateexpression" type="bool">1</attribute>
                """#,
            with: #"<attribute name="sourceexpressiondata" type="binary">\#(try Archived.base64(archived))</attribute>"#)
    }

    @Test func anArchivedSourceExpressionReadsAsTheFetchItArchives() throws {
        let text = try ArchivedMappingExpression.sourceFetchFormat(ofBase64: try Archived.base64(Archived.fetch("Car", "year > 2000")))
        #expect(text == #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "year > 2000"), $manager.sourceContext, NO)"#)
        #expect(try MappingSourceFetch(format: text) == MappingSourceFetch(entityName: "Car", predicate: try QueryPredicate(format: "year > 2000")))
        let all = try ArchivedMappingExpression.sourceFetchFormat(ofBase64: try Archived.base64(Archived.fetch("Car", "TRUEPREDICATE")))
        #expect(try MappingSourceFetch(format: all) == MappingSourceFetch(entityName: "Car"))
    }

    /// The archived fetch filters as the written filter does: scrapped cars are left out, the others made.
    @Test func aMappingModelWithAnArchivedSourceExpressionFiltersByItsPredicate() throws {
        let mapping = try Self.fixtureWithArchivedSource(Archived.fetch("Car", "scrapped == NO"))
        #expect(mapping == (try Garage.mapping()))

        // Data with cars on both sides of the filter.
        let data = try #require((1...64 as ClosedRange<UInt64>).lazy.map(Garage.garageData).first { data in
            let cars = data.filter { $0.entity == "Car" }
            return cars.contains { $0.values["scrapped"] as? Bool == true } && cars.contains { $0.values["scrapped"] as? Bool != true }
        })
        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let store = try Garage.oldStore("old.sqlite", in: directory, with: data)
        let migrated = directory.file("migrated.sqlite")
        try MappingModelMigration.migrate(storeAt: store, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
        try Garage.expectHoldsWhatTheMappingGives(migrated, from: data, model: new, in: directory)
    }

    @Test func otherArchivedSourceExpressionsAreRefusedByName() throws {
        let refusals: [(Instance, String)] = [
            (Archived.function(Archived.variable("manager"), MappingSourceFetch.fetchRequestSelector,
                               [Archived.constant("Car"), Archived.constant("TRUEPREDICATE")]), "NSFunctionExpression"),
            (Archived.fetch("Car", "TRUEPREDICATE", countOnly: true), "counts only"),
            (Archived.fetch("Car", "TRUEPREDICATE", context: Archived.keyPath("destinationContext", of: Archived.variable("manager"))),
             "$manager.destinationContext"),
            (Archived.fetch("Car", "TRUEPREDICATE", context: nil), "NSMOCExpression"),
            (Archived.fetch("Car", "TRUEPREDICATE", selector: "fetchRequestForDestinationEntityNamed:predicateString:"),
             "is not a fetch through"),
            (Instance(classNames: ["NSSubqueryExpression", "NSExpression"], fields: [:]), "NSSubqueryExpression"),
        ]
        for (archived, culprit) in refusals {
            #expect {
                try Self.fixtureWithArchivedSource(archived)
            } throws: { error in
                guard case MigrationError.unsupportedMapping("CarToVehicle", let reason)? = error as? MigrationError else { return false }
                return reason.contains(culprit)
            }
        }
        // A fetch is a source expression only: as a value expression it is refused.
        #expect {
            try Self.archivedFixture([("$source.price * 100", Archived.fetch("Car", "TRUEPREDICATE"))])
        } throws: { error in
            guard case MigrationError.unsupportedMapping("CarToVehicle", let reason)? = error as? MigrationError else { return false }
            return reason.contains("priceInCents") && reason.contains("NSFetchRequestExpression")
        }
    }
}
