import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Asynchronous fetches on both stores: progress as rows arrive, a cancel that ends the request as cancelled,
/// and on PostgreSQL a cancel that stops the statement on the server and a connection lost midway.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLAsynchronousFetchTests {
    struct RollBack: Error {}

    static func itemModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "rank", type: .integer64),
        ])])
    }

    /// Items ranked 0 ..< count, saved through a context.
    static func seed(_ context: ManagedObjectContext, count: Int) throws {
        for index in 0..<count {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("item \(index)", forKey: "name")
            try item.setValue(Int64(index), forKey: "rank")
        }
        try context.save()
    }

    static func itemsByRank() -> OpenCoreData.FetchRequest<ManagedObject> {
        let request = OpenCoreData.FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "rank", ascending: true)]
        return request
    }

    /// An asynchronous fetch of every item by rank, with its completion to wait for.
    final class Run: @unchecked Sendable {
        // @unchecked Sendable: the request is configured here, before it runs.
        let request: AsynchronousFetchRequest<ManagedObject>
        private let completion = Completion()

        init(interval: Int = 500, progress: (@Sendable (Int64) -> Void)? = nil) {
            request = AsynchronousFetchRequest(fetchRequest: PostgreSQLAsynchronousFetchTests.itemsByRank()) { [completion] result in
                completion.finish(result)
            }
            request.progressInterval = interval
            request.progressHandler = progress
        }

        /// Whether the completion has run.
        var isFinished: Bool { completion.result != nil }

        /// The finished result; the wait only bounds how long a hang takes to fail.
        func wait() throws -> AsynchronousFetchResult<ManagedObject> {
            try #require(completion.done.wait(timeout: .now() + 120) == .success, "the asynchronous fetch never completed")
            return try #require(completion.result)
        }
    }

    /// Where a completion leaves its result.
    final class Completion: @unchecked Sendable {
        // @unchecked Sendable: `finished` is guarded by `lock`.
        let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var finished: AsynchronousFetchResult<ManagedObject>?
        var result: AsynchronousFetchResult<ManagedObject>? { lock.withLock { finished } }

        func finish(_ result: AsynchronousFetchResult<ManagedObject>) {
            lock.withLock { finished = result }
            done.signal()
        }
    }

    /// Rows reported as they arrive, every `progressInterval` rows and once at the end, as on SQLite.
    @Test(arguments: agnosticKinds)
    func progressIsReportedAsRowsArrive(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: Self.itemModel())
        try Self.seed(location.context(), count: 3_000)
        let context = try location.context(.privateQueue)
        let reports = Mutex<[Int64]>([])
        let run = Run(interval: 500) { count in reports.withLock { $0.append(count) } }
        try context.performAndWait { _ = try context.execute(run.request) }
        let result = try run.wait()
        #expect(result.operationError == nil, "\(String(describing: result.operationError))")
        let ranks = try context.performAndWait { try (result.finalResult ?? []).map { try $0.value(forKey: "rank") as? Int64 } }
        #expect(ranks == (0..<3_000).map { Int64($0) })
        #expect(reports.withLock { $0 } == [500, 1_000, 1_500, 2_000, 2_500, 3_000, 3_000])
        #expect(result.progress.completedUnitCount == 3_000)
    }

    /// Cancelled while its rows stream in (the progress handler holds the reading thread at row 500): the
    /// request ends with ``ObjectGraphError/cancelled`` and no result, on both stores.
    @Test(arguments: agnosticKinds)
    func cancelMidStreamEndsTheRequestAsCancelled(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: Self.itemModel())
        try Self.seed(location.context(), count: 3_000)
        let context = try location.context(.privateQueue)
        let reached = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
        let run = Run(interval: 500) { count in
            if count == 500 { reached.signal(); proceed.wait() }
        }
        let result = try context.performAndWait { try context.execute(run.request) }
        try #require(reached.wait(timeout: .now() + 60) == .success, "no progress was reported")
        result.cancel()
        proceed.signal()
        let finished = try run.wait()
        #expect(finished.finalResult == nil)
        guard case ObjectGraphError.cancelled? = finished.operationError else {
            Issue.record("the cancelled fetch ended with \(String(describing: finished.operationError))")
            return
        }
        #expect(context.performAndWait { context.registeredObjects.isEmpty }, "a cancelled fetch registered objects")
    }

    /// A fetch whose statement waits on a lock another session holds can only end before the lock goes if the
    /// server stops it: cancelled, it ends as cancelled with the lock still held, the server shows the statement
    /// gone, and the pool's only connection runs the next fetch.
    @Test func cancelStopsTheStatementOnTheServer() throws {
        var configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 1)
        configuration.applicationName = "ocd-async-cancel-" + UUID().uuidString.prefix(8).lowercased()
        defer { PostgreSQLTestServer.drop(configuration) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.itemModel())
        let store = try coordinator.addPersistentStore(configuration: configuration)
        let seeding = ManagedObjectContext(concurrencyType: .confinement)
        seeding.persistentStoreCoordinator = coordinator
        try Self.seed(seeding, count: 100)

        var adminConfiguration = configuration
        adminConfiguration.applicationName = "ocd-async-cancel-admin"
        adminConfiguration.poolSize = 2  // one holds the lock, one watches
        let admin = PostgreSQLConnectionPool(configuration: adminConfiguration)
        defer { admin.close() }
        let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), holderDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? admin.withSession { session in
                try session.transaction {
                    try session.execute("LOCK TABLE ZITEM IN ACCESS EXCLUSIVE MODE")
                    locked.signal()
                    release.wait()
                    throw RollBack()
                }
            }
            holderDone.signal()
        }
        locked.wait()
        defer { release.signal(); holderDone.wait() }

        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        let run = Run()
        let result = try context.performAndWait { try context.execute(run.request) }
        // The statement, once the server shows it waiting on the lock.
        var backend: Int64?
        let deadline = Date(timeIntervalSinceNow: 30)
        while backend == nil, Date() < deadline {
            backend = try admin.withSession { session in
                try session.rows("""
                    SELECT pid FROM pg_stat_activity
                    WHERE application_name = ? AND wait_event_type = 'Lock' AND state = 'active'
                    """, [configuration.applicationName.storeValue])
            }.first.flatMap { Int64.fromStoreValue($0[0]) }
            if backend == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        let pid = try #require(backend, "the fetch was never seen waiting on the lock: the test did not test")
        result.cancel()
        let finished = try run.wait()
        guard case ObjectGraphError.cancelled? = finished.operationError else {
            Issue.record("the cancelled fetch ended with \(String(describing: finished.operationError))")
            return
        }
        let running = try admin.withSession { session in
            try session.rows("SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND state = 'active'", [pid.storeValue])
        }
        #expect(running.first.flatMap { Int.fromStoreValue($0[0]) } == 0, "the cancelled statement still runs on the server")

        release.signal()
        // The pool's one connection is the cancelled statement's, back and usable.
        #expect(try store.pool.withSession { try $0.rows("SELECT pg_backend_pid()") }.first.flatMap { Int64.fromStoreValue($0[0]) } == pid)
        let again = Run()
        _ = try context.performAndWait { try context.execute(again.request) }
        #expect(try again.wait().finalResult?.count == 100)
    }

    /// The server ends the connection of an asynchronous fetch while its statement runs: the request ends
    /// with ``StoreError/connectionLost(server:reason:)`` (no hang, no partial result), and the store's
    /// next fetch runs on a fresh connection.
    @Test func connectionLostMidStreamEndsTheRequestWithATypedError() throws {
        var configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        configuration.applicationName = "ocd-async-cut-" + UUID().uuidString.prefix(8).lowercased()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try Self.itemModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(configuration: configuration)
        // Written by the server itself: 100,000 rows of half a kilobyte, far more than the buffers on the way.
        let count = 100_000
        _ = try store.pool.withSession { session in
            try session.execute("""
                INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK)
                SELECT g, ?, 1, repeat('x', 500) || g, g FROM generate_series(1, ?) AS g
                """, [Int64(model.entitiesByName["Item"]!.entityNumber).storeValue, Int64(count).storeValue])
        }

        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        var adminConfiguration = configuration
        adminConfiguration.applicationName = "ocd-async-cut-admin"
        let admin = PostgreSQLConnectionPool(configuration: adminConfiguration)
        defer { admin.close() }
        let run = Run()
        _ = try context.performAndWait { try context.execute(run.request) }
        // Terminated while its statement runs, that is before the last row has been sent.
        var cut = false
        let deadline = Date(timeIntervalSinceNow: 60)
        while !cut, Date() < deadline, !run.isFinished {
            cut = try admin.withSession { session in
                try session.rows("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = ? AND state = 'active' AND pid <> pg_backend_pid()
                    """, [configuration.applicationName.storeValue])
            }.contains { Bool.fromStoreValue($0[0]) == true }
            if !cut { Thread.sleep(forTimeInterval: 0.002) }
        }
        #expect(cut, "the fetch's statement was never seen running: the test did not test")
        let finished = try run.wait()
        #expect(finished.finalResult == nil)
        guard case StoreError.connectionLost? = finished.operationError else {
            Issue.record("the cut fetch ended with \(String(describing: finished.operationError)), not connectionLost")
            return
        }
        let counted = try context.performAndWait { try context.count(for: OpenCoreData.FetchRequest<ManagedObject>(entityName: "Item")) }
        #expect(counted == count)
    }
}
