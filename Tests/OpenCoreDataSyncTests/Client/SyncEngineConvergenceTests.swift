import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataSync

/// The client's push and pull logic between real SQLite replicas, through a log in memory: random edits on
/// every replica, some of it made while offline, then every replica syncs until quiet and all must hold the
/// same objects with the same values and relationships.
@Suite("Sync client: replicas converge through a log")
struct SyncEngineConvergenceTests {
    @Test(arguments: Array(UInt64(1)...12))
    func randomEditsOnThreeReplicasConverge(seed: UInt64) async throws {
        let model = try SyncTestModel.make()
        let log = InMemoryLog()
        let replicas = try (0..<3).map { _ in try SyncReplica(model: model) }
        let options = SyncOptions(pushBatchSize: 7, pullPageSize: 5)
        let engines = try replicas.map { try SyncEngine(container: $0.container, transport: log, options: options) }
        var edits = RandomNoteEdits(seed: seed)
        for round in 0..<12 {
            for (index, replica) in replicas.enumerated() {
                try edits.edit(replica.context, count: 1 + edits.random.next(6))
                log.setOffline(edits.random.next(5) == 0)
                if edits.random.next(2) == 0 || round == 11 { _ = try? await engines[index].sync() }
            }
        }
        log.setOffline(false)
        // Deletes that applying a pulled delete cascaded to go out on the next round: three rounds reach quiet.
        for _ in 0..<3 { for engine in engines { try await engine.sync() } }
        let reference = try replicas[0].snapshot()
        #expect(reference.count > 3, "the edits made objects")
        #expect(!reference.keys.contains { $0.hasPrefix("unsynced") })
        for replica in replicas.dropFirst() {
            let snapshot = try replica.snapshot()
            let differing = Set(reference.keys).symmetricDifference(snapshot.keys)
                .union(reference.keys.filter { snapshot[$0] != nil && snapshot[$0] != reference[$0] })
            #expect(differing.isEmpty, "seed \(seed): \(differing.prefix(3).map { "\($0): \(reference[$0].map(String.init(describing:)) ?? "absent") vs \(snapshot[$0].map(String.init(describing:)) ?? "absent")" }.joined(separator: "; "))")
        }
    }

    @Test func aPageAppliedTwiceChangesNothingMore() async throws {
        let model = try SyncTestModel.make()
        let log = InMemoryLog()
        let (a, b) = (try SyncReplica(model: model), try SyncReplica(model: model))
        let engineA = try SyncEngine(container: a.container, transport: log, options: SyncOptions())
        let engineB = try SyncEngine(container: b.container, transport: log, options: SyncOptions())
        var edits = RandomNoteEdits(seed: 42)
        try edits.edit(a.context, count: 30)
        try await engineA.sync()
        try await engineB.sync()
        let once = try b.snapshot()
        // As after a crash between the apply's save and the token's write: the token goes back, the page
        // comes again.
        try b.local.setServerToken(0)
        try await engineB.sync()
        #expect(try b.snapshot() == once)
        #expect(try b.snapshot() == a.snapshot())
    }

    @Test func aContainerWithoutHistoryIsRefusedByName() throws {
        let model = try SyncTestModel.make()
        let container = PersistentContainer(name: "NoHistory", managedObjectModel: model)
        container.persistentStoreDescriptions = [.inMemory()]
        try container.loadPersistentStores()
        #expect {
            _ = try SyncEngine(container: container, transport: InMemoryLog(), options: SyncOptions())
        } throws: { error in
            guard case .storeNotSyncable(let reason) = error as? SyncError else { return false }
            return reason.contains("SQLite")
        }
    }
}
