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
}
