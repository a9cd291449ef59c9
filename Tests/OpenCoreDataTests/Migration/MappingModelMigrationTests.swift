import Foundation
import Testing
@testable import OpenCoreData

/// Heavy migration through the `Garage1to2.xcmappingmodel` fixture (Garage → Garage 2: entities renamed,
/// Float dollars into Integer 64 cents, a string upper-cased, a to-one key path read, scrapped cars
/// filtered out, an entity copied, one removed, one added): every object of the migrated store must equal
/// what a fresh "Garage 2" store holds when filled with the values the mapping should give.
@Suite struct MappingModelMigrationTests {
    typealias Object = MigrationFixtures.Object

    static let keys = ["Owner": "name", "Person": "name", "Car": "plate", "Vehicle": "registration",
                       "Brand": "name", "Note": "text", "Garage": "name"]

    static func bundle() throws -> ModelVersionBundle {
        try ModelVersionBundle(contentsOf: InteropFixtures.url("Garage.xcdatamodeld"))
    }

    /// The two versions the fixture mapping model maps between.
    static func models() throws -> (old: ManagedObjectModel, new: ManagedObjectModel) {
        let bundle = try bundle()
        return (try #require(bundle.version(named: "Garage")).model, try #require(bundle.version(named: "Garage 2")).model)
    }

    /// A "Garage" store at `name` in `directory` holding `objects`.
    static func oldStore(_ name: String, in directory: TemporaryDirectory, with objects: [Object]) throws -> URL {
        let url = directory.file(name)
        try MigrationFixtures.fill(url, model: try models().old, with: objects)
        return url
    }

    static func mapping() throws -> MappingModel {
        try MappingModel(contentsOf: InteropFixtures.url("Garage1to2.xcmappingmodel"))
    }

    /// Version "Garage" data drawn from `seed`.
    static func garageData(seed: UInt64) -> [Object] {
        var random = SeededGenerator(seed: seed)
        var objects: [Object] = []
        let owners = (0..<Int.random(in: 1...4, using: &random)).map { "owner\($0)" }
        for owner in owners { objects.append(Object(entity: "Owner", key: owner, values: ["name": owner])) }
        for index in 0..<3 {
            var values: [String: Any] = ["name": "brand\(index)"]
            if Bool.random(using: &random) { values["country"] = ["SE", "IT", "FR"][index] }
            objects.append(Object(entity: "Brand", key: "brand\(index)", values: values))
        }
        objects.append(Object(entity: "Note", key: "remember", values: ["text": "remember"]))
        for index in 0..<Int.random(in: 0...12, using: &random) {
            var values: [String: Any] = ["plate": "P-\(index)", "make": ["volvo", "saab", "fiat"].randomElement(using: &random)!]
            if Bool.random(using: &random) { values["model"] = "m\(index)" }
            // Quarters are exact in Float, so cents are whole numbers.
            if Bool.random(using: &random) { values["price"] = Float(Int.random(in: 0...40_000, using: &random)) / 4 }
            if Bool.random(using: &random) { values["year"] = Int16.random(in: 1950...2030, using: &random) }
            if Bool.random(using: &random) { values["scrapped"] = Bool.random(using: &random) }
            var links: [String: [String]] = [:]
            if Int.random(in: 0..<4, using: &random) > 0 { links["owner"] = [owners.randomElement(using: &random)!] }
            objects.append(Object(entity: "Car", key: "P-\(index)", values: values, links: links))
        }
        return objects
    }

    /// What the mapping should make of `old`, as version "Garage 2" spells it.
    static func garage2Data(from old: [Object]) -> [Object] {
        var result: [Object] = []
        for object in old {
            switch object.entity {
            case "Owner": result.append(Object(entity: "Person", key: object.key, values: object.values))
            case "Brand": result.append(object)
            case "Car":
                if object.values["scrapped"] as? Bool == true { continue }
                var values: [String: Any] = [
                    "registration": object.key,
                    "title": (object.values["make"] as! String).uppercased(),
                    "priceInCents": Int64((object.values["price"] as? Float ?? 0) * 100),
                    "year": Int32(object.values["year"] as? Int16 ?? 0),
                ]
                values["model"] = object.values["model"]
                var links: [String: [String]] = [:]
                if let owner = object.links["owner"]?.first {
                    values["ownerName"] = owner
                    links["driver"] = [owner]
                }
                result.append(Object(entity: "Vehicle", key: object.key, values: values, links: links))
            default: continue
            }
        }
        return result
    }

    /// Checks that `store` holds exactly what a fresh store of `model` filled with the mapping's result for
    /// `data` holds.
    static func expectHoldsWhatTheMappingGives(_ store: URL, from data: [Object], model: ManagedObjectModel,
                                               in directory: TemporaryDirectory,
                                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = directory.file("expected-\(UUID().uuidString).sqlite")
        try MigrationFixtures.fill(expected, model: model, with: garage2Data(from: data))
        #expect(try MigrationFixtures.dump(store, model: model, keys: keys) == MigrationFixtures.dump(expected, model: model, keys: keys),
                sourceLocation: sourceLocation)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func migratedStoreHoldsWhatTheMappingGives(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle()
        let (old, new) = try Self.models()
        let data = Self.garageData(seed: seed)
        let source = try Self.oldStore("old.sqlite", in: directory, with: data)
        let before = try MigrationFixtures.bytes(source)

        let migrated = directory.file("migrated.sqlite")
        // Batches of three, so the stores of most seeds take several.
        try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new,
                                          mapping: try Self.mapping(), into: migrated, batchSize: 3)

        try Self.expectHoldsWhatTheMappingGives(migrated, from: data, model: new, in: directory)
        let fresh = directory.file("fresh.sqlite")
        try MigrationFixtures.fill(fresh, model: new, with: [])
        #expect(try MigrationFixtures.layout(migrated) == MigrationFixtures.layout(fresh))
        #expect(try bundle.version(ofStoreAt: migrated)?.name == "Garage 2")
        #expect(try MigrationFixtures.bytes(source) == before)
    }

