import Foundation
import Testing
@testable import OpenCoreData

/// A stored relationship whose inverse is transient, as mogenerator's `MyModel` has (`Company.assistants`,
/// inverse `Assistant.company`, transient): Core Data loads such models, so the model loads; the store keeps
/// the stored side as one without an inverse. A transient relationship is a plain value of its object here
/// (as every transient relationship is), so setting the stored side leaves the transient side as it was.
@Suite(.enabled(if: AppleMadeFixtures.available, AppleMadeFixtures.absentMessage))
struct TransientInverseTests {
    static let modelPath = "rentzsch-mogenerator/MyModel.xcdatamodeld/MyModel.xcdatamodel"

    @Test func theStoredSideIsSavedAndReadBackAndTheTransientSideStaysInMemory() throws {
        let model = try ManagedObjectModel(contentsOf: AppleMadeFixtures.url(Self.modelPath))
        let assistants = try #require(model.entitiesByName["Company"]?.relationshipsByName["assistants"])
        #expect(assistants.inverseRelationship?.name == "company" && assistants.inverseRelationship?.isTransient == true)
        #expect(assistants.storedInverse == nil)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("transient-inverse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("MyModel.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            let company = try context.insertNewObject(forEntityName: "Company")
            try company.setValue("Acme", forKey: "name")
            let staff = try (0..<3).map { number in
                let assistant = try context.insertNewObject(forEntityName: "Assistant")
                try assistant.setValue("assistant \(number)", forKey: "name")
                return assistant
            }
            try company.setValue(Set(staff), forKey: "assistants")
            // The transient side is not written by the stored side's change, and nothing else is.
            #expect(try staff[0].value(forKey: "company") == nil)
            #expect(!(try staff[0].changedValues()).keys.contains("company"))
            try staff[2].setValue(company, forKey: "company")
            // A stored to-one whose inverse is transient has its own column.
            let boss = try context.insertNewObject(forEntityName: "Employee")
            try boss.setValue(staff[1], forKey: "assistant")
            #expect(try staff[1].value(forKey: "boss") == nil)
            try context.save()
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let company = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Company")).first)
        let read = try #require(try company.value(forKey: "assistants") as? Set<ManagedObject>)
        #expect(Set(try read.map { try $0.value(forKey: "name") as? String }) == ["assistant 0", "assistant 1", "assistant 2"])
        let boss = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee")).first)
        #expect(try (boss.value(forKey: "assistant") as? ManagedObject)?.value(forKey: "name") as? String == "assistant 1")

        // Removing one from the stored side is saved too.
        let leaving = try #require(read.first { try $0.value(forKey: "name") as? String == "assistant 0" })
        try company.setValue(read.subtracting([leaving]), forKey: "assistants")
        try context.save()
        let again = ManagedObjectContext(concurrencyType: .confinement)
        again.persistentStoreCoordinator = coordinator
        let reread = try #require(try again.fetch(FetchRequest<ManagedObject>(entityName: "Company")).first)
        #expect((try reread.value(forKey: "assistants") as? Set<ManagedObject>)?.count == 2)
    }
}
