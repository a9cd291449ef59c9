import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// The contended-update scenario on a PostgreSQL store (`ocd-bench --store postgresql://…`): 1, 2, 4 and 8
/// processes each add 1 to a handful of shared counters, one save per increment, under optimistic locking. A
/// save that meets another process's newer version is a conflict: the process reads the counter again and
/// retries. Once through contexts ("ours", the default error merge policy) and once through postgres-nio
/// alone ("raw": read the value and version, then `UPDATE … WHERE Z_OPT = version`, retried when it changes
/// no row). Reported per process count: increments per second, conflicts met, and the check that no update
/// was lost (the counters' sum is the number of increments, each row's version moved once per increment).
struct PostgreSQLContendedUpdate {
    /// The scenario's name.
    static let name = "pg-contended-update"

    var url: String
    var increments: Int
    var processCounts: [Int]
    var counters = 8

    struct Line {
        var processes: Int
        var side: PostgreSQLWriterWorker.Side
        var seconds: Double
        var conflicts: Int
        var increments: Int
        var sum: Int64
        var versionSteps: Int64
        var incrementsPerSecond: Double { seconds > 0 ? Double(increments) / seconds : 0 }
        var isWhole: Bool { sum == Int64(increments) && versionSteps == Int64(increments) }
    }

    /// Runs every process count on both sides and prints a line each.
    ///
    /// - Throws: when the server cannot be reached or a worker fails; a check that finds an update lost is
    ///   printed and thrown at the end.
    func run() throws {
        let base = try PostgreSQLStoreConfiguration(url: url)
        print("ocd-bench \(Self.name): \(ScenarioResult.grouped(increments)) increments per run of \(counters) shared counters, "
            + "a save each, at \(base.redactedURL); processes \(processCounts.map(String.init).joined(separator: ", "))")
        print("")
        print("processes  side   seconds   incr/s     conflicts  sum         versions    check")
        var failed: [String] = []
        for processes in processCounts {
            for side in [PostgreSQLWriterWorker.Side.ours, .raw] {
                let line = try runOnce(processes: processes, side: side, base: base)
                print([String(processes).padding(9), side.rawValue.padding(5), String(format: "%.3f", line.seconds).padding(8),
                       String(format: "%.0f", line.incrementsPerSecond).padding(9), String(line.conflicts).padding(9),
                       String(line.sum).padding(10), String(line.versionSteps).padding(10),
                       line.isWhole ? "ok" : "LOST"].joined(separator: "  "))
                fflush(nil)
                if !line.isWhole { failed.append("\(processes) \(side.rawValue)") }
            }
        }
        if !failed.isEmpty { throw BenchWorkerFailure(description: "updates lost in: \(failed.joined(separator: ", "))") }
    }

    private func runOnce(processes: Int, side: PostgreSQLWriterWorker.Side, base: PostgreSQLStoreConfiguration) throws -> Line {
        var configuration = PostgreSQLBenchModel.scratchSchema(of: base)
        configuration.poolSize = 1
        let model = try PostgreSQLBenchModel.make()
        // The counters, made through the store: value 0, version 1.
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.add(store)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<counters {
            let counter = try context.insertNewObject(forEntityName: "Item")
            try counter.setValue("counter \(index)", forKey: "name")
            try counter.setValue(Int64(0), forKey: "value")
        }
        try context.save()
        coordinator.remove(store)
        var admin = configuration
        admin.applicationName = "ocd-bench-check"
        let raw = try RawPostgreSQL(admin)
        defer {
            // The schema name was made here from hex digits.
            _ = try? raw.run("DROP SCHEMA IF EXISTS \(configuration.schema!) CASCADE")
            raw.close()
        }
        let barrier = try WorkerBarrier()
        defer { barrier.remove() }
        let outputs = try barrier.run(count: processes) { worker in
            let share = increments / processes + (worker < increments % processes ? 1 : 0)
            return ["--worker", side.rawValue, "--store", url, "--worker-schema", configuration.schema!,
                    "--rows", String(share), "--worker-contended"]
        }
        let (conflicts, seconds) = try WorkerBarrier.summary(of: outputs)
        let (table, _) = PostgreSQLBenchModel.table(model)
        let value = model.schema.columnName(of: "value", in: model.entitiesByName["Item"]!)!
        let cells = try raw.run("SELECT coalesce(sum(\(value)), 0)::bigint, coalesce(sum(Z_OPT - 1), 0)::bigint FROM \(table)").rows.first.map(Array.init) ?? []
        guard cells.count == 2 else { throw BenchWorkerFailure(description: "the check of \(table) returned no row") }
        return Line(processes: processes, side: side, seconds: seconds, conflicts: conflicts,
                    increments: increments, sum: try cells[0].decode(Int64.self), versionSteps: try cells[1].decode(Int64.self))
    }
}
