import Foundation
import Testing
@testable import OpenCoreData

@Suite struct ResultsCacheTests {
    @Test func reusedOnUnchangedStoreAndInvalidatedBySaves() throws {
        let stack = try TestStack(model: TestModels.banks())
        let writer = stack.context()
        let banks = try BankFixture.seed(writer, count: 40)
        let name = "frc-test-\(UUID().uuidString)"
        defer { FetchedResultsController.deleteCache(withName: name) }
        func fetch(_ request: FetchRequest<ManagedObject> = BankFixture.request(batchSize: 10))
            throws -> FetchedResultsController {
            let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: stack.context(),
                                                          sectionNameKeyPath: "state", cacheName: name)
            try controller.performFetch()
            return controller
        }
        let first = try fetch()
        #expect(first.statistics.queryFetches == 1)
        #expect(first.statistics.cacheHits == 0)
        let second = try fetch()
        #expect(second.statistics.cacheHits == 1)
        #expect(second.statistics.queryFetches == 0)
        #expect(second.sectionObjectIDs == first.sectionObjectIDs)
        #expect(second.sections?.map(\.name) == first.sections?.map(\.name))

        // A save to the entity's table invalidates.
        try banks[0].setValue("WA", forKey: "state")
        try writer.save()
        let third = try fetch()
        #expect(third.statistics.queryFetches == 1)
        #expect(third.sections?.map(\.name).contains("WA") == true)
        // A save to a related table the sort goes through invalidates too.
        let details = try #require(banks[1].value(forKey: "details") as? ManagedObject)
        try details.setValue(Date.distantFuture, forKey: "closeDate")
        try writer.save()
        let fourth = try fetch()
        #expect(fourth.statistics.queryFetches == 1)
        #expect(try fetch().statistics.cacheHits == 1)

        // Another request under the same name does not reuse it.
        let other = BankFixture.request(batchSize: 10)
        other.sortDescriptors = [QuerySortDescriptor(key: "state"), QuerySortDescriptor(key: "name")]
        #expect(try fetch(other).statistics.queryFetches == 1)

        FetchedResultsController.deleteCache(withName: name)
        #expect(try fetch().statistics.queryFetches == 1)
    }

    @Test func corruptFileIsIgnored() throws {
        let stack = try TestStack(model: TestModels.banks())
        try BankFixture.seed(stack.context(), count: 5)
        let name = "frc-corrupt-\(UUID().uuidString)"
        defer { FetchedResultsController.deleteCache(withName: name) }
        let url = ResultsCache.fileURL(forName: name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("OCDFRC01garbage".utf8).write(to: url)
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(), managedObjectContext: stack.context(),
                                                      sectionNameKeyPath: "state", cacheName: name)
        try controller.performFetch()
        #expect(controller.statistics.queryFetches == 1)
        #expect(controller.fetchedObjects?.count == 5)
        #expect(ResultsCache.fileURL(forName: "../../etc/x").lastPathComponent.hasPrefix(".._.._etc_x-"))
    }
}
