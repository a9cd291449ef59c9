import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The server restarts (an administrator's fast shutdown, then a start) while a save is writing: the save
/// fails with a typed error or completes, its data and history are there whole or not at all, and the same
/// store object goes on working once the server is back, without being reopened.
@Suite(.enabled(if: PrivatePostgreSQLServer.isAvailable, PrivatePostgreSQLServer.skipReason))
struct PostgreSQLServerRestartTests {
    static func count(_ table: String, in store: PostgreSQLStore) throws -> Int {
        try store.pool.withSession { try $0.rows("SELECT count(*) FROM \(table)") }.first.flatMap { Int.fromStoreValue($0[0]) } ?? -1
    }

    @Test func restartDuringASaveLeavesAllOrNothingAndTheStoreReconnects() throws {
        let server = try PrivatePostgreSQLServer()
        defer { server.remove() }
        var configuration = try PostgreSQLStoreConfiguration(url: server.url)
        configuration.applicationName = "ocd-restart-" + UUID().uuidString.prefix(8).lowercased()
        configuration.poolSize = 3
        let model = try LibraryModel.make()
        let tag = model.entitiesByName["Tag"]!
        let store = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true)
        defer { store.close() }
        // Every connection of the pool open and idle, so the restart leaves dead ones in it.
        try store.pool.withSession { _ in try store.pool.withSession { _ in try store.pool.withSession { _ in } } }

        // One INSERT per row: long enough a save for the restart to land inside it.
        let count = 5_000
        func save(from first: Int64) -> (StoreChangeSet, HistoryEntry) {
            let keys = first..<first + Int64(count)
            return (StoreChangeSet(inserts: keys.map { PostgreSQLChangeFeedTests.tagInsert(model, key: $0, label: "tag \($0)") }),
                    HistoryEntry(author: "restart", changes: keys.map { .init(type: .insert, entityNumber: tag.entityNumber, primaryKey: $0) }))
        }
        let (changes, history) = save(from: 1)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let saveDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { _ = try store.apply(changes, history: history) }
            outcome.withLock { $0 = result }
            saveDone.signal()
        }

        // The save's transaction has written (it has a transaction id) and is still open: restart now.
        var admin = configuration
        admin.applicationName = "ocd-restart-admin"
        let watcher = PostgreSQLConnectionPool(configuration: admin)
        var writing = false
        let deadline = Date(timeIntervalSinceNow: 60)
        while !writing, Date() < deadline, outcome.withLock({ $0 }) == nil {
            writing = try watcher.withSession { session in
                try session.rows("SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND backend_xid IS NOT NULL",
                                 [configuration.applicationName.storeValue])
            }.first.flatMap { Int.fromStoreValue($0[0]) } == 1
            if !writing { Thread.sleep(forTimeInterval: 0.005) }
        }
        watcher.close()
        #expect(writing, "the save was never seen writing: the test did not test")
        try server.stop()
        try server.start()
        #expect(saveDone.wait(timeout: .now() + 120) == .success, "the save hung after the restart")

        let result = try #require(outcome.withLock { $0 })
        var committed = true
        if case .failure(let error) = result {
            committed = false
            guard case StoreError.connectionLost = error else {
                Issue.record("the save failed with \(error), not StoreError.connectionLost")
                return
            }
        }
        // The same store object, its pooled connections all dead: every rows or none, history alike.
        let rows = try Self.count("ZTAG", in: store)
        let transactions = try Self.count("ATRANSACTION", in: store)
        let recordedChanges = try Self.count("ACHANGE", in: store)
        #expect([0, count].contains(rows), "half a save was written: \(rows) of \(count) rows")
        #expect(rows == 0 ? transactions == 0 && recordedChanges == 0 : transactions == 1 && recordedChanges == count,
                "history does not match the data: \(transactions) transactions, \(recordedChanges) changes for \(rows) rows")
        if committed { #expect(rows == count, "the save reported success but its rows are not there") }

        // The next save goes through on fresh connections.
        let (next, nextHistory) = save(from: Int64(count) + 1)
        try store.apply(next, history: nextHistory)
        #expect(try Self.count("ZTAG", in: store) == rows + count)
        #expect(try store.count(entity: tag, predicate: nil) == rows + count)
    }

    /// ocd-bench's multi-writer scenario whose server restarts under its workers ends by itself with a
    /// failure naming the workers, rather than waiting for ever on a connection the restart closed.
    @Test func benchMultiWriterEndsWhenTheServerRestarts() throws {
        let bench = TestProgram.packageRoot.appendingPathComponent(".build/debug/ocd-bench").path
        try #require(FileManager.default.isExecutableFile(atPath: bench), "ocd-bench is not built")
        let server = try PrivatePostgreSQLServer()
        defer { server.remove() }
        let run = try TestProgram(bench, ["--store", server.url, "--scenario", "pg-multi-writer", "--rows", "400000",
                                          "--processes", "2"])
        // Restart once the workers are writing (the first line is printed before they start).
        let started = Date()
        while !run.stdout.contains("processes  side"), Date().timeIntervalSince(started) < 120 { Thread.sleep(forTimeInterval: 0.1) }
        Thread.sleep(forTimeInterval: 2)
        try server.stop()
        try server.start()
        let status = try run.wait(seconds: 240)
        #expect(status != 0, "\(run.stdout)")
        #expect(run.stderr.contains("worker"), "\(run.stderr)")
    }
}
