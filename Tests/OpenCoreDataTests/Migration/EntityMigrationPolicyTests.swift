import Foundation
import Testing
@testable import OpenCoreData

/// Custom entity migration policies (Core Data's `NSEntityMigrationPolicy`) run by the `Garage1to2` mapping
/// model: their steps in Core Data's order, functions called through `$entityPolicy`, custom mappings made
/// by policy code, and the refusals. Each migrated store is compared, object by object, with a fresh
/// "Garage 2" store filled with what the policy should have made.
///
/// Every test registers its own policy class names: the registry is process-wide and tests run in parallel.
@Suite struct EntityMigrationPolicyTests {
    typealias Object = MigrationFixtures.Object
    typealias Garage = MappingModelMigrationTests

    /// What the test policies throw.
    struct PolicyError: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// What a policy saw, in order, kept per test by the class that records it.
    final class StepLog: @unchecked Sendable {
        // @unchecked Sendable: `steps` is read and written under `lock` only.
        private let lock = NSLock()
        private var steps: [String] = []
        func append(_ step: String) { lock.withLock { steps.append(step) } }
        var all: [String] { lock.withLock { steps } }
    }

    /// Calls `super` for every step, logs each, and gives each vehicle's title the plate it came from.
    final class TitleWithPlatePolicy: EntityMigrationPolicy {
        static let log = StepLog()

        override func begin(_ mapping: EntityMapping, with manager: MigrationManager) throws {
            Self.log.append("begin \(mapping.name)")
        }

