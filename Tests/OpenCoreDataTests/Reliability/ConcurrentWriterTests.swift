import Foundation
import GRDB
import Synchronization
import Testing
@testable import OpenCoreData

extension Reliability {
    /// Several writers on one store at once: in one process (contexts on threads, also through separate
    /// coordinators) and across processes. Optimistic locking must catch every conflict: a counter that N
    /// writers each bump K times ends at exactly N×K, and disjoint edits under the merging policies all survive.
    @Suite(.serialized) struct ConcurrentWriterTests {
        /// A store with one Progress row (the shared counter) at 0.
        static func counterStore(_ directory: TemporaryDirectory) throws -> URL {
            let url = directory.file("Counter.sqlite")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
            try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            try context.insertNewObject(forEntityName: "Progress").setValue(Int64(0), forKey: "iteration")
            try context.save()
            return url
        }

        /// Read, add one, save; on a conflict start again from a fresh context. Returns the conflicts seen.
        static func increment(_ coordinator: PersistentStoreCoordinator, times: Int) throws -> Int {
            var conflicts = 0
            for _ in 0..<times {
                while true {
                    let context = ManagedObjectContext(concurrencyType: .confinement)
                    context.persistentStoreCoordinator = coordinator
                    let counter = try context.fetch(FetchRequest<ManagedObject>(entityName: "Progress"))[0]
                    let value = try counter.value(forKey: "iteration") as? Int64 ?? 0
                    try counter.setValue(value + 1, forKey: "iteration")
                    do {
                        try context.save()
                        break
                    } catch ObjectGraphError.mergeConflict {
                        conflicts += 1
                    }
                }
            }
            return conflicts
        }

        static func counter(at url: URL) throws -> Int64 {
            let queue = try DatabaseQueue(path: url.path)
            return try queue.read { try Int64.fetchOne($0, sql: "SELECT ZITERATION FROM ZPROGRESS") ?? -1 }
        }

        @Test(arguments: [false, true])
        func threadsBumpingOneCounterLoseNoUpdate(separateCoordinators: Bool) throws {
            let directory = TemporaryDirectory()
            let url = try Self.counterStore(directory)
            let shared = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
            try shared.addPersistentStore(type: .sqlite, at: url)
            let writers = 4, times = 40
            let conflicts = Atomic<Int>(0)
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: writers) { _ in
                do {
                    var coordinator = shared
                    if separateCoordinators {
                        coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
                        try coordinator.addPersistentStore(type: .sqlite, at: url)
                    }
                    conflicts.add(try Self.increment(coordinator, times: times), ordering: .relaxed)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(try Self.counter(at: url) == Int64(writers * times))
            #expect(try StoreInvariants.violations(at: url, model: try CrashModel.make()).isEmpty)
            print("ConcurrentWriterTests: \(writers)×\(times) increments (separate coordinators: \(separateCoordinators)), \(conflicts.load(ordering: .relaxed)) conflicts detected, none lost")
        }

        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
        func twoProcessesBumpingOneCounterLoseNoUpdate() throws {
            let directory = TemporaryDirectory()
            let url = try Self.counterStore(directory)
            let times = 60
            let first = try WorkerProcess.start(["increment", url.path, String(times)])
            let second = try WorkerProcess.start(["increment", url.path, String(times)])
            var conflicts = 0
            for worker in [first, second] {
                let output = worker.readAllOutput()
                #expect(try worker.wait() == 0)
                conflicts += Int(output.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            }
            #expect(try Self.counter(at: url) == Int64(2 * times))
            print("ConcurrentWriterTests: 2 processes × \(times) increments, \(conflicts) conflicts detected, none lost")
        }

        /// Four threads edit different attributes of the same objects over and over. Under each merging
        /// policy every save succeeds and, at the end, each attribute holds its own writer's last value.
        @Test(arguments: [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump])
        func disjointEditsUnderMergingPoliciesAllSurvive(policy: MergePolicy) throws {
            let stack = try TestStack(model: TestModels.todo())
            let setup = stack.context()
            for index in 0..<5 {
                let item = try setup.insertNewObject(forEntityName: "Item")
                try item.setValue("item\(index)", forKey: "name")
            }
            try setup.save()
            let rounds = 30
            let keys = ["count", "score", "ratio", "big"]
            let failures = Mutex<[String]>([])
            let coordinator = stack.coordinator
            DispatchQueue.concurrentPerform(iterations: keys.count) { writer in
                let key = keys[writer]
                for round in 1...rounds {
                    let context = ManagedObjectContext(concurrencyType: .confinement)
                    context.persistentStoreCoordinator = coordinator
                    context.mergePolicy = policy
                    do {
                        for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                            try item.setValue(round, forKey: key)
                        }
                        try context.save()
                    } catch {
                        failures.withLock { $0.append("\(key) round \(round): \(error)") }
                    }
                }
            }
            let failed = failures.withLock { $0 }
            // The policy resolves conflicts inside the save's transaction, under the write lock: however busy
            // the store, a merging policy never ends in a conflict.
            #expect(failed.isEmpty, "\(failed.count) saves failed under \(policy), first: \(failed.first ?? "")")
            let queue = try DatabaseQueue(path: stack.url.path)
            let rows = try queue.read { try Row.fetchAll($0, sql: "SELECT ZCOUNT, ZSCORE, ZRATIO, ZBIG FROM ZITEM") }
            #expect(rows.count == 5)
            for row in rows {
                #expect(row[0] as Int? == rounds && row[1] as Double? == Double(rounds) && row[2] as Double? == Double(rounds)
                        && row[3] as Int? == rounds, "\(policy): \(row)")
            }
            print("ConcurrentWriterTests: \(keys.count) writers × \(rounds) saves under \(policy): \(failed.count) failed")
        }

