import Foundation
import Testing
@testable import OpenCoreData

/// A controller over an abstract entity whose sub-entities share one table: its query reads `Z_ENT`, rows
/// start with one entity and get a second one through changes, and the cache keeps per-row entities.
@Suite struct ResultsSharedTableTests {
    private static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Person", abstract: true) {
                Attribute("name", .string)
                Attribute("rank", .integer32)
            }
            EntityDescription("Employee", parent: "Person") { Attribute("title", .string) }
            EntityDescription("Customer", parent: "Person") { Attribute("title", .string) }
        }
    }

    private func insert(_ context: ManagedObjectContext, _ entity: String, serial: Int, rank: Int32?) throws -> ManagedObject {
        let person = try context.insertNewObject(forEntityName: entity)
        try person.setValue("p\(serial)", forKey: "name")
        try person.setValue(rank, forKey: "rank")
        return person
    }

    private func controller(_ context: ManagedObjectContext, cacheName: String? = nil) throws -> FetchedResultsController<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Person")
        request.sortDescriptors = [QuerySortDescriptor(key: "rank"), QuerySortDescriptor(key: "name")]
        request.fetchBatchSize = 10
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: "rank", cacheName: cacheName)
        try controller.performFetch()
        return controller
    }

    @Test func entitiesSurviveChangesAndTheCache() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context()
        var rng = SeededGenerator(seed: 77)
        var people: [ManagedObject] = []
        for serial in 0..<400 {
            people.append(try insert(context, "Employee", serial: serial, rank: serial % 9 == 0 ? nil : Int32.random(in: 0..<3, using: &rng)))
        }
        try context.save()
        let frc = try controller(context)
        let recorder = ContractRecorder(frc)
        #expect(frc.fetchedObjects?.count == 400)
        var serial = 400
        for round in 0..<30 {
            for _ in 0..<Int.random(in: 1...5, using: &rng) {
                let dice = Int.random(in: 0..<10, using: &rng)
                if dice < 4 {
                    people.append(try insert(context, dice < 2 ? "Customer" : "Employee", serial: serial,
                                             rank: Int32.random(in: 0..<4, using: &rng)))
                    serial += 1
                } else if let index = people.indices.randomElement(using: &rng) {
                    if dice < 6 {
                        context.delete(people[index])
                        people.remove(at: index)
                    } else {
                        try people[index].setValue(Int32.random(in: 0..<4, using: &rng), forKey: "rank")
                    }
                }
            }
            if round % 6 == 5 { try context.save() } else { context.processPendingChanges() }
            let fresh = try controller(context)
            #expect(recorder.problems.isEmpty, "round \(round): \(recorder.problems)")
            #expect(frc.sectionObjectIDs == fresh.sectionObjectIDs, "round \(round)")
            #expect(recorder.state == fresh.sectionObjectIDs, "round \(round)")
            if frc.sectionObjectIDs != fresh.sectionObjectIDs { break }
        }
        try context.save()
        let entities = Set(frc.sectionObjectIDs.joined().map(\.entity.name))
        #expect(entities == ["Customer", "Employee"])

        // Saved rows of both entities, through the cache file and back.
        let name = "frc-shared-\(UUID().uuidString)"
        defer { FetchedResultsController<ManagedObject>.deleteCache(withName: name) }
        let queried = try controller(stack.context(), cacheName: name)
        let cached = try controller(stack.context(), cacheName: name)
        #expect(queried.statistics.queryFetches == 1)
        #expect(cached.statistics.cacheHits == 1)
        #expect(cached.sectionObjectIDs == frc.sectionObjectIDs)
        #expect(cached.sections?.map(\.name) == frc.sections?.map(\.name))
        let objects = try #require(cached.fetchedObjects)
        #expect(objects.map(\.entity.name) == frc.sectionObjectIDs.joined().map(\.entity.name))
    }
}
