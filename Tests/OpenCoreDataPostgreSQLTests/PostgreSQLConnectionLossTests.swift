import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// A save whose connection is cut while it writes: it fails with a typed error, nothing it wrote stays, and
/// the store goes on working with fresh connections.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLConnectionLossTests {
    struct RollBack: Error {}

    @Test func saveCutMidwayLeavesNothingAndTheStoreRecovers() throws {
        var configuration = try PostgreSQLTestServer.freshConfiguration()
        configuration.applicationName = "ocd-cut-" + UUID().uuidString.prefix(8).lowercased()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }
        let count = 2_000
        let changes = StoreChangeSet(inserts: (1...count).map {
            PostgreSQLChangeFeedTests.tagInsert(model, key: Int64($0), label: "tag \($0)")
        })

        // Another transaction inserts the save's last key and holds it uncommitted: the save writes the rows
        // before it, then waits on that key, and is cut there.
        let holderReady = DispatchSemaphore(value: 0), releaseHolder = DispatchSemaphore(value: 0)
        let holderDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? store.pool.withSession { session in
                try session.transaction {
                    try session.execute(
                        "INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES (?, ?, 1, 'holder')",
                        [Int64(count).storeValue, Int64(model.entitiesByName["Tag"]!.entityNumber).storeValue])
                    holderReady.signal()
                    releaseHolder.wait()
                    throw RollBack()
                }
            }
            holderDone.signal()
        }
        holderReady.wait()

        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let saveDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { _ = try store.apply(changes) }
            outcome.withLock { $0 = result }
            saveDone.signal()
        }
        // The save's connection, once it waits on the held key.
        let admin = PostgreSQLConnectionPool(configuration: configuration)
        defer { admin.close() }
        var cut = false
        let deadline = Date(timeIntervalSinceNow: 30)
        while !cut, Date() < deadline {
            cut = try admin.withSession { session in
                try session.rows("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = ? AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
                    """, [configuration.applicationName.storeValue])
            }.contains { Bool.fromStoreValue($0[0]) == true }
            if !cut { Thread.sleep(forTimeInterval: 0.02) }
        }
        #expect(cut, "the save never waited on the held key: the test did not test")
        releaseHolder.signal()
        saveDone.wait()
        holderDone.wait()

        let result = try #require(outcome.withLock { $0 })
        guard case .failure(let error) = result else {
            Issue.record("the cut save reported success")
            return
        }
        #expect(error is StoreError, "\(error)")
        let left = try store.pool.withSession { try $0.rows("SELECT count(*) FROM ZTAG") }
        #expect(left.first.flatMap { Int.fromStoreValue($0[0]) } == 0, "the cut save left rows behind")

        // The pool drops the dead connection; the same save then goes through whole.
        try store.apply(changes)
        let written = try store.pool.withSession { try $0.rows("SELECT count(*) FROM ZTAG") }
        #expect(written.first.flatMap { Int.fromStoreValue($0[0]) } == count)
    }

    /// The server ends the connection of a fetch while its rows stream in (`pg_terminate_backend`, as an
    /// administrator or a failover would): the fetch fails with ``StoreError/connectionLost`` rather
    /// than hanging or returning part of the rows, and the store's next fetches run on fresh connections.
    @Test func fetchCutWhileRowsStreamFailsTypedAndTheStoreRecovers() throws {
        var configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        configuration.applicationName = "ocd-fetch-cut-" + UUID().uuidString.prefix(8).lowercased()
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try LibraryModel.make()
        let tag = model.entitiesByName["Tag"]!
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        defer { store.close() }
        // Written by the server itself: 100,000 rows of half a kilobyte, some 50 MB to stream.
        let count = 100_000
        try store.pool.withSession { session in
            try session.execute("""
                INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZLABEL)
                SELECT g, ?, 1, repeat('x', 500) || g FROM generate_series(1, ?) AS g
                """, [Int64(tag.entityNumber).storeValue, Int64(count).storeValue])
        }

        let outcome = Mutex<Result<Int, any Error>?>(nil)
        let fetchDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { try store.fetchRows(entity: tag, predicate: nil).count }
            outcome.withLock { $0 = result }
            fetchDone.signal()
        }
        // Terminated while its query is running, that is before the last row has been sent.
        var admin = configuration
        admin.applicationName = "ocd-fetch-cut-admin"
        let killer = PostgreSQLConnectionPool(configuration: admin)
        defer { killer.close() }
        var cut = false
        let deadline = Date(timeIntervalSinceNow: 60)
        while !cut, Date() < deadline, outcome.withLock({ $0 }) == nil {
            cut = try killer.withSession { session in
                try session.rows("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = ? AND state = 'active' AND pid <> pg_backend_pid()
                    """, [configuration.applicationName.storeValue])
            }.contains { Bool.fromStoreValue($0[0]) == true }
            if !cut { Thread.sleep(forTimeInterval: 0.002) }
        }
        #expect(cut, "the fetch was never seen running: the test did not test")
        #expect(fetchDone.wait(timeout: .now() + 120) == .success, "the fetch hung after its connection was cut")

        let result = try #require(outcome.withLock { $0 })
        switch result {
        case .success(let rows):
            Issue.record("the cut fetch reported success with \(rows) of \(count) rows")
        case .failure(let error):
            guard case StoreError.connectionLost = error else {
                Issue.record("the cut fetch failed with \(error), not StoreError.connectionLost")
                return
            }
        }
        #expect(try store.count(entity: tag, predicate: nil) == count)
        #expect(try store.fetchRows(entity: tag, predicate: nil, limit: 5).count == 5)
    }
}
