import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
#if canImport(Glibc)
import Glibc
#endif

/// Seconds on CLOCK_MONOTONIC: one clock for every process on the machine, so a time taken in a writer
/// process and one taken here can be subtracted.
func machineMonotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Feed-to-controller latency across processes: instance A (this process: a coordinator with the change
/// feed, an automatically merging context, a results controller with a delegate) and instance B (a copy of
/// the bench as a writer, ``PostgreSQLFeedWriter``) on one schema. B saves one new item at a time; each
/// latency is from B's `save()` returning to A's delegate finishing the report that carries that item.
enum PostgreSQLFeedLatency {
    static let saves = 200
    /// B's pause between saves: latency, not throughput, is measured (each save reaches A before the next one).
    static let pauseSeconds = 0.02

    /// Hears A's controller: the serial (the item's `group`) of each inserted item, stamped when the
    /// report that carried it ends.
    final class Watcher: FetchedResultsControllerDelegate {
        private var pending: [Int] = []
        let seen = Shared<[Int: Double]>([:])

        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject,
                        at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            guard type == .insert, let value = try? object.value(forKey: "group") else { return }
            if let serial = (value as? Int64).map(Int.init) ?? (value as? Int) { pending.append(serial) }
        }

        func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) {
            let now = machineMonotonicSeconds()
            let serials = pending
            pending = []
            seen.update { seen in for serial in serials where seen[serial] == nil { seen[serial] = now } }
        }
    }

    static let scenario = PostgreSQLScenario(
        name: "pg-feed-latency", targetRatio: nil,
        summary: "Instance A: a coordinator with history and remote-change notifications, an automatically merging context, a results controller over the N items (batch size 20, sorted by createdAt, a delegate). Instance B: another process with its own coordinator on the same schema, saving one new item at a time, \(saves) saves \(Int(pauseSeconds * 1000)) ms apart per timed run. feed_latency_ms: from B's save() returning to A's delegate's controllerDidChangeContent for that item (p99 over all saves of all timed runs, target ≤ 50 ms; median and max beside it). No raw side."
    ) { size, fixtures in
        let figures = Figures([
            FigureSpec("feed_latency_ms", .p99, target: 50), FigureSpec("feed_latency_median_ms", .median),
            FigureSpec("feed_latency_max_ms", .max), FigureSpec("feed_from_save_call_ms", .p99),
            FigureSpec("writer_save_ms", .median),
        ])
        let schema = try fixtures.newSchema(history: true)
        try fixtures.fill(schema, size: size)
        return ScenarioRun(rows: saves, ours: {
            let coordinator = try fixtures.openCoordinator(
                schema, options: StoreOptions(persistentHistoryTracking: true, remoteChangeNotifications: true))
            let context = fixtures.makeContext(coordinator)
            context.automaticallyMergesChangesFromParent = true
            let watcher = Watcher()
            let controller = try context.performAndWait {
                let controller = try ResultsControllerScenarios.makeController(context, sections: false)
                controller.delegate = watcher
                try controller.performFetch()
                return controller
            }
            let barrier = try WorkerBarrier()
            let writer = try barrier.start(count: 1) { _ in
                ["--feed-writer", "--store", fixtures.url, "--worker-schema", schema.schema!, "--rows", String(saves)]
            }[0]
            barrier.waitUntilReady([writer], seconds: 120)
            return {
                defer {
                    barrier.remove()
                    // Stops the change feed's listener with the store (its thread would keep both alive).
                    for store in coordinator.postgreSQLStores { coordinator.remove(store) }
                }
                try barrier.go()
                let (status, output) = writer.wait()
                let lines = output.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) } }
                guard status == 0, lines.count == saves, lines.allSatisfy({ $0.count == 3 }) else {
                    throw BenchWorkerFailure(description: "the feed writer exited \(status): \(output.trimmingCharacters(in: .whitespacesAndNewlines))")
                }
                // Every save must reach the controller; the deadline only bounds how long a lost one takes to show.
                let waitUntil = Date(timeIntervalSinceNow: 10)
                while watcher.seen.value.count < saves, Date() < waitUntil { Thread.sleep(forTimeInterval: 0.002) }
                let seen = watcher.seen.value
                let missing = lines.map { Int($0[0]) }.filter { seen[$0] == nil }
                guard missing.isEmpty else {
                    throw BenchWorkerFailure(description: "\(missing.count) of \(saves) saves of instance B never reached A's controller (first: save \(missing[0]))")
                }
                for line in lines {
                    let (serial, called, saved) = (Int(line[0]), line[1], line[2])
                    let heard = seen[serial]!
                    figures.recordMilliseconds("feed_latency_ms", from: saved, to: heard)
                    figures.recordMilliseconds("feed_latency_median_ms", from: saved, to: heard)
                    figures.recordMilliseconds("feed_latency_max_ms", from: saved, to: heard)
                    figures.recordMilliseconds("feed_from_save_call_ms", from: called, to: heard)
                    figures.recordMilliseconds("writer_save_ms", from: called, to: saved)
                }
                return withExtendedLifetime((coordinator, controller)) { seen.count }
            }
        }, raw: nil, note: "\(saves) saves by another process per timed run, \(Int(pauseSeconds * 1000)) ms apart; the time column is the whole run",
           figures: figures)
    }
}

/// Instance B of pg-feed-latency: a copy of the bench started with `--feed-writer`. Opens its own coordinator
/// on the schema (history on, so each save is announced on the change feed), says it is ready, waits for
/// the go, then saves one new item at a time and prints, per save, its serial, the time just before
/// `save()` and the time `save()` returned (``machineMonotonicSeconds()``).
struct PostgreSQLFeedWriter {
    var url: String
    var schema: String
    var saves: Int
    var barrier: URL

    /// - Throws: the store's errors; ``BenchWorkerFailure`` when the go never comes.
    func run() throws {
        var configuration = try PostgreSQLStoreConfiguration(url: url)
        configuration.schema = schema
        configuration.applicationName = "ocd-bench-feed-writer"
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try BenchModel.make())
        try coordinator.addPersistentStore(configuration: configuration, options: StoreOptions(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        _ = try WorkerBarrier.waitForStart(in: barrier, index: 0)
        var lines: [String] = []
        for serial in 1...saves {
            let (called, saved) = try context.performAndWait {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue("feed \(serial)", forKey: "name")
                // After every filled item in the controller's order: each insert lands at the end.
                try item.setValue(Date(timeIntervalSinceReferenceDate: Seed.createdAt(100_000_000 + serial)), forKey: "createdAt")
                try item.setValue(Int64(serial), forKey: "group")
                let called = machineMonotonicSeconds()
                try context.save()
                return (called, machineMonotonicSeconds())
            }
            lines.append("\(serial) \(called) \(saved)")
            Thread.sleep(forTimeInterval: PostgreSQLFeedLatency.pauseSeconds)
        }
        print(lines.joined(separator: "\n"))
    }
}