        override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
                                                 manager: MigrationManager) throws {
            Self.log.append("create")
            try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
            let made = try manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [source])
            guard made.count == 1, let vehicle = made.first else { throw PolicyError(reason: "not what the mapping should have made") }
            let title = try vehicle.value(forKey: "title") as? String ?? ""
            try vehicle.setValue("\(title) \(try source.value(forKey: "plate") as? String ?? "")", forKey: "title")
        }

        override func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("endInstanceCreation")
        }

        override func createRelationships(forDestination destination: ManagedObject, in mapping: EntityMapping,
                                          manager: MigrationManager) throws {
            Self.log.append("relationships")
            try super.createRelationships(forDestination: destination, in: mapping, manager: manager)
            // The source a destination object was made from is found back.
            let sources = try manager.sourceInstances(forEntityMappingName: mapping.name, destinationInstances: [destination])
            guard try sources.first?.value(forKey: "plate") as? String == destination.value(forKey: "registration") as? String else {
                throw PolicyError(reason: "not what the mapping should have made")
            }
        }

        override func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("endRelationshipCreation")
        }

        override func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("performCustomValidation")
        }

        override func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
            Self.log.append("end \(mapping.name)")
        }
    }

    @Test func aRegisteredPolicyRunsEachStepInCoreDataOrder() throws {
        // The fixture names `GarageCarMigrationPolicy` for CarToVehicle; no other test registers that name.
        MigrationManager.register(policy: TitleWithPlatePolicy.self, forClassName: "GarageCarMigrationPolicy")
        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let data = Garage.garageData(seed: 4)
        let source = try Garage.oldStore("old.sqlite", in: directory, with: data)
        let mapping = try MappingModel(contentsOf: InteropFixtures.url("UnsupportedMappings/GarageCustomPolicy.xcmappingmodel"))
        let migrated = directory.file("migrated.sqlite")
        try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new,
                                          mapping: mapping, into: migrated, batchSize: 2)

        var expected = Garage.garage2Data(from: data)
        for index in expected.indices where expected[index].entity == "Vehicle" {
            expected[index].values["title"] = "\(expected[index].values["title"] as! String) \(expected[index].key)"
        }
        try expectHolds(migrated, expected, in: directory)
        let cars = expected.filter { $0.entity == "Vehicle" }.count
        #expect(cars > 1)
        #expect(TitleWithPlatePolicy.log.all == ["begin CarToVehicle"] + Array(repeating: "create", count: cars)
            + ["endInstanceCreation"] + Array(repeating: "relationships", count: cars)
            + ["endRelationshipCreation", "performCustomValidation", "end CarToVehicle"])
    }

    /// Answers `centsFromDollars:` as the fixture's `$source.price * 100` does, refusing what is not whole cents.
    final class CentsPolicy: EntityMigrationPolicy {
        override func callFunction(_ selector: String, arguments: [Any?], manager: MigrationManager) throws -> Any? {
            guard selector == "centsFromDollars:" else {
                return try super.callFunction(selector, arguments: arguments, manager: manager)
            }
            let dollars: Double
            switch arguments.first ?? nil {
            case let value as Float: dollars = Double(value)
            case let value as Double: dollars = value
            case let value as NSNumber: dollars = value.doubleValue
            default: dollars = 0
            }
            guard (dollars * 100).rounded() == dollars * 100 else { throw PolicyError(reason: "not a whole number of cents") }
            return Int64(dollars * 100)
        }
    }

    /// The fixture with CarToVehicle's price read through `$entityPolicy` and the policy class named `className`.
    static func centsMapping(className: String, selector: String = "centsFromDollars:") throws -> MappingModel {
        let text = try MappingModelLoaderTests.fixtureXML()
            .replacingOccurrences(of: "$source.price * 100", with: #"FUNCTION($entityPolicy, "\#(selector)", $source.price)"#)
            .replacingOccurrences(of: #"<attribute name="name" type="string">CarToVehicle</attribute>"#, with: """
                <attribute name="name" type="string">CarToVehicle</attribute>
                <attribute name="migrationpolicyclassname" type="string">\(className)</attribute>
                """)
        let mapping = try MappingModelXML.read(Data(text.utf8), path: "cents.xml")
        let car = try #require(mapping.entityMapping(named: "CarToVehicle"))
        #expect(car.entityMigrationPolicyClassName == className)
        #expect(car.attributeMappings.first { $0.name == "priceInCents" }?.valueExpression
                == .policyFunction(selector: selector, arguments: [try QueryExpression(format: "$source.price")]))
        return mapping
    }

    @Test func aFunctionOfTheEntityPolicyGivesTheValue() throws {
        MigrationManager.register(policy: CentsPolicy.self)
        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let data = Garage.garageData(seed: 5)
        let source = try Garage.oldStore("old.sqlite", in: directory, with: data)
        let migrated = directory.file("migrated.sqlite")
        // Xcode writes ".Name" for a class of the app's own module.
        try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new,
                                          mapping: try Self.centsMapping(className: ".CentsPolicy"), into: migrated, batchSize: 3)
        try expectHolds(migrated, Garage.garage2Data(from: data), in: directory)
    }

    @Test func aFunctionThePolicyDoesNotAnswerFailsNamingTheSelectorAndTheStoreIsRemoved() throws {
        MigrationManager.register(policy: CentsPolicy.self, forClassName: "CentsPolicyForUnknownSelector")
        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let source = try Garage.oldStore("old.sqlite", in: directory, with: [
            Object(entity: "Car", key: "P-1", values: ["plate": "P-1", "make": "fiat", "price": Float(2)]),
        ])
        let before = try MigrationFixtures.bytes(source)
        let migrated = directory.file("migrated.sqlite")
        #expect {
            try MappingModelMigration.migrate(
                storeAt: source, sourceModel: old, destinationModel: new,
                mapping: try Self.centsMapping(className: "CentsPolicyForUnknownSelector", selector: "penniesFromDollars:"), into: migrated)
        } throws: { error in
            guard case MigrationError.unsupportedMapping(let name, let reason)? = error as? MigrationError else { return false }
            return name == "CarToVehicle" && reason.contains("penniesFromDollars:") && reason.contains("CentsPolicy")
        }
        #expect(!FileManager.default.fileExists(atPath: migrated.path))
        #expect(try MigrationFixtures.bytes(source) == before)
    }

    /// Makes each brand itself (a custom mapping has no default objects) and associates it.
    final class BrandCopyingPolicy: EntityMigrationPolicy {
        override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
                                                 manager: MigrationManager) throws {
            let brand = try manager.destinationContext.insertNewObject(forEntityName: "Brand")
            try brand.setValue(source.value(forKey: "name"), forKey: "name")
            try brand.setValue(source.value(forKey: "country"), forKey: "country")
            try manager.associate(sourceInstance: source, withDestinationInstance: brand, for: mapping)
        }
    }

    /// Fails on the brand named "brand1".
    final class FailingBrandPolicy: EntityMigrationPolicy {
        override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
                                                 manager: MigrationManager) throws {
            if try source.value(forKey: "name") as? String == "brand1" { throw PolicyError(reason: "brand1 is refused") }
            try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        }
    }

    @Test func aCustomMappingIsMadeByItsPolicy() throws {
        MigrationManager.register(policy: BrandCopyingPolicy.self)
        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let data = Garage.garageData(seed: 6)
        let source = try Garage.oldStore("old.sqlite", in: directory, with: data)
        var mapping = try Garage.mapping()
        let brand = try #require(mapping.entityMappings.firstIndex { $0.name == "BrandToBrand" })
        mapping.entityMappings[brand].mappingType = .custom
        mapping.entityMappings[brand].entityMigrationPolicyClassName = String(reflecting: BrandCopyingPolicy.self)
        let migrated = directory.file("migrated.sqlite")
        try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
        try expectHolds(migrated, Garage.garage2Data(from: data), in: directory)
    }

    @Test func anErrorInAPolicyStepNamesTheObjectAndLeavesNoStore() throws {
        MigrationManager.register(policy: FailingBrandPolicy.self)
        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let source = try Garage.oldStore("old.sqlite", in: directory, with: Garage.garageData(seed: 2))
        let before = try MigrationFixtures.bytes(source)
        var mapping = try Garage.mapping()
        let brand = try #require(mapping.entityMappings.firstIndex { $0.name == "BrandToBrand" })
        mapping.entityMappings[brand].entityMigrationPolicyClassName = "FailingBrandPolicy"
        let migrated = directory.file("migrated.sqlite")
        #expect {
            try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
        } throws: { error in
            guard case MigrationError.mappingFailed(let name, let object, let reason)? = error as? MigrationError else { return false }
            return name == "BrandToBrand" && object.contains("/Brand/p") && reason.contains("createDestinationInstances")
        }
        #expect(!FileManager.default.fileExists(atPath: migrated.path))
        #expect(try MigrationFixtures.bytes(source) == before)
    }

    @Test func anUnregisteredPolicyOrAPolicyFunctionWithoutAPolicyIsRefusedBeforeAnythingIsWritten() throws {
        let directory = TemporaryDirectory()
        let (old, new) = try Garage.models()
        let source = try Garage.oldStore("old.sqlite", in: directory, with: Garage.garageData(seed: 3))
        let before = try MigrationFixtures.bytes(source)
        let migrated = directory.file("migrated.sqlite")
        func refusal(_ mapping: MappingModel) -> MigrationError? {
            do {
                try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
                return nil
            } catch { return error as? MigrationError }
        }
        #expect(refusal(try Self.centsMapping(className: "NobodyRegisteredThisPolicy"))
                == .unregisteredMigrationPolicy(entityMapping: "CarToVehicle", className: "NobodyRegisteredThisPolicy"))
        let mapping = try Self.centsMapping(className: "NSEntityMigrationPolicy")
        guard case .unsupportedMapping("CarToVehicle", let reason)? = refusal(mapping) else {
            Issue.record("a policy function without a policy class was not refused")
            return
        }
        #expect(reason.contains("centsFromDollars:"))
        #expect(!FileManager.default.fileExists(atPath: migrated.path))
        #expect(try MigrationFixtures.bytes(source) == before)
    }

    @Test func entityPolicyElsewhereThanAroundTheWholeExpressionIsRefusedByName() {
        #expect(throws: MigrationError.self) {
            try MappingExpression(format: #"FUNCTION($entityPolicy, "centsFromDollars:", $source.price) + 1"#)
        }
        #expect(throws: Never.self) {
            let expression = try MappingExpression(format: #"FUNCTION($entityPolicy, "fullName:", $source)"#)
            #expect(try MappingExpression(format: expression.format) == expression)
        }
    }

    /// Checks that `store` holds exactly what a fresh "Garage 2" store filled with `objects` holds.
    func expectHolds(_ store: URL, _ objects: [Object], in directory: TemporaryDirectory,
                     sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (_, new) = try Garage.models()
        let expected = directory.file("expected-\(UUID().uuidString).sqlite")
        try MigrationFixtures.fill(expected, model: new, with: objects)
        #expect(try MigrationFixtures.dump(store, model: new, keys: Garage.keys)
                == MigrationFixtures.dump(expected, model: new, keys: Garage.keys), sourceLocation: sourceLocation)
    }
}
