import Foundation
import Testing
@testable import OpenCoreData

/// Compiled mapping models (`.cdm`): the `Garage1to2` fixture written as the keyed archive of an
/// `NSMappingModel` with the classes and keys Core Data's coders use (no `.cdm` made by Xcode is at hand),
/// read back to the mapping its XML gives, run, matched to models by its entity version hashes, and
/// refused by name where it holds what is not read.
@Suite struct CompiledMappingModelTests {
    typealias Instance = KeyedArchiveWriter.Instance
    typealias Archived = ArchivedMappingExpressionTests.Archived
    typealias Garage = MappingModelMigrationTests

    /// One `NSEntityMapping`; `extra` adds or replaces keys.
    static func entityMapping(_ name: String, type: Int, source: String?, destination: String?, fetch: Instance? = nil,
                              attributes: [(String, Instance)] = [], relationships: [(String, Instance)] = [],
                              extra: [String: Any] = [:]) throws -> Instance {
        let (old, new) = try Garage.models()
        var fields: [String: Any] = [
            "NSMappingName": name,
            "NSAttributeMappings": attributes.map(propertyMapping),
            "NSRelationshipMappings": relationships.map(propertyMapping),
        ]
        if let source {
            fields["NSSourceEntityName"] = source
            let hash: Data = try #require(old.entityVersionHashesByName[source])
            fields["NSSourceEntityVersionHash"] = hash
        }
        if let destination {
            fields["NSDestinationEntityName"] = destination
            let hash: Data = try #require(new.entityVersionHashesByName[destination])
            fields["NSDestinationEntityVersionHash"] = hash
        }
        if let fetch { fields["NSSourceExpression"] = fetch }
        fields.merge(extra) { $1 }
        return Instance(classNames: ["NSEntityMapping"], fields: fields, integers: ["NSMappingType": type])
    }

    static func propertyMapping(_ name: String, _ expression: Instance) -> Instance {
        Instance(classNames: ["NSPropertyMapping"], fields: ["NSDestinationPropertyName": name, "NSValueExpression": expression])
    }

    /// The fixture's mapping as Xcode would compile it; `changing` edits the entity mappings first.
    static func compiledGarage(changing: (inout [Instance]) throws -> Void = { _ in }) throws -> Data {
        let source = Archived.variable("source")
        var mappings = [
            try entityMapping("OwnerToPerson", type: 5, source: "Owner", destination: "Person", fetch: Archived.fetch("Owner", "TRUEPREDICATE"),
                              attributes: [("name", Archived.keyPath("name", of: source))],
                              relationships: [("vehicles", Archived.function(Archived.variable("manager"), MappingExpression.destinationInstancesSelector,
                                                                            [Archived.constant("CarToVehicle"), Archived.keyPath("cars", of: source)]))]),
            try entityMapping("CarToVehicle", type: 5, source: "Car", destination: "Vehicle", fetch: Archived.fetch("Car", "scrapped == NO"),
                              attributes: [
                                ("title", Archived.function(Archived.keyPath("make", of: source), "uppercaseString", [])),
                                ("priceInCents", Archived.builtIn("multiply:by:", [Archived.keyPath("price", of: source), Archived.constant(100)])),
                                ("year", Archived.keyPath("year", of: source)),
                                ("registration", Archived.keyPath("plate", of: source)),
                                ("model", Archived.function(source, "valueForKey:", [Archived.constant("model")])),
                                ("ownerName", Archived.keyPath("owner.name", of: source)),
                              ],
                              relationships: [("driver", Archived.function(Archived.variable("manager"), MappingExpression.destinationInstancesSelector,
                                                                          [Archived.constant("OwnerToPerson"), Archived.keyPath("owner", of: source)]))]),
            try entityMapping("BrandToBrand", type: 4, source: "Brand", destination: "Brand", fetch: Archived.fetch("Brand", "TRUEPREDICATE")),
            try entityMapping("NoteToNone", type: 3, source: "Note", destination: nil),
            try entityMapping("Garage", type: 2, source: nil, destination: "Garage"),
        ]
        try changing(&mappings)
        var byName: [String: Any] = [:]
        for mapping in mappings { byName[mapping.fields["NSMappingName"] as? String ?? ""] = mapping }
        return try KeyedArchiveWriter.archive(Instance(classNames: ["NSMappingModel"],
                                                       fields: ["NSEntityMappings": mappings, "NSEntityMappingsByName": byName]))
    }

