import Foundation
import PostgresNIO
import OpenCoreData
import OpenCoreDataPostgreSQL

/// The multi-writer scenario on a PostgreSQL store (`ocd-bench --store postgresql://…`): 1, 2, 4 and 8
/// processes each insert their share of a fixed number of objects into one database, a save per batch of
/// 1,000; once through the store ("ours") and once through postgres-nio alone ("raw"). Each run gets a
/// schema of its own, dropped afterwards. Reported per process count: objects per second over the span
/// from the first process's start to the last one's end, conflicts the store raised, and whether anything
/// was lost (every object's row there, no key twice, `Z_MAX` past every key).
struct PostgreSQLMultiWriter {
    var url: String
    var objects: Int
    var processCounts: [Int]
    var batch = 1_000

    struct Line {
        var processes: Int
        var side: PostgreSQLWriterWorker.Side
        var seconds: Double
        var conflicts: Int
        var rows: Int
        var distinctKeys: Int
        var keysCovered: Bool
        var lost: Int { objects - rows }
        var objects: Int
        var objectsPerSecond: Double { seconds > 0 ? Double(rows) / seconds : 0 }
        var isWhole: Bool { rows == objects && distinctKeys == rows && keysCovered }
    }

    /// Runs every process count on both sides and prints a line each.
    ///
    /// - Throws: when the server cannot be reached or a worker fails; a check that finds something lost is
    ///   printed and thrown at the end.
    func run() throws {
        let base = try PostgreSQLStoreConfiguration(url: url)
        print("ocd-bench pg-multi-writer: \(ScenarioResult.grouped(objects)) objects per run in saves of \(ScenarioResult.grouped(batch)), "
            + "at \(base.redactedURL); processes \(processCounts.map(String.init).joined(separator: ", "))")
        print("")
        print("processes  side   seconds   objects/s  conflicts  rows        unique keys  lost  check")
        var failed: [String] = []
        for processes in processCounts {
            for side in [PostgreSQLWriterWorker.Side.ours, .raw] {
                let line = try runOnce(processes: processes, side: side, base: base)
                print([String(processes).padding(9), side.rawValue.padding(5), String(format: "%.3f", line.seconds).padding(8),
                       String(format: "%.0f", line.objectsPerSecond).padding(10), String(line.conflicts).padding(9),
                       String(line.rows).padding(10), String(line.distinctKeys).padding(11), String(line.lost).padding(4),
                       line.isWhole ? "ok" : "LOST"].joined(separator: "  "))
                fflush(nil)
                if !line.isWhole { failed.append("\(processes) \(side.rawValue)") }
            }
        }
        if !failed.isEmpty { throw BenchWorkerFailure(description: "objects lost or keys reused in: \(failed.joined(separator: ", "))") }
    }

    private func runOnce(processes: Int, side: PostgreSQLWriterWorker.Side, base: PostgreSQLStoreConfiguration) throws -> Line {
        var configuration = PostgreSQLBenchModel.scratchSchema(of: base)
        configuration.poolSize = 1
        let model = try PostgreSQLBenchModel.make()
        // Opening the store creates the layout (both sides write into it).
        let store = try PostgreSQLStore(model: model, configuration: configuration)
        store.close()
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
        let outputs = try barrier.run(count: processes) { writer in
            let share = objects / processes + (writer < objects % processes ? 1 : 0)
            return ["--worker", side.rawValue, "--store", url, "--worker-schema", configuration.schema!,
                    "--rows", String(share), "--worker-batch", String(batch)]
        }
        let (conflicts, seconds) = try WorkerBarrier.summary(of: outputs)
        let (table, _) = PostgreSQLBenchModel.table(model)
        let item = model.entitiesByName["Item"]!
        let check = try raw.run("""
            SELECT count(*), count(DISTINCT Z_PK), coalesce(max(Z_PK), 0) <= (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = $1)
            FROM \(table)
            """, [Int64(item.entityNumber).storeValue]).rows.first
        let cells = check.map(Array.init) ?? []
        guard cells.count == 3 else { throw BenchWorkerFailure(description: "the check of \(table) returned no row") }
        let (rows, distinct, covered) = (try cells[0].decode(Int64.self), try cells[1].decode(Int64.self), try cells[2].decode(Bool.self))
        return Line(processes: processes, side: side, seconds: seconds, conflicts: conflicts,
                    rows: Int(rows), distinctKeys: Int(distinct), keysCovered: covered, objects: objects)
    }
}

extension String {
    /// The text with spaces after it up to `width` characters (a column of the multi-process tables).
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
