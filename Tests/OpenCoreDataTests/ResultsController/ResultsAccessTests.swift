import Foundation
import Testing
@testable import OpenCoreData

/// The controller's per-access lookups (object(at:), objectIDs(in:)) against its rows read in order.
@Suite struct ResultsAccessTests {
    /// 500 banks over two sections: three row chunks, sections not aligned with them.
    private func fetchedController() throws -> (TestStack, FetchedResultsController) {
        let stack = try TestStack(model: TestModels.banks())
        try BankFixture.seed(stack.context(), count: 500, states: ["CA", "NY"])
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(batchSize: 20),
                                                      managedObjectContext: stack.context(), sectionNameKeyPath: "state",
                                                      cacheName: nil)
        try controller.performFetch()
        return (stack, controller)
    }

    private func idsInOrder(_ tracker: ResultsChangeTracker) throws -> [ManagedObjectID] {
        var ids: [ManagedObjectID] = []
        try tracker.rows.forEach { handle, entity, _ in ids.append(try #require(tracker.objectID(handle: handle, entity: entity))) }
        return ids
    }

    @Test func objectIDsInRangesAtEdgesAndClamped() throws {
        let (_, controller) = try fetchedController()
        var tracker = try #require(controller.tracker)
        let reference = try idsInOrder(tracker)
        let count = reference.count
        #expect(count == 500)
        let ranges: [Range<Int>] = [0..<0, 0..<1, 0..<20, 180..<200, 191..<193, 192..<384, 380..<400, 249..<251,
                                    480..<500, 499..<500, 0..<500, -10..<5, -5..<(-1), 490..<520, 500..<520, 600..<620]
        for range in ranges {
            #expect(tracker.objectIDs(in: range) == Array(reference[range.clamped(to: 0..<count)]), "range \(range)")
        }
        #expect(controller.sectionObjectIDs.flatMap { $0 } == reference)
        #expect(controller.fetchedObjects?.count == count)
    }

    @Test func objectAtEveryIndexPathAndOutOfRange() throws {
        let (_, controller) = try fetchedController()
        let reference = try idsInOrder(try #require(controller.tracker))
        let sizes = try #require(controller.sections).map(\.numberOfObjects)
        #expect(sizes == [250, 250])
        var position = 0
        for (section, size) in sizes.enumerated() {
            for item in 0..<size {
                let path = IndexPath(item: item, section: section)
                #expect(try controller.object(at: path).objectID == reference[position])
                position += 1
            }
        }
        for path in [IndexPath(item: 250, section: 0), IndexPath(item: -1, section: 1), IndexPath(item: 0, section: 2),
                     IndexPath(item: 0, section: -1)] {
            #expect(throws: FetchedResultsError.indexPathOutOfRange(path)) { try controller.object(at: path) }
        }
    }
}