    /// `data` written to `Garage1to2.cdm` in `directory`.
    static func write(_ data: Data, in directory: TemporaryDirectory) throws -> URL {
        let url = directory.file("Garage1to2.cdm")
        try data.write(to: url)
        return url
    }

    @Test func aCompiledMappingModelReadsAsItsXMLForm() throws {
        let directory = TemporaryDirectory()
        let compiled = try MappingModel(contentsOf: Self.write(try Self.compiledGarage(), in: directory))
        #expect(compiled.sourceModelVersionName == nil && compiled.destinationModelVersionName == nil)
        let (old, new) = try Garage.models()
        #expect(compiled.entityMapping(named: "CarToVehicle")?.sourceEntityVersionHash == old.entityVersionHashesByName["Car"])
        #expect(compiled.entityMapping(named: "CarToVehicle")?.destinationEntityVersionHash == new.entityVersionHashesByName["Vehicle"])
        var withoutHashes = compiled
        for index in withoutHashes.entityMappings.indices {
            withoutHashes.entityMappings[index].sourceEntityVersionHash = nil
            withoutHashes.entityMappings[index].destinationEntityVersionHash = nil
        }
        // The XML form marks the expressions Xcode generates; the compiled form holds them as written.
        var xml = try Garage.mapping()
        for entity in xml.entityMappings.indices {
            for index in xml.entityMappings[entity].attributeMappings.indices { xml.entityMappings[entity].attributeMappings[index].isGenerated = false }
            for index in xml.entityMappings[entity].relationshipMappings.indices { xml.entityMappings[entity].relationshipMappings[index].isGenerated = false }
        }
        #expect(withoutHashes.entityMappings == xml.entityMappings)
        #expect(compiled.fits(sourceModel: old, destinationModel: new))
        #expect(!compiled.fits(sourceModel: new, destinationModel: old))
        #expect(!(try Garage.mapping()).fits(sourceModel: old, destinationModel: new), "an XML mapping names its versions instead")
    }

