import Foundation
import Testing
@testable import OpenCoreData

/// Hears a `FetchedResultsController<Bank>`: its methods name the typed controller.
private final class BankListRecorder: FetchedResultsControllerDelegate {
    var events: [String] = []

    func controllerWillChangeContent(_ controller: FetchedResultsController<Bank>) { events.append("will") }
    func controller(_ controller: FetchedResultsController<Bank>, didChange object: ManagedObject,
                    at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        let name = (try? controller.object(at: newIndexPath ?? indexPath ?? IndexPath(item: 0, section: 0)))?.name ?? "?"
        events.append("\(type) \(name)")
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Bank>) { events.append("did") }
}

/// A controller's result type is its request's: typed requests give typed objects, and a result type the
/// entity's objects are not is refused before anything is read.
@Suite struct TypedResultsControllerTests {
    private static func seedBanks(_ context: ManagedObjectContext, count: Int) throws {
        for index in 0..<count {
            let bank = try context.insertNew(Bank.self)
            bank.name = "Bank \(index)"
            bank.state = BankFixture.states[index % BankFixture.states.count]
            let details = try context.insertNew(BankDetails.self)
            details.closeDate = Date(timeIntervalSinceReferenceDate: Double(index * 1000))
            bank.details = details
        }
        try context.save()
    }

    private static func bankRequest<Result>(_ request: FetchRequest<Result>, batchSize: Int) -> FetchRequest<Result> {
        request.sortDescriptors = [QuerySortDescriptor(key: "state"),
                                   QuerySortDescriptor(key: "details.closeDate", ascending: false)]
        request.fetchBatchSize = batchSize
        return request
    }

    /// The same results through `FetchRequest<Bank>()` and through the entity's name: every index path
    /// holds the same object, the typed one as a `Bank` (in and across batches), and the typed delegate
    /// hears the changes.
    @Test(arguments: [0, 4])
    func aTypedControllerHandsOutItsResultType(batchSize: Int) throws {
        let stack = try TestStack(model: TypedObjectTests.model())
        try Self.seedBanks(stack.context(), count: 23)
        let context = stack.context()
        let typed = try FetchedResultsController(fetchRequest: Self.bankRequest(FetchRequest<Bank>(), batchSize: batchSize),
                                                 managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        let untyped = try FetchedResultsController(
            fetchRequest: Self.bankRequest(FetchRequest<ManagedObject>(entityName: "FailedBankInfo"), batchSize: batchSize),
            managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        try typed.performFetch()
        try untyped.performFetch()

        let sections = try #require(typed.sections)
        #expect(sections.map(\.name) == BankFixture.states)
        var names: [String] = []
        for section in sections {
            for item in 0..<section.numberOfObjects {
                let indexPath = IndexPath(item: item, section: section.index)
                let bank: Bank = try typed.object(at: indexPath)
                #expect(bank === (try untyped.object(at: indexPath)))
                #expect(bank.state == section.name)
                #expect(typed.indexPath(forObject: bank) == indexPath)
                names.append(bank.name ?? "")
            }
        }
        #expect(names.count == 23)
        #expect(try #require(typed.fetchedObjects).map(\.name) == names.map { Optional($0) })

        let recorder = BankListRecorder()
        typed.delegate = recorder
        let added = try context.insertNew(Bank.self)
        added.name = "Newest"
        added.state = "IL"
        context.processPendingChanges()
        #expect(recorder.events == ["will", "insert Newest", "did"])
    }

    /// Animals, dogs and a fish: the fish's entity, a sub-entity of Animal, makes plain `ManagedObject`s.
    private static func animals() throws -> (TestStack, ManagedObjectContext) {
        let model = try ManagedObjectModel {
            EntityDescription("Animal", class: AnimalObject.self) { Attribute("name", .string) }
            EntityDescription("Dog", parent: "Animal", class: DogObject.self)
            EntityDescription("Fish", parent: "Animal")
        }
        let stack = try TestStack(model: model)
        let writer = stack.context()
        for entity in ["Dog", "Animal", "Fish", "Dog"] {
            try writer.insertNewObject(forEntityName: entity).setValue(entity, forKey: "name")
        }
        try writer.save()
        return (stack, stack.context())
    }

    private static func controller<Result>(_ request: FetchRequest<Result>, subentities: Bool,
                                           in context: ManagedObjectContext) throws -> FetchedResultsController<Result> {
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        request.includesSubentities = subentities
        return try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                            sectionNameKeyPath: nil, cacheName: nil)
    }

    /// Refused, naming the entity whose objects are of another class: the entity itself, or a sub-entity
    /// the results include (not one they leave out).
    @Test func aResultTypeTheObjectsAreNotIsRefused() throws {
        let (stack, context) = try Self.animals()
        defer { withExtendedLifetime(stack) {} }
        let withFish = try Self.controller(FetchRequest<AnimalObject>(entityName: "Animal"), subentities: true, in: context)
        #expect(throws: FetchedResultsError.resultTypeMismatch(entity: "Fish", objectClass: "ManagedObject",
                                                                resultType: "AnimalObject")) { try withFish.performFetch() }
        #expect(withFish.sections == nil)

        let dogsOverAnimals = try Self.controller(FetchRequest<DogObject>(entityName: "Animal"), subentities: false, in: context)
        let refusal = #expect(throws: FetchedResultsError.self) { try dogsOverAnimals.performFetch() }
        #expect(refusal?.description.contains("Objects of entity 'Animal' are AnimalObject, not DogObject") == true)

        let animalsOnly = try Self.controller(FetchRequest<AnimalObject>(entityName: "Animal"), subentities: false, in: context)
        try animalsOnly.performFetch()
        #expect(try #require(animalsOnly.fetchedObjects).map(\.name) == ["Animal"])

        let dogs = try Self.controller(FetchRequest<DogObject>(entityName: "Dog"), subentities: true, in: context)
        try dogs.performFetch()
        #expect(try dogs.object(at: IndexPath(item: 1, section: 0)).name == "Dog")
        #expect(try #require(dogs.fetchedObjects).count == 2)
    }

    /// The asynchronous fetch checks the same, before its query runs.
    @Test func theAsynchronousFetchRefusesTheSame() async throws {
        let (stack, context) = try Self.animals()
        defer { withExtendedLifetime(stack) {} }
        let withFish = try Self.controller(FetchRequest<AnimalObject>(entityName: "Animal"), subentities: true, in: context)
        await #expect(throws: FetchedResultsError.resultTypeMismatch(entity: "Fish", objectClass: "ManagedObject",
                                                                      resultType: "AnimalObject")) { try await withFish.performFetchInBackground() }
        let dogs = try Self.controller(FetchRequest<DogObject>(entityName: "Dog"), subentities: true, in: context)
        try await dogs.performFetchInBackground()
        #expect(try await context.perform { try dogs.object(at: IndexPath(item: 0, section: 0)).name } == "Dog")
    }
}
