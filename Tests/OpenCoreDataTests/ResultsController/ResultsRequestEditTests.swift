import Foundation
import Testing
@testable import OpenCoreData

/// Edits to a controller's request take effect at its next fetch: until then changes are matched, and
/// batches read, by the request as it was fetched, so the rows stay what one request selects.
@Suite struct ResultsRequestEditTests {
    private static func request(_ predicate: String, batchSize: Int) throws -> FetchRequest<ManagedObject> {
        let request = BankFixture.request(batchSize: batchSize)
        request.predicate = try QueryPredicate(format: predicate)
        return request
    }

    /// What a new controller over `predicate` holds.
    private static func fresh(_ context: ManagedObjectContext, _ predicate: String) throws -> [[ManagedObjectID]] {
        let controller = try FetchedResultsController(fetchRequest: request(predicate, batchSize: 0), managedObjectContext: context,
                                                      sectionNameKeyPath: "state", cacheName: nil)
        try controller.performFetch()
        return controller.sectionObjectIDs
    }

    @Test(arguments: [0, 3])
    func editsTakeEffectAtTheNextFetch(batchSize: Int) throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        try BankFixture.seed(context, count: 24)
        let controller = try FetchedResultsController(fetchRequest: Self.request("state IN {'CA', 'FL'}", batchSize: batchSize),
                                                      managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        try controller.performFetch()
        let recorder = ContractRecorder(controller)

        // Edited, not fetched: the controller still follows CA and FL.
        controller.fetchRequest.predicate = try QueryPredicate(format: "state == 'NY'")
        controller.fetchRequest.fetchBatchSize = 1
        controller.fetchRequest.relationshipKeyPathsForPrefetching = ["details"]
        try BankFixture.insertBank(context, name: "New in NY", state: "NY", closeDate: nil)
        try BankFixture.insertBank(context, name: "New in CA", state: "CA", closeDate: Date(timeIntervalSinceReferenceDate: 1))
        context.processPendingChanges()
        #expect(recorder.problems.isEmpty)
        #expect(controller.sectionObjectIDs == (try Self.fresh(context, "state IN {'CA', 'FL'}")))
        #expect(controller.sections?.map(\.name) == ["CA", "FL"])
        #expect(recorder.log.count == 1)
        let ids = controller.sectionObjectIDs.flatMap { $0 }
        let read = try (0..<ids.count).map { index -> ManagedObjectID in
            let section = index < controller.sectionObjectIDs[0].count ? 0 : 1
            let item = section == 0 ? index : index - controller.sectionObjectIDs[0].count
            return try controller.object(at: IndexPath(item: item, section: section)).objectID
        }
        #expect(read == ids)

        // Fetched: now NY.
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == ["NY"])
        #expect(controller.sectionObjectIDs == (try Self.fresh(context, "state == 'NY'")))
    }
}
