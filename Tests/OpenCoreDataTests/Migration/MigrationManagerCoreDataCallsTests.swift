import Foundation
import Testing
@testable import OpenCoreData

/// `MigrationManager` made and run as a Core Data app does: progress, the running mapping, user info,
/// cancellation, and the inferred mapping model it runs without one.
@Suite struct MigrationManagerCoreDataCallsTests {
    /// Version 2 of the banks model: `zip` becomes a 64-bit integer, `state` is dropped, `note` is new.
    static func banks2() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("FailedBankInfo") {
                Attribute("name", .string)
                Attribute("city", .string)
                Attribute("note", .string, default: "none")
                ToOne("details", "FailedBankDetails", inverse: "info", deleteRule: .cascade)
            }
            EntityDescription("FailedBankDetails") {
                Attribute("closeDate", .date)
                Attribute("updatedDate", .date)
                Attribute("zip", .integer64)
                ToOne("info", "FailedBankInfo", inverse: "details")
            }
        }
    }

    /// A banks store of `count` banks, each with details.
    static func store(at url: URL, count: Int) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.banks())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<count {
            let info = try context.insertNewObject(forEntityName: "FailedBankInfo")
            try info.setValue("bank\(index)", forKey: "name")
            try info.setValue("state\(index)", forKey: "state")
            let details = try context.insertNewObject(forEntityName: "FailedBankDetails")
            try details.setValue(Int32(index), forKey: "zip")
            try info.setValue(details, forKey: "details")
        }
        try context.save()
    }

    @Test func anInferredMappingModelRunsWithProgressAndUserInfo() throws {
        let directory = TemporaryDirectory()
        let source = directory.file("Banks.sqlite")
        try Self.store(at: source, count: 1200)
        let mapping = try MappingModel.inferredMappingModel(forSourceModel: try TestModels.banks(), destinationModel: try Self.banks2())
        #expect(mapping.entityMappings.map(\.mappingType) == [.transform, .transform])
        let manager = MigrationManager(sourceModel: try TestModels.banks(), destinationModel: try Self.banks2())
        manager.userInfo["asked"] = "yes"
        var progress: [Float] = []
        manager.progressHandler = { progress.append($0) }
        let destination = directory.file("Banks2.sqlite")
        try manager.migrateStore(from: source, sourceType: SQLiteStoreType, options: nil, with: nil,
                                 toDestinationURL: destination, destinationType: SQLiteStoreType, destinationOptions: nil)
        #expect(manager.migrationProgress == 1)
        #expect(progress == progress.sorted() && progress.count > 3)
        #expect(manager.userInfo["asked"] as? String == "yes")
        #expect(manager.currentEntityMapping == nil)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.banks2())
        try coordinator.addPersistentStore(type: .sqlite, at: destination)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let banks = try context.fetch(FetchRequest<ManagedObject>(entityName: "FailedBankInfo"))
        #expect(banks.count == 1200)
        for bank in banks.prefix(20) {
            let details = try #require(try bank.value(forKey: "details") as? ManagedObject)
            #expect(try "bank\(details.value(forKey: "zip") as? Int64 ?? -1)" == bank.value(forKey: "name") as? String)
            #expect(try bank.value(forKey: "note") as? String == "none")
        }
    }

    /// A policy that cancels the migration from inside it: the migration stops at its next batch with the
    /// error given, and leaves no destination file.
    final class CancellingPolicy: EntityMigrationPolicy {
        struct Stop: Error {}
        override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
                                                 manager: MigrationManager) throws {
            try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
            #expect(manager.currentEntityMapping?.name == mapping.name)
            manager.cancelMigrationWithError(Stop())
        }
    }

    @Test func cancellingStopsTheMigrationWithTheErrorGiven() throws {
        MigrationManager.register(policy: CancellingPolicy.self, forClassName: "CancellingPolicy")
        let directory = TemporaryDirectory()
        let source = directory.file("Banks.sqlite")
        try Self.store(at: source, count: 1200)
        var mapping = try MappingModel.inferredMappingModel(forSourceModel: try TestModels.banks(), destinationModel: try Self.banks2())
        mapping.entityMappings[0].entityMigrationPolicyClassName = "CancellingPolicy"
        let manager = MigrationManager(sourceModel: try TestModels.banks(), destinationModel: try Self.banks2())
        let destination = directory.file("Banks2.sqlite")
        #expect(throws: CancellingPolicy.Stop.self) {
            try manager.migrateStore(from: source, sourceType: SQLiteStoreType, with: mapping,
                                     toDestinationURL: destination, destinationType: SQLiteStoreType)
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(manager.migrationProgress < 1)
    }

    @Test func aTypeChangeInferenceDoesNotConvertIsRefused() throws {
        let text = try ManagedObjectModel { EntityDescription("Note") { Attribute("stars", .string) } }
        let number = try ManagedObjectModel { EntityDescription("Note") { Attribute("stars", .integer16) } }
        #expect(throws: MigrationError.unsupportedTypeChange(entity: "Note", attribute: "stars", from: .string, to: .integer16)) {
            try MappingModel.inferredMappingModel(forSourceModel: text, destinationModel: number)
        }
    }
}
