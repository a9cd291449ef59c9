import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataSync
@testable import OpenCoreDataSyncServer

/// Replicas syncing through the real server over HTTP: random edits on three SQLite replicas while the
/// server stops and starts, then every replica equals the server's copy, object by object, value by value.
@Suite("Sync: replicas converge with the server's copy")
struct SyncServerConvergenceTests {
    /// The PostgreSQL server the suite may use (`OCD_POSTGRES_URL`), with a schema of its own per test.
    static var postgreSQLURL: String? {
        guard let url = ProcessInfo.processInfo.environment["OCD_POSTGRES_URL"], !url.isEmpty else { return nil }
        let schema = "ocd_sync_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(12)
        return url + (url.contains("?") ? "&" : "?") + "schema=\(schema)"
    }

    /// Edits on every replica, some syncing in between, with the server stopped for some rounds; then all sync
    /// until quiet and each must equal the server.
    static func run(seed: UInt64, servers: [SyncTestServer], stopServers: Bool) async throws {
        let model = servers[0].model
        let token = try await servers[0].token(for: "alice")
        let replicas = try (0..<3).map { _ in try SyncReplica(model: model) }
        let engines = try replicas.enumerated().map { index, replica in
            try SyncEngine(container: replica.container, server: servers[index % servers.count].url, token: token,
                           options: SyncOptions(pushBatchSize: 5, pullPageSize: 7))
        }
        var edits = RandomNoteEdits(seed: seed)
        for round in 0..<10 {
            if stopServers, round == 3 { for server in servers { await server.stop() } }
            if stopServers, round == 6 { for server in servers { try await server.start() } }
            for (index, replica) in replicas.enumerated() {
                try edits.edit(replica.context, count: 1 + edits.random.next(5))
                if edits.random.next(3) > 0 { _ = try? await engines[index].sync() }
            }
        }
        for _ in 0..<3 { for engine in engines { try await engine.sync() } }
        let expected = try await servers[0].snapshot(token: token)
        #expect(expected.count > 3, "the edits made objects")
        for (index, replica) in replicas.enumerated() {
            let snapshot = try replica.snapshot()
            #expect(snapshot == expected, "seed \(seed), replica \(index): \(differences(expected, snapshot))")
        }
        for server in servers.dropFirst() {
            #expect(try await server.snapshot(token: token) == expected)
        }
    }

    @Test(arguments: [UInt64(11), 12, 13, 14])
    func threeReplicasConvergeWhileTheServerStopsAndStarts(seed: UInt64) async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        try await Self.run(seed: seed, servers: [server], stopServers: true)
        await server.stop()
    }

    @Test(.enabled(if: postgreSQLURL != nil, "OCD_POSTGRES_URL is not set (scripts/postgres-server.sh starts a server)"),
          arguments: [UInt64(21), 22])
    func twoServerInstancesOnOnePostgreSQLDatabaseServeOneConvergedZone(seed: UInt64) async throws {
        let url = try #require(Self.postgreSQLURL)
        let model = try SyncTestModel.make()
        let first = try await SyncTestServer(model: model, store: url)
        let second = try await SyncTestServer(model: model, store: url, key: first.key)
        try await Self.run(seed: seed, servers: [first, second], stopServers: false)
        await first.stop()
        await second.stop()
    }

    @Test(.enabled(if: postgreSQLURL != nil, "OCD_POSTGRES_URL is not set (scripts/postgres-server.sh starts a server)"))
    func aPushToOneInstanceIsNewsOnTheOther() async throws {
        let url = try #require(Self.postgreSQLURL)
        let model = try SyncTestModel.make()
        let first = try await SyncTestServer(model: model, store: url)
        let second = try await SyncTestServer(model: model, store: url, key: first.key)
        let token = try await first.token(for: "alice")
        let heard = Shared<Int>(0)
        let listener = SyncNewsListener(server: second.url, token: { token }) { heard.update { $0 += 1 } }
        listener.start()
        try await waitUntil { heard.value >= 1 }   // the stream's opening event
        #expect(try await first.push([SyncServerProtocolTests.transaction(1, [SyncServerProtocolTests.note(UUID(), title: "n")])],
                                     token: token).status == 200)
        try await waitUntil(seconds: 10) { heard.value >= 2 }
        listener.stop()
        await first.stop()
        await second.stop()
    }
}

/// A value shared with callbacks on other threads.
final class Shared<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}