    @Test func aCompiledMappingModelMigratesAsTheXMLOne() throws {
        let directory = TemporaryDirectory()
        let mapping = try MappingModel(contentsOf: Self.write(try Self.compiledGarage(), in: directory))
        let (old, new) = try Garage.models()
        let data = Garage.garageData(seed: 3)
        let store = try Garage.oldStore("old.sqlite", in: directory, with: data)
        let migrated = directory.file("migrated.sqlite")
        try MappingModelMigration.migrate(storeAt: store, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
        try Garage.expectHoldsWhatTheMappingGives(migrated, from: data, model: new, in: directory)
    }

    /// Passed in the options, it is found by its entity version hashes, as it names no versions.
    @Test func aCompiledMappingModelPassedInTheOptionsIsUsedOnOpen() throws {
        let directory = TemporaryDirectory()
        let bundleCopy = directory.file("Garage.xcdatamodeld")
        try FileManager.default.copyItem(at: InteropFixtures.url("Garage.xcdatamodeld"), to: bundleCopy)
        let data = Garage.garageData(seed: 12)
        let store = try Garage.oldStore("garage.sqlite", in: directory, with: data)
        let current = try ManagedObjectModel(contentsOf: bundleCopy)
        var options = StoreOptions()
        options.infersMappingModelAutomatically = false
        options.mappingModels = [try MappingModel(contentsOf: Self.write(try Self.compiledGarage(), in: directory))]
        let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
        try coordinator.addPersistentStore(type: .sqlite, at: store, options: options)
        coordinator.persistentStores.forEach(coordinator.remove)
        try Garage.expectHoldsWhatTheMappingGives(store, from: data, model: current, in: directory)
    }

    /// The entity versions it records are checked: a mapping made for other versions is refused before
    /// anything is written.
    @Test func aCompiledMappingModelForOtherEntityVersionsIsRefused() throws {
        let directory = TemporaryDirectory()
        let data = try Self.compiledGarage { mappings in
            mappings[1] = try Self.entityMapping("CarToVehicle", type: 5, source: "Car", destination: "Vehicle",
                                                 extra: ["NSSourceEntityVersionHash": Data(repeating: 7, count: 32)])
        }
        let mapping = try MappingModel(contentsOf: Self.write(data, in: directory))
        let (old, new) = try Garage.models()
        #expect(!mapping.fits(sourceModel: old, destinationModel: new))
        let store = try Garage.oldStore("old.sqlite", in: directory, with: Garage.garageData(seed: 4))
        let migrated = directory.file("migrated.sqlite")
        #expect(throws: MigrationError.mappingDoesNotFitModels(
            entityMapping: "CarToVehicle", reason: "the source entity 'Car' is not the version the mapping was made for (its version hash differs)")) {
            try MappingModelMigration.migrate(storeAt: store, sourceModel: old, destinationModel: new, mapping: mapping, into: migrated)
        }
        #expect(!FileManager.default.fileExists(atPath: migrated.path))
    }

    @Test func userInfoIsRead() throws {
        let data = try Self.compiledGarage { mappings in
            mappings[3] = try Self.entityMapping("NoteToNone", type: 3, source: "Note", destination: nil, extra: ["NSUserInfo": ["reason": "obsolete"]])
        }
        let mapping = try CompiledMappingModel.read(data, path: "x.cdm")
        #expect(mapping.entityMapping(named: "NoteToNone")?.userInfo == ["reason": "obsolete"])
    }

    /// What is not read is refused, naming the mapping and the key or class.
    @Test func whatIsNotReadIsRefusedByName() throws {
        func refusal(_ extra: [String: Any], type: Int = 4) throws -> MigrationError? {
            let data = try Self.compiledGarage { mappings in
                mappings[2] = try Self.entityMapping("BrandToBrand", type: type, source: "Brand", destination: "Brand", extra: extra)
            }
            do {
                _ = try CompiledMappingModel.read(data, path: "x.cdm")
                return nil
            } catch let error as MigrationError {
                return error
            }
        }
        #expect(try refusal(["NSFancyOption": "on"])
                == .unsupportedMapping(entityMapping: "BrandToBrand", reason: "its key NSFancyOption is not read"))
        #expect(try refusal(["NSFancyOption": String?.none as Any]) == nil, "a key holding nothing carries nothing")
        #expect(try refusal(["NSUserInfo": ["count": 3]])
                == .unsupportedMapping(entityMapping: "BrandToBrand", reason: "its NSUserInfo holds a value for 'count' that is not a string"))
        #expect(try refusal(["NSSourceExpression": Archived.fetch("Brand", "TRUEPREDICATE", countOnly: true)])
                .map { "\($0)" }?.contains("counts only") == true)
        #expect(try refusal(["NSSourceExpression": Archived.variable("manager")])
                == .unsupportedMapping(entityMapping: "BrandToBrand",
                                       reason: "its source expression (NSSourceExpression) is not read: the source expression is an NSVariableExpression, not an NSFetchRequestExpression (a fetch)"))
        let transforms = Instance(classNames: ["NSPropertyMapping"], fields: [
            "NSDestinationPropertyName": "name", "NSValueExpression": Archived.keyPath("name", of: Archived.variable("source")),
            "NSPropertyTransforms": [Instance(classNames: ["NSPropertyTransform"], fields: [:])],
        ])
        #expect(try refusal(["NSAttributeMappings": [transforms]])
                == .unsupportedMapping(entityMapping: "BrandToBrand", reason: "the property mapping 'name': it has NSPropertyTransforms, which are not read"))
        let subquery = Self.propertyMapping("name", Instance(classNames: ["NSSubqueryExpression", "NSExpression"], fields: [:]))
        #expect(try refusal(["NSAttributeMappings": [subquery]]).map { "\($0)" }?.contains("NSSubqueryExpression") == true)
        #expect(try refusal([:], type: 9) == .invalidMappingModel(
            path: "x.cdm", reason: "entity mapping 'BrandToBrand' has the mapping type 9, which Core Data does not have"))
        #expect(try refusal(["NSMappingName": "OwnerToPerson"]) == .invalidMappingModel(path: "x.cdm", reason: "two entity mappings are named 'OwnerToPerson'"))

        let notAMappingModel = try KeyedArchiveWriter.archive(Instance(classNames: ["NSManagedObjectModel"], fields: [:]))
        #expect(throws: MigrationError.invalidMappingModel(path: "y.cdm", reason: "the archive's root is not an NSMappingModel")) {
            try CompiledMappingModel.read(notAMappingModel, path: "y.cdm")
        }
    }

    /// Damaged archives fail with a ``MigrationError``: never a crash or a hang.
    @Test func damagedArchivesNeverCrash() throws {
        let original = try Self.compiledGarage()
        var generator = InteropFixtures.SeededGenerator(seed: 41)
        for round in 0..<300 {
            let damaged = InteropFixtures.damaged(original, round: round, using: &generator)
            do {
                _ = try CompiledMappingModel.read(damaged, path: "damaged.cdm")
            } catch is MigrationError {
            } catch {
                Issue.record("round \(round): \(error)")
            }
        }
    }
}
