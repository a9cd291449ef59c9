import Foundation
import Testing
@testable import OpenCoreData

@Suite struct FetchedResultsControllerTests {
    @Test func sectionsThroughRelationshipsAndAccessors() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        try BankFixture.seed(context, count: 30)
        let reader = stack.context()
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(), managedObjectContext: reader,
                                                      sectionNameKeyPath: "state", cacheName: nil)
        #expect(controller.sections == nil)
        try controller.performFetch()
        let sections = try #require(controller.sections)
        #expect(sections.map(\.name) == BankFixture.states)
        #expect(sections.map(\.numberOfObjects) == Array(repeating: 5, count: 6))
        #expect(sections.map(\.indexTitle) == ["C", "F", "G", "I", "N", "T"])
        #expect(controller.sectionIndexTitles == ["C", "F", "G", "I", "N", "T"])
        #expect(try controller.section(forSectionIndexTitle: "G", at: 2) == 2)
        #expect(throws: FetchedResultsError.unknownSectionIndexTitle("Z")) { try controller.section(forSectionIndexTitle: "Z", at: 0) }
        #expect(controller.sectionIndexTitle(forSectionName: "texas") == "T")
        // Newest close date first inside each state.
        for (index, section) in sections.enumerated() {
            let objects = try section.objects()
            let dates = try objects.map { try #require($0.value(forKeyPath: "details.closeDate") as? Date) }
            #expect(dates == dates.sorted(by: >))
            #expect(try objects.allSatisfy { try $0.value(forKey: "state") as? String == BankFixture.states[index] })
            #expect(section.objectIDs == objects.map(\.objectID))
        }
        let fetched = try #require(controller.fetchedObjects)
        #expect(fetched.count == 30)
        let object = try controller.object(at: IndexPath(item: 2, section: 3))
        #expect(controller.indexPath(forObject: object) == IndexPath(item: 2, section: 3))
        #expect(fetched[3 * 5 + 2] == object)
        #expect(throws: FetchedResultsError.indexPathOutOfRange(IndexPath(item: 5, section: 0))) {
            try controller.object(at: IndexPath(item: 5, section: 0))
        }
        #expect(IndexPath(row: 1, section: 2).row == 1)
    }

    @Test func withoutSectionKeyPathOneSection() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        let request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.count == 1)
        #expect(controller.sections?.first?.numberOfObjects == 0)
        try BankFixture.seed(context, count: 4)
        #expect(controller.sections?.first?.numberOfObjects == 4)
        #expect(try controller.object(at: IndexPath(item: 0, section: 0)).value(forKey: "name") as? String == "Bank 0")
    }

    @Test func refusals() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        let unsorted = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        #expect(throws: FetchedResultsError.missingSortDescriptors(entity: "FailedBankInfo")) {
            try FetchedResultsController(fetchRequest: unsorted, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        }
        let byName = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        byName.sortDescriptors = [QuerySortDescriptor(key: "name"), QuerySortDescriptor(key: "state")]
        #expect(throws: FetchedResultsError.sectionKeyPathMismatch(sectionNameKeyPath: "state", firstSortKey: "name")) {
            try FetchedResultsController(fetchRequest: byName, managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        }
        let limited = BankFixture.request()
        limited.fetchLimit = 5
        #expect(throws: FetchedResultsError.self) {
            try FetchedResultsController(fetchRequest: limited, managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        }
        let badKey = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        badKey.sortDescriptors = [QuerySortDescriptor(key: "details.nope")]
        let controller = try FetchedResultsController(fetchRequest: badKey, managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        #expect(throws: (any Error).self) { try controller.performFetch() }
        #expect(throws: FetchedResultsError.notFetched) { try controller.object(at: IndexPath(item: 0, section: 0)) }
    }

    @Test func batchFaultingLoadsOnlyWhatIsUsed() throws {
        let stack = try TestStack(model: TestModels.banks())
        try BankFixture.seed(stack.context(), count: 100, states: ["CA"])
        let context = stack.context()
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(batchSize: 20),
                                                      managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        try controller.performFetch()
        #expect(context.registeredObjects.isEmpty)
        #expect(controller.sections?.first?.numberOfObjects == 100)
        let first = try controller.object(at: IndexPath(item: 0, section: 0))
        #expect(!first.isFault)
        #expect(context.registeredObjects.count == 20)
        _ = try controller.object(at: IndexPath(item: 19, section: 0))
        #expect(context.registeredObjects.count == 20)
        _ = try controller.object(at: IndexPath(item: 45, section: 0))
        #expect(context.registeredObjects.count == 40)
        #expect(context.registeredObjects.allSatisfy { !$0.isFault })
    }

    @Test func batchFaultingInChildContext() throws {
        let stack = try TestStack(model: TestModels.banks())
        try BankFixture.seed(stack.context(), count: 60, states: ["CA", "NY"])
        let parent = stack.context()
        let child = ManagedObjectContext(concurrencyType: .confinement)
        child.parent = parent
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(batchSize: 20),
                                                      managedObjectContext: child, sectionNameKeyPath: "state", cacheName: nil)
        try controller.performFetch()
        #expect(child.registeredObjects.isEmpty)
        #expect(controller.sections?.map(\.numberOfObjects) == [30, 30])
        let object = try controller.object(at: IndexPath(item: 3, section: 1))
        #expect(try object.value(forKey: "state") as? String == "NY")
        #expect(child.registeredObjects.count == 20)
        #expect(parent.registeredObjects.count == 20)
    }

    @Test func pendingChangesShowAtFetch() throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        let banks = try BankFixture.seed(context, count: 12)
        try BankFixture.insertBank(context, name: "New", state: "ZZ", closeDate: nil)
        context.delete(banks[0])
        try banks[1].setValue("AA", forKey: "state")
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(batchSize: 5),
                                                      managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == ["AA", "CA", "FL", "GA", "IL", "NY", "TX", "ZZ"])
        #expect(controller.sections?.map(\.numberOfObjects) == [1, 1, 1, 2, 2, 2, 2, 1])
        #expect(controller.indexPath(forObject: banks[1]) == IndexPath(item: 0, section: 0))
    }

    @Test func asyncFetchRunsOffTheQueue() async throws {
        let stack = try TestStack(model: TestModels.banks())
        try BankFixture.seed(stack.context(), count: 18)
        let context = stack.context(.privateQueue)
        let controller = try FetchedResultsController(fetchRequest: BankFixture.request(batchSize: 10),
                                                      managedObjectContext: context, sectionNameKeyPath: "state", cacheName: nil)
        try await controller.performFetchInBackground()
        let counts = await context.perform { controller.sections?.map(\.numberOfObjects) ?? [] }
        #expect(counts == Array(repeating: 3, count: 6))
        let name = try await context.perform {
            try controller.object(at: IndexPath(item: 0, section: 5)).value(forKey: "state") as? String
        }
        #expect(name == "TX")
    }

    @Test func predicateKeyPathsAreFound() throws {
        let predicate = try QueryPredicate(format: """
            details.zip > 5 AND name == 'a.b' OR ANY items.tag == $X \
            OR SUBQUERY(items, $i, $i.owner.name == 'x').@count > 0
            """)
        var collector = ResultsDependency.KeyPathCollector()
        collector.visit(predicate, variables: [:])
        #expect(collector.paths == [["details", "zip"], ["name"], ["items", "tag"], ["items"], ["items", "owner", "name"]])
    }
}
