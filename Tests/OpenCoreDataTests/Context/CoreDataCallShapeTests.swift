import Foundation
import Testing
@testable import OpenCoreData

/// Core Data's call shapes compile as they are, inside `async` functions too (where an `async` overload of
/// the same name would be chosen and the line would not compile without `await`), and do what they say.
@Suite struct CoreDataCallShapeTests {
    static func container(_ directory: TemporaryDirectory) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Banks", managedObjectModel: try TypedObjectTests.model())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: directory.file("Banks.sqlite"))]
        try container.loadPersistentStores()
        return container
    }

    @Test func synchronousFetchesCompileInsideAsyncFunctions() async throws {
        let stack = try TestStack(model: TypedObjectTests.model())
        let context = stack.context()
        for name in ["Cedar", "Aspen", "Birch"] { try context.insertNew(Bank.self).name = name }
        try context.save()

        let request = Bank.fetchRequest()
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        // Core Data's spellings, unchanged: the synchronous fetch, assigned to an array or not.
        let banks: [Bank] = try context.fetch(request)
        let results = try context.fetch(request)
        #expect(banks.map(\.name) == ["Aspen", "Birch", "Cedar"])
        #expect(results.map(\.name) == banks.map(\.name))
        #expect(try context.fetch(request).count == 3)

        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        try controller.performFetch()
        #expect(controller.fetchedObjects?.count == 3)
        // The background form has its own name (and needs a queue of its own).
        #expect(try await stack.context(.privateQueue).fetchInBackground(request).count == 3)
    }

    @Test func performReturnsTheBlocksValueAndThrowsOnlyWhenItThrows() async throws {
        let directory = TemporaryDirectory()
        let container = try Self.container(directory)
        let context = container.newBackgroundContext()
        // A block that cannot throw needs no `try`; its result need not be Sendable, only handed over.
        let inserted = await context.perform {
            let bank = try? context.insertNew(Bank.self)
            bank?.name = "Elm"
            return context.insertedObjects.count
        }
        #expect(inserted == 1)
        let saved: FetchResults<Bank> = try await context.perform {
            try context.save()
            return try context.fetch(Bank.fetchRequest())
        }
        #expect(saved.count == 1)
        do {
            try await context.perform { throw ObjectGraphError.noPersistentStore }
            Issue.record("the block's error was not thrown")
        } catch ObjectGraphError.noPersistentStore {}

        let names = await container.performBackgroundTask { background in
            (try? background.fetch(Bank.fetchRequest()))?.map { $0.name ?? "" } ?? []
        }
        #expect(names == ["Elm"])
        let count = try await container.performBackgroundTask { background in
            try background.fetch(Bank.fetchRequest()).count
        }
        #expect(count == 1)
    }
}