    /// Xcode's generated relationship mapping names no entity mapping when none was chosen: the objects are
    /// then looked up in whichever mapping made them.
    @Test func aRelationshipMappingWithoutAMappingNameUsesTheMappingThatMadeEachObject() throws {
        let directory = TemporaryDirectory()
        let (old, new) = try Self.models()
        let data = Self.garageData(seed: 9)
        let source = try Self.oldStore("old.sqlite", in: directory, with: data)
        let text = try MappingModelLoaderTests.fixtureXML()
        let line = #"        <attribute name="sourcemappingname" type="string">OwnerToPerson</attribute>"# + "\n"
        // Person.vehicles is left out, so the links come from Vehicle.driver alone.
        let vehicles = #"destination="XDDEVRELATIONSHIPMAPPING" idrefs="z105""#
        #expect(text.contains(line) && text.contains(vehicles))
        let changed = text.replacingOccurrences(of: line, with: "")
            .replacingOccurrences(of: vehicles, with: #"destination="XDDEVRELATIONSHIPMAPPING" idrefs="""#)
        let mapping = try MappingModelXML.read(Data(changed.utf8), path: "test.xml")
        #expect(mapping.entityMapping(named: "OwnerToPerson")?.relationshipMappings.isEmpty == true)
        #expect(mapping.entityMapping(named: "CarToVehicle")?.relationshipMappings.first?.valueExpression
                == .destinationInstances(entityMappingName: "", sourceInstances: try QueryExpression(format: "$source.owner")))

        let migrated = directory.file("migrated.sqlite")
        try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
        try Self.expectHoldsWhatTheMappingGives(migrated, from: data, model: new, in: directory)
    }

    @Test func openingAnOldStoreUsesTheMappingModelNextToTheBundle() throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle()
        let data = Self.garageData(seed: 7)
        let store = try Self.oldStore("garage.sqlite", in: directory, with: data)

        // The current version; the fixture folder holds Garage1to2.xcmappingmodel beside the bundle.
        let current = try ManagedObjectModel(contentsOf: InteropFixtures.url("Garage.xcdatamodeld"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
        var options = StoreOptions()
        // A mapping model is used even when inferring is turned off, as in Core Data.
        options.infersMappingModelAutomatically = false
        try coordinator.addPersistentStore(type: .sqlite, at: store, options: options)
        coordinator.persistentStores.forEach(coordinator.remove)

        try Self.expectHoldsWhatTheMappingGives(store, from: data, model: current, in: directory)
        #expect(try bundle.version(ofStoreAt: store)?.name == "Garage 2")
        // The copy made on the way is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }.isEmpty)
    }

    @Test func aMappingModelPassedInTheOptionsIsUsedOnOpen() throws {
        let directory = TemporaryDirectory()
        // The bundle alone, without the mapping model beside it.
        let bundleCopy = directory.file("Garage.xcdatamodeld")
        try FileManager.default.copyItem(at: InteropFixtures.url("Garage.xcdatamodeld"), to: bundleCopy)
        let data = Self.garageData(seed: 11)
        let store = try Self.oldStore("garage.sqlite", in: directory, with: data)
        let before = try MigrationFixtures.bytes(store)
        let current = try ManagedObjectModel(contentsOf: bundleCopy)

        // Read-only never migrates, mapping model or not.
        var options = StoreOptions(readOnly: true)
        options.mappingModels = [try Self.mapping()]
        #expect(throws: MigrationError.self) {
            try PersistentStoreCoordinator(managedObjectModel: current).addPersistentStore(type: .sqlite, at: store, options: options)
        }
        #expect(try MigrationFixtures.bytes(store) == before)

        options.readOnly = false
        let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
        try coordinator.addPersistentStore(type: .sqlite, at: store, options: options)
        coordinator.persistentStores.forEach(coordinator.remove)
        try Self.expectHoldsWhatTheMappingGives(store, from: data, model: current, in: directory)
    }

