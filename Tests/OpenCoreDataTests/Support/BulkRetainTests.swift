import Foundation
import Testing
@testable import OpenCoreData

/// References added in bulk (`Unmanaged.retain(count:)`, `SharedReferences`) are each handed out once or
/// given back: after each path that makes many objects, IDs or rows at once, and once what it made is gone,
/// the entity, the context's reference and the rows' block hold what they held before.
@Suite struct BulkRetainTests {
    final class Token {}

    @Test func sharedReferencesHandOutExactlyWhatTheyAdd() {
        let token = Token()
        let before = _getRetainCount(token)
        var taken: [Token] = []
        var references = SharedReferences(to: token)
        for _ in 0..<5 { taken.append(references.take(expecting: 8)) }
        #expect(_getRetainCount(token) == before + 8)
        references.finish()
        #expect(_getRetainCount(token) == before + 5)
        // Empty again: the next take adds at least one.
        var more = SharedReferences(to: token)
        for _ in 0..<3 { taken.append(more.take(expecting: 0)) }
        more.finish()
        #expect(_getRetainCount(token) == before + 8)
        taken.removeAll()
        #expect(_getRetainCount(token) == before)
    }

    private static func seeded() throws -> TestStack {
        let stack = try TestStack(model: TestModels.todo())
        let writer = stack.context()
        for index in 0..<300 {
            let item = try writer.insertNewObject(forEntityName: "Item")
            try item.setValue("Item \(1000 + index)", forKey: "name")
        }
        try writer.save()
        return stack
    }

    @Test func everyBulkPathLeavesTheCountsAsItFoundThem() throws {
        let stack = try Self.seeded()
        let entity = try #require(stack.model.entitiesByName["Item"])
        let context = stack.context()
        // One read first, so caches made once (statements, the keyed reader) are there before counting.
        _ = try context.fetch(FetchRequest.itemsByName())
        context.reset()
        let entityBefore = _getRetainCount(entity)
        let referenceBefore = _getRetainCount(context.reference)
        weak var block: RowBlock?
        do {
            // A plain fetch into an empty registry: objects made in one go.
            let all = try context.fetch(FetchRequest.itemsByName())
            #expect(all.count == 300)
            block = all.first?.row?.storageBlock
            #expect(block != nil)
            #expect(_getRetainCount(entity) > entityBefore && _getRetainCount(context.reference) > referenceBefore)
        }
        context.reset()
        #expect(block == nil, "a row block outlived every row and object")
        do {
            // A batched fetch, loaded a batch at a time by key.
            let batched = try context.fetch(FetchRequest.itemsByName(batchSize: 20))
            var names = 0
            for object in batched { names += (try object.value(forKey: "name") as? String) == nil ? 0 : 1 }
            #expect(names == 300)
        }
        context.reset()
        do {
            // A controller moving through its batches, letting go of the objects it left behind.
            let controller = try FetchedResultsController(fetchRequest: FetchRequest.itemsByName(batchSize: 20), managedObjectContext: context,
                                                          sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            for position in 0..<300 { _ = try controller.object(at: IndexPath(item: position, section: 0)) }
        }
        context.reset()
        do {
            // IDs alone.
            let ids = try context.fetch(FetchRequest<ManagedObjectID>(objectIDsOf: "Item"))
            #expect(ids.count == 300)
        }
        #expect(_getRetainCount(entity) == entityBefore)
        #expect(_getRetainCount(context.reference) == referenceBefore)
    }

    @Test func asynchronousFetchLeavesTheCountsAsItFoundThem() async throws {
        let stack = try Self.seeded()
        let entity = try #require(stack.model.entitiesByName["Item"])
        let context = stack.context(.privateQueue)
        let counts: @Sendable () -> (UInt, UInt) = { (_getRetainCount(entity), _getRetainCount(context.reference)) }
        let before = context.performAndWait { counts() }
        for _ in 0..<2 {
            let count: Int = try await withCheckedThrowingContinuation { continuation in
                let request = AsynchronousFetchRequest(fetchRequest: FetchRequest.itemsByName()) { result in
                    continuation.resume(returning: result.finalResult?.count ?? -1)
                }
                context.perform {
                    do { _ = try context.execute(request) } catch { continuation.resume(throwing: error) }
                }
            }
            #expect(count == 300)
            context.performAndWait { context.reset() }
        }
        // The background block that made the objects may still hold them for a moment after the completion
        // ran (it returns after handing them over): the counts must come back, however long that takes on a
        // loaded machine. A reference added and never given back never comes back; the deadline only bounds
        // how long a failure takes to report.
        let deadline = ContinuousClock.now + .seconds(60)
        var after = context.performAndWait { counts() }
        while after != before && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            after = context.performAndWait { counts() }
        }
        #expect(after == before)
    }
}
