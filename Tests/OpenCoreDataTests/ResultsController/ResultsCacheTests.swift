import Foundation
import Testing
@testable import OpenCoreData

@Suite struct ResultsCacheTests {
    @Test func reusedOnUnchangedStoreAndInvalidatedBySaves() throws {
        let stack = try TestStack(model: TestModels.banks())
        let writer = stack.context()
        let banks = try BankFixture.seed(writer, count: 40)
        let name = "frc-test-\(UUID().uuidString)"
        defer { FetchedResultsController<ManagedObject>.deleteCache(withName: name) }
        func fetch(_ request: FetchRequest<ManagedObject> = BankFixture.request(batchSize: 10))
            throws -> FetchedResultsController<ManagedObject> {
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

        FetchedResultsController<ManagedObject>.deleteCache(withName: name)
        #expect(try fetch().statistics.queryFetches == 1)
    }

    @Test func corruptFileIsIgnored() throws {
        let stack = try TestStack(model: TestModels.banks())
        try BankFixture.seed(stack.context(), count: 5)
        let name = "frc-corrupt-\(UUID().uuidString)"
        defer { FetchedResultsController<ManagedObject>.deleteCache(withName: name) }
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

    /// Per-row entities and every column form survive the file exactly (storage classes included).
    @Test(arguments: [true, false])
    func snapshotRoundTripsThroughTheFile(soleEntity: Bool) throws {
        let name = "frc-roundtrip-\(UUID().uuidString)"
        defer { FetchedResultsController<ManagedObject>.deleteCache(withName: name) }
        var snapshot = ResultsCache.Snapshot()
        snapshot.handles = [3, 1, 2, -5]
        if soleEntity { snapshot.soleEntity = 4 } else { snapshot.entities = [4, 4, 6, 4] }
        snapshot.keys = [.same("CA".storeValue, count: 4), .integers([1, 2, 2, 9]), .reals([0.5, 1, 1, 2]),
                         .values([.null, 1.storeValue, 1.0.storeValue, Data([7]).storeValue])]
        snapshot.sectionCounts = [4]
        let cache = ResultsCache(url: ResultsCache.fileURL(forName: name), fingerprint: "f", keyCount: 4)
        cache.store(snapshot, token: "t")
        #expect(cache.load(token: "other") == nil)
        let loaded = try #require(cache.load(token: "t"))
        #expect(loaded.fromCache)
        #expect(loaded.handles == snapshot.handles)
        #expect(loaded.entities == snapshot.entities)
        #expect(loaded.soleEntity == snapshot.soleEntity)
        #expect(loaded.sectionCounts == snapshot.sectionCounts)
        #expect(loaded.keys.count == snapshot.keys.count)
        for (read, written) in zip(loaded.keys, snapshot.keys) {
            #expect((0..<read.count).map { ExactValue(read[$0]) } == (0..<written.count).map { ExactValue(written[$0]) })
        }
        // Typed columns come back typed; the repeated value comes back as a column of its own kind.
        #expect(loaded.keys[1] == .integers([1, 2, 2, 9]))
        #expect(loaded.keys[2] == .reals([0.5, 1, 1, 2]))
    }
}