    @Test func aFailingExpressionRemovesTheHalfMadeStoreAndNamesTheObject() throws {
        let directory = TemporaryDirectory()
        let (old, new) = try Self.models()
        let source = try Self.oldStore("old.sqlite", in: directory, with: [
            Object(entity: "Car", key: "P-1", values: ["plate": "P-1", "make": "fiat", "price": Float(0.5)]),
            Object(entity: "Car", key: "P-2", values: ["plate": "P-2", "make": "fiat", "price": Float(0.125)]),
        ])
        // 0.125 dollars is not a whole number of cents: refused, not rounded.
        let destination = directory.file("new.sqlite")
        #expect {
            try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new,
                                              mapping: try Self.mapping(), into: destination, batchSize: 1)
        } throws: { error in
            guard case MigrationError.mappingFailed(let name, let object, let reason)? = error as? MigrationError else { return false }
            return name == "CarToVehicle" && object.hasSuffix("/Car/p2") && reason.contains("priceInCents")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func anExistingDestinationIsNeverOverwritten() throws {
        let directory = TemporaryDirectory()
        let (old, new) = try Self.models()
        let source = try Self.oldStore("old.sqlite", in: directory, with: Self.garageData(seed: 1))
        let destination = directory.file("new.sqlite")
        try Data("keep me".utf8).write(to: destination)
        #expect(throws: MigrationError.self) {
            try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new,
                                              mapping: try Self.mapping(), into: destination)
        }
        #expect(try Data(contentsOf: destination) == Data("keep me".utf8))
    }

    @Test func mappingsThatDoNotFitTheModelsAreRefusedByName() throws {
        let (old, new) = try Self.models()
        let directory = TemporaryDirectory()
        func refusal(_ mapping: MappingModel) -> MigrationError? {
            do {
                try MappingModelMigration.migrate(storeAt: directory.file("none.sqlite"), sourceModel: old,
                                                  destinationModel: new, mapping: mapping, into: directory.file("out.sqlite"))
                return nil
            } catch { return error as? MigrationError }
        }
        var mapping = try Self.mapping()
        mapping.entityMappings[1].destinationEntityName = "Truck"
        #expect(refusal(mapping) == .mappingDoesNotFitModels(entityMapping: "CarToVehicle", reason: "the destination model has no entity 'Truck'"))
        mapping = try Self.mapping()
        mapping.entityMappings[0].sourceEntityName = "Driver"
        mapping.entityMappings[0].sourceExpression = nil
        #expect(refusal(mapping) == .mappingDoesNotFitModels(entityMapping: "OwnerToPerson", reason: "the source model has no entity 'Driver'"))
        mapping = try Self.mapping()
        mapping.entityMappings[1].attributeMappings.append(PropertyMapping(name: "colour", valueExpression: nil))
        #expect(refusal(mapping) == .mappingDoesNotFitModels(entityMapping: "CarToVehicle", reason: "the destination entity 'Vehicle' has no attribute 'colour'"))
        mapping = try Self.mapping()
        mapping.entityMappings[0].relationshipMappings[0].valueExpression =
            .destinationInstances(entityMappingName: "TruckToVehicle", sourceInstances: try QueryExpression(format: "$source.cars"))
        #expect(refusal(mapping) == .mappingDoesNotFitModels(
            entityMapping: "OwnerToPerson", reason: "relationship 'vehicles' names the entity mapping 'TruckToVehicle', which the mapping model does not have"))
        mapping = try Self.mapping()
        mapping.entityMappings[2].mappingType = .custom
        #expect(refusal(mapping) == .unsupportedMapping(
            entityMapping: "BrandToBrand", reason: "a custom entity mapping needs a migration policy class, and it names none"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("out.sqlite").path))
    }
}
