import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Collects values from background threads.
final class Collector<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [T] = []
    func append(_ value: T) { lock.withLock { storage.append(value) } }
    var values: [T] { lock.withLock { storage } }
}

@Suite struct AsynchronousFetchTests {
    /// A store with `count` items, written with raw SQL for speed.
    static func populated(_ count: Int) throws -> TestStack {
        let stack = try TestStack(model: TestModels.todo())
        let entity = stack.model.entitiesByName["Item"]!
        let queue = try DatabaseQueue(path: stack.url.path)
        try queue.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATEDAT, ZDONE) VALUES (?, ?, 1, ?, ?, 0)")
            for index in 1...count {
                try statement.execute(arguments: [index, entity.entityNumber, "Item \(index)", Double(count - index)])
            }
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Item'", arguments: [count])
        }
        return stack
    }

    /// Runs `fetch` asynchronously on `context`, cancels it right after it is queued, and returns the error it
    /// ended with (nil when it finished with a result all the same).
    static func errorAfterCancellingAtOnce(_ fetch: OpenCoreData.FetchRequest<ManagedObject>,
                                           on context: ManagedObjectContext) async -> Error? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Error?, Never>) in
            let request = AsynchronousFetchRequest(fetchRequest: fetch) { result in
                continuation.resume(returning: result.finalResult == nil ? result.operationError : nil)
            }
            context.perform {
                let result = try? context.execute(request)
                result?.cancel()
            }
        }
    }

    func run<T>(_ context: ManagedObjectContext, _ request: AsynchronousFetchRequest<T>) throws -> AsynchronousFetchResult<T> {
        try context.performAndWait { try context.execute(request) }
    }

    @Test func confinementContextsAreRefusedNamingTheContextType() throws {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context(.confinement)
        let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item"))
        do {
            _ = try context.execute(request)
            Issue.record("a confinement context must refuse")
        } catch let error as ObjectGraphError {
            #expect(error.description.contains("ConfinementConcurrencyType"))
            #expect(error.description.contains("cannot support asynchronous fetch request"))
            #expect(error.description.contains("entity: Item"))
        }
    }

    @Test func progressMovesBeforeCompletionAndTheResultLandsInTheContext() async throws {
        let stack = try Self.populated(20_000)
        let context = stack.context(.privateQueue)
        let reports = Collector<Int64>()
        let fetch = FetchRequest<ManagedObject>(entityName: "Item")
        fetch.sortDescriptors = [QuerySortDescriptor(key: "createdAt")]
        let outcome: (count: Int, firstName: String?, registered: Int, reportsAtCompletion: Int) =
            try await withCheckedThrowingContinuation { continuation in
                let request = AsynchronousFetchRequest(fetchRequest: fetch) { result in
                    guard let objects = result.finalResult else {
                        continuation.resume(throwing: result.operationError ?? ObjectGraphError.cancelled)
                        return
                    }
                    continuation.resume(returning: (objects.count, try? objects.first?.value(forKey: "name") as? String,
                                                    context.registeredObjects.count, reports.values.count))
                }
                request.estimatedResultCount = 20_000
                request.progressInterval = 1000
                request.progressHandler = { reports.append($0) }
                context.perform {
                    let parent = Progress(totalUnitCount: 1)
                    parent.becomeCurrent(withPendingUnitCount: 1)
                    do {
                        let result = try context.execute(request)
                        #expect(result.progress.totalUnitCount == 20_000)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                    parent.resignCurrent()
                }
            }
        #expect(outcome.count == 20_000)
        #expect(outcome.firstName == "Item 20000")
        #expect(outcome.registered == 20_000)
        let values = reports.values
        #expect(outcome.reportsAtCompletion >= 20)
        #expect(values.first! < 20_000)
        #expect(values == values.sorted())
        #expect(values.last == 20_000)
    }

    @Test func cancellingStopsTheFetchAndNothingLands() async throws {
        let stack = try Self.populated(200_000)
        let context = stack.context(.privateQueue)
        let fetch = FetchRequest<ManagedObject>(entityName: "Item")
        fetch.sortDescriptors = [QuerySortDescriptor(key: "name", ascending: false)]
        let error = await Self.errorAfterCancellingAtOnce(fetch, on: context)
        #expect(error as? ObjectGraphError != nil)
        if case ObjectGraphError.cancelled? = error as? ObjectGraphError {} else {
            Issue.record("expected cancellation, got \(String(describing: error))")
        }
        let registered = context.performAndWait { context.registeredObjects.count }
        #expect(registered == 0)
    }

    @Test func cancellingMidFetchInterruptsTheSQL() async throws {
        let stack = try Self.populated(100_000)
        let context = stack.context(.privateQueue)
        let results = Collector<AsynchronousFetchResult<ManagedObject>>()
        let reports = Collector<Int64>()
        let outcome: (error: Error?, lastReport: Int64) = await withCheckedContinuation { continuation in
            let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item")) { result in
                continuation.resume(returning: (result.operationError, reports.values.last ?? 0))
            }
            request.progressInterval = 1000
            request.progressHandler = { count in
                reports.append(count)
                if count >= 5000 { results.values.first?.cancel() }
            }
            context.perform {
                if let result = try? context.execute(request) { results.append(result) }
            }
        }
        #expect(outcome.error.map { "\($0)" } == "\(ObjectGraphError.cancelled)")
        #expect(outcome.lastReport >= 5000 && outcome.lastReport < 100_000)
        #expect(context.performAndWait { context.registeredObjects.count } == 0)
    }

    @Test func theContextStaysUsableAndTheFetchReadsOneSnapshot() async throws {
        let stack = try Self.populated(50_000)
        let context = stack.context(.privateQueue)
        let writer = stack.context(.privateQueue)
        let started = Collector<Bool>()
        let fetch = FetchRequest<ManagedObject>(entityName: "Item")
        fetch.includesPendingChanges = false
        let counts: (fetched: Int, performsDuring: Int) = try await withCheckedThrowingContinuation { continuation in
            let performs = Collector<Int>()
            let request = AsynchronousFetchRequest(fetchRequest: fetch) { result in
                continuation.resume(returning: (result.finalResult?.count ?? -1, performs.values.count))
            }
            request.progressInterval = 100
            request.progressHandler = { count in
                guard started.values.isEmpty else { return }
                started.append(true)
                // Once reading has begun: another context saves a new item, and this context edits.
                try? writer.performAndWait {
                    try writer.insertNewObject(forEntityName: "Item").setValue("late", forKey: "name")
                    try writer.save()
                }
                context.perform {
                    performs.append(1)
                    if let item = try? context.insertNewObject(forEntityName: "TodoList") {
                        try? item.setValue("edited while fetching", forKey: "title")
                    }
                }
            }
            context.perform {
                do { _ = try context.execute(request) } catch { continuation.resume(throwing: error) }
            }
        }
        #expect(counts.fetched == 50_000)
        #expect(counts.performsDuring == 1)
        #expect(try FetchPlanCount.count(stack, "Item") == 50_001)
    }

    /// Registering the fetched objects takes several blocks on the context's queue, each queuing the next:
    /// `perform` blocks submitted meanwhile run between them, with part of the objects registered.
    @Test func performBlocksRunBetweenRegistrationSlices() throws {
        let stack = try Self.populated(20_000)
        let context = stack.context(.privateQueue)
        let finished = Collector<Int>()
        let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item")) { result in
            finished.append(result.finalResult?.count ?? -1)
        }
        _ = try run(context, request)
        // An observer that queues its next look from inside each look: one of them is always waiting on the
        // context's queue, so it runs before any slice queued after it, whatever the threads' scheduling.
        // (Looking from another thread with `performAndWait` depended on that thread being scheduled between
        // two slices, which a loaded machine need not do.)
        let seen = Collector<Int>()
        @Sendable func look() {
            context.perform {
                seen.append(context.registeredObjects.count)
                if finished.values.isEmpty { look() }
            }
        }
        look()
        while finished.values.isEmpty { Thread.sleep(forTimeInterval: 0.001) }
        context.performAndWait {}
        #expect(finished.values == [20_000])
        // Some block ran when part of the 20,000 objects (ten slices) were registered. Queued all at once,
        // the slices ran back to back and only 0 or 20,000 could be seen.
        let seenRegistered = Set(seen.values)
        #expect(seenRegistered.contains { $0 > 0 && $0 < 20_000 }, "registered counts seen: \(seenRegistered.sorted())")
    }

    @Test func asyncFetchCancelsWithItsTask() async throws {
        let stack = try Self.populated(200_000)
        let context = stack.context(.privateQueue)
        let fetch = FetchRequest<ManagedObject>(entityName: "Item")
        fetch.sortDescriptors = [QuerySortDescriptor(key: "name", ascending: false)]
        let task = Task { try await context.fetchInBackground(fetch).count }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("the fetch should have been cancelled")
        } catch {
            #expect(error as? ObjectGraphError != nil)
        }
        let small = FetchRequest<ManagedObject>(entityName: "Item")
        small.fetchLimit = 10
        let objects = try await context.fetchInBackground(small)
        #expect(objects.count == 10)
    }

    @Test func batchesArriveAsTheyAreRead() async throws {
        let stack = try Self.populated(5_000)
        let context = stack.context(.privateQueue)
        var batches = 0
        var total = 0
        for try await ids in context.fetchBatches(FetchRequest<ManagedObject>(entityName: "Item"), batchSize: 1000) {
            batches += 1
            total += ids.count
            let name = try context.performAndWait { try context.object(with: ids[0]).value(forKey: "name") as? String }
            #expect(name != nil)
        }
        #expect(batches == 5)
        #expect(total == 5_000)
    }
}
