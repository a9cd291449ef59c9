import Foundation
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// A batch delete, a batch update or a dictionary fetch whose predicate PostgreSQL cannot say selects its rows in
/// the app and then acts on the selected keys: both in one snapshot, so another session changing a selected row
/// in between (made to happen there by ``ResidualSelectionHook``) never has the row acted on as it was selected.
/// A write starts again on a new snapshot; a read answers for one moment, never a mix of two.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLResidualSnapshotTests {
    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Item") {
                Attribute("name", .string)
                Attribute("value", .integer64)
            }
        }
    }

    /// `[cd]`: the server cannot fold diacritics as the app does, so this is answered through the residual path
    /// (it matches any e: café and été, not plain or moka).
    static let predicate = "name CONTAINS[cd] 'é'"

    /// A store holding café (10) and été (20), which match, and plain (40), which does not.
    static func seeded(options: StoreOptions = StoreOptions()) throws -> SharedStoreLocation {
        let location = try SharedStoreLocation(.postgreSQL, model: makeModel(), options: options)
        let context = try location.context()
        for (name, value) in [("café", 10), ("été", 20), ("plain", 40)] {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue(name, forKey: "name")
            try item.setValue(Int64(value), forKey: "value")
        }
        try context.save()
        return location
    }

    /// The items by name, with their values, read by a new coordinator.
    static func items(_ location: SharedStoreLocation) throws -> [String: Int64] {
        let context = try location.context()
        var items: [String: Int64] = [:]
        for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
            items[try #require(item.value(forKey: "name") as? String)] = try #require(item.value(forKey: "value") as? Int64)
        }
        return items
    }

    /// Another session (its own coordinator, so its own connections) renames `from` to `to` and sets its value.
    static func change(_ location: SharedStoreLocation, from: String, to: String, value: Int64) throws {
        let context = try location.context()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "name == %@", argumentArray: [from])
        let item = try #require(try context.fetch(request).first)
        try item.setValue(to, forKey: "name")
        try item.setValue(value, forKey: "value")
        try context.save()
    }

    /// Runs `action` after each residual selection on the location's store while `body` runs; how many times it ran.
    static func hooking(_ location: SharedStoreLocation, _ context: ManagedObjectContext,
                        _ action: @escaping @Sendable (_ call: Int) throws -> Void, _ body: () throws -> Void) throws -> Int {
        let identifier = try #require(context.persistentStoreCoordinator).primaryBackend().identifier
        let calls = Atomic<Int>(0)
        let failure = Mutex<(any Error)?>(nil)
        ResidualSelectionHook.set({
            let call = calls.add(1, ordering: .relaxed).newValue
            do { try action(call) } catch { failure.withLock { $0 = error } }
        }, forStore: identifier)
        defer { ResidualSelectionHook.set(nil, forStore: identifier) }
        try body()
        if let error = failure.withLock({ $0 }) { throw error }
        return calls.load(ordering: .relaxed)
    }

    /// café stops matching (renamed, revalued) between the selection and the delete: it survives, and the delete
    /// reports what a fresh evaluation selects.
    @Test(arguments: [false, true])
    func batchDeleteSparesARowChangedAfterSelection(history: Bool) throws {
        var options = StoreOptions()
        options.persistentHistoryTracking = history
        let location = try Self.seeded(options: options)
        let context = try location.context()
        let selection = FetchRequest<ManagedObject>(entityName: "Item")
        selection.predicate = try QueryPredicate(format: Self.predicate)
        let expectedID = try #require(try context.fetch(selection).first { try $0.value(forKey: "name") as? String == "été" }).objectID
        let request = BatchDeleteRequest(fetchRequest: selection)
        request.resultType = .objectIDs
        var result: BatchResult?
        let calls = try Self.hooking(location, context, { call in
            if call == 1 { try Self.change(location, from: "café", to: "moka", value: 100) }
        }) {
            result = try #require(try context.execute(request) as? BatchResult)
        }
        #expect(calls == 2, "selected again on a new snapshot once")
        #expect(result?.count == 1)
        #expect(result?.objectIDs == [expectedID])
        #expect(try Self.items(location) == ["moka": 100, "plain": 40])
        #expect(try location.context().count(for: selection) == 0, "a fresh evaluation selects nothing left")
    }

    /// café stops matching between the selection and the update: it keeps the other session's values.
    @Test func batchUpdateSparesARowChangedAfterSelection() throws {
        let location = try Self.seeded()
        let context = try location.context()
        let request = BatchUpdateRequest(entityName: "Item")
        request.predicate = try QueryPredicate(format: Self.predicate)
        request.propertiesToUpdate = ["value": Int64(7)]
        request.resultType = .objectIDs
        var result: BatchResult?
        let calls = try Self.hooking(location, context, { call in
            if call == 1 { try Self.change(location, from: "café", to: "moka", value: 100) }
        }) {
            result = try #require(try context.execute(request) as? BatchResult)
        }
        #expect(calls == 2, "selected again on a new snapshot once")
        #expect(result?.count == 1)
        #expect(result?.objectIDs.count == 1)
        #expect(try Self.items(location) == ["moka": 100, "été": 7, "plain": 40])
    }

    /// A count and a sum over the residual's rows while another session moves café out of the selection and
    /// changes its value: the answer is the one before (2 rows, 30) or after (1 row, 20), never the selected
    /// keys with the later values (2 rows, 120).
    @Test func dictionaryAggregateIsOneSnapshot() throws {
        let location = try Self.seeded()
        let context = try location.context()
        let request = FetchRequest<[String: Any]>(entityName: "Item")
        request.resultType = .dictionary
        request.predicate = try QueryPredicate(format: Self.predicate)
        request.propertiesToFetch = [
            ExpressionDescription(name: "n", expression: try QueryExpression(format: "count:(value)"), resultType: .integer64),
            ExpressionDescription(name: "total", expression: try QueryExpression(format: "sum:(value)"), resultType: .integer64),
        ]
        var row: [String: Any] = [:]
        let calls = try Self.hooking(location, context, { call in
            if call == 1 { try Self.change(location, from: "café", to: "moka", value: 100) }
        }) {
            row = try #require(try context.fetch(request).first)
        }
        #expect(calls == 1)
        let answer = [(row["n"] as? Int64) ?? -1, (row["total"] as? Int64) ?? -1]
        #expect(answer == [2, 30] || answer == [1, 20], "count and sum \(answer)")
    }

    /// A selected row that keeps changing under every attempt: the delete gives up after a bounded number of
    /// attempts with a typed error naming the request, and nothing is deleted.
    @Test func batchDeleteGivesUpAfterBoundedAttempts() throws {
        let location = try Self.seeded()
        let context = try location.context()
        let selection = FetchRequest<ManagedObject>(entityName: "Item")
        selection.predicate = try QueryPredicate(format: Self.predicate)
        var thrown: (any Error)?
        let calls = try Self.hooking(location, context, { call in
            // Still matching, at a new version each time.
            try Self.change(location, from: call == 1 ? "café" : "café \(call - 1)", to: "café \(call)", value: Int64(10 + call))
        }) {
            do { _ = try context.execute(BatchDeleteRequest(fetchRequest: selection)) } catch { thrown = error }
        }
        #expect(calls == PostgreSQLStore.snapshotAttempts)
        guard case StoreError.serializationFailure(let request, let attempts, _)? = thrown else {
            Issue.record("expected a serialization failure, got \(String(describing: thrown))")
            return
        }
        #expect(request == "a batch delete of 'Item'")
        #expect(attempts == PostgreSQLStore.snapshotAttempts)
        #expect(try Self.items(location).count == 3, "nothing deleted")
    }

    /// Another thread on the same coordinator (so the same connection pool) changes the row while the delete's
    /// snapshot is open: its save runs on a connection of its own, not inside the delete's transaction, so the
    /// delete still meets the change and spares the row.
    @Test func otherThreadsAreNotPinnedToTheSnapshot() throws {
        let location = try Self.seeded()
        let context = try location.context()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let selection = FetchRequest<ManagedObject>(entityName: "Item")
        selection.predicate = try QueryPredicate(format: Self.predicate)
        var result: BatchResult?
        let calls = try Self.hooking(location, context, { call in
            guard call == 1 else { return }
            let done = DispatchSemaphore(value: 0)
            let failure = Mutex<(any Error)?>(nil)
            Thread.detachNewThread {
                do {
                    let other = ManagedObjectContext(concurrencyType: .confinement)
                    other.persistentStoreCoordinator = coordinator
                    let request = FetchRequest<ManagedObject>(entityName: "Item")
                    request.predicate = try QueryPredicate(format: "name == 'café'")
                    let item = try #require(try other.fetch(request).first)
                    try item.setValue("moka", forKey: "name")
                    try other.save()
                } catch { failure.withLock { $0 = error } }
                done.signal()
            }
            if done.wait(timeout: .now() + 30) == .timedOut { throw CancellationError() }
            if let error = failure.withLock({ $0 }) { throw error }
        }) {
            result = try #require(try context.execute(BatchDeleteRequest(fetchRequest: selection)) as? BatchResult)
        }
        #expect(calls == 2)
        #expect(result?.count == 1)
        #expect(try Self.items(location) == ["moka": 10, "plain": 40])
    }

    /// With history on, every commit moves the history's transaction counter, which a residual batch write also
    /// moves: saves made meanwhile by another session (one every 5 ms here, on other rows) are conflicts the write
    /// retries, holding those commits off after the first, so they do not keep it from finishing.
    @Test func residualBatchUpdatesFinishAmidOrdinarySaves() throws {
        var options = StoreOptions()
        options.persistentHistoryTracking = true
        let location = try Self.seeded(options: options)
        let context = try location.context()
        let stop = Atomic<Bool>(false)
        let saves = Atomic<Int>(0)
        let saver = try location.context()
        let finished = DispatchSemaphore(value: 0)
        let saving = saver
        Thread.detachNewThread {
            var index = 0
            while !stop.load(ordering: .relaxed) {
                index += 1
                if let item = try? saving.insertNewObject(forEntityName: "Item") {
                    try? item.setValue("plain \(index)", forKey: "name")
                    try? item.setValue(Int64(index), forKey: "value")
                    if (try? saving.save()) != nil { saves.add(1, ordering: .relaxed) }
                }
                Thread.sleep(forTimeInterval: 0.005)
            }
            finished.signal()
        }
        defer {
            stop.store(true, ordering: .relaxed)
            finished.wait()
        }
        for round in 1...20 {
            let request = BatchUpdateRequest(entityName: "Item")
            request.predicate = try QueryPredicate(format: Self.predicate)
            request.propertiesToUpdate = ["value": Int64(round)]
            let result = try #require(try context.execute(request) as? BatchResult)
            #expect(result.count == 2)
        }
        #expect(saves.load(ordering: .relaxed) > 0)
    }
}