        /// Another process holds the write lock: the save waits about the busy timeout, then fails with
        /// `StoreError.busy`, writes nothing, keeps the context's changes, and succeeds once the lock is gone.
        @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
        func busyStoreFailsCleanlyWithinTheTimeout() throws {
            let directory = TemporaryDirectory()
            let url = try Self.counterStore(directory)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(busyTimeout: 0.5))
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            let counter = try context.fetch(FetchRequest<ManagedObject>(entityName: "Progress"))[0]
            try counter.setValue(Int64(41), forKey: "iteration")
            let folder = try context.insertNewObject(forEntityName: "Folder")
            try folder.setValue("new", forKey: "name")

            // The holder would keep the lock far longer than the save may wait; it is stopped below.
            let holder = try WorkerProcess.start(["hold-lock", url.path, "60"])
            #expect(holder.waitForLine("locked"))
            let start = ContinuousClock.now
            var busy = false
            do { try context.save() } catch StoreError.busy { busy = true }
            let waited = ContinuousClock.now - start
            #expect(busy, "expected StoreError.busy")
            // Bounded: it neither failed at once nor waited for the holder (60 s). The upper bound only has
            // to tell "gave up after the timeout" from "waited for the lock", so it leaves a slow machine room.
            #expect(waited >= .milliseconds(400) && waited < .seconds(20), "waited \(waited)")
            #expect(context.hasChanges)
            // WAL: readers are not blocked by the writer's lock.
            let reader = ManagedObjectContext(concurrencyType: .confinement)
            reader.persistentStoreCoordinator = coordinator
            #expect(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Progress")).count == 1)
            // A batch request waits and fails the same way, touching nothing.
            let batch = BatchUpdateRequest(entityName: "Progress")
            batch.propertiesToUpdate = ["iteration": Int64(7)]
            #expect(throws: StoreError.self) { try reader.execute(batch) }
            // Killing the holder releases its lock (SQLite's locks go with the process).
            holder.kill(SIGKILL)
            try holder.wait()

            #expect(try Self.counter(at: url) == 0)
            let queue = try DatabaseQueue(path: url.path)
            #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM ZFOLDER") } == 0)
            try context.save()
            #expect(try Self.counter(at: url) == 41)
            #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM ZFOLDER") } == 1)
            #expect(try StoreInvariants.violations(at: url, model: try CrashModel.make()).isEmpty)
        }
    }
}
