import Foundation
import GRDB
import OpenCoreData
import OpenCoreDataPostgreSQL
import PostgresNIO

/// One writer process of the multi-writer scenario (`ocd-bench --worker ours|raw …`, started by
/// ``PostgreSQLMultiWriter``): inserts its share of objects in saves of up to a batch each, then prints one
/// line, `rows conflicts start end` (start and end in seconds since 1970, so the parent can line up the
/// processes' clocks).
struct PostgreSQLWriterWorker {
    enum Side: String {
        /// Through the store: keys reserved in blocks, each batch one `apply` of a change set.
        case ours
        /// postgres-nio alone, the same statements: the key block's `UPDATE … RETURNING`, then per batch
        /// BEGIN, one INSERT per object, COMMIT.
        case raw
    }

    var side: Side
    var url: String
    var schema: String
    var rows: Int
    var batch: Int
    var writer: Int
    /// The folder of the start barrier: the worker says it is ready there (`ready-<writer>`) once connected
    /// and waits for `go`, so setting up (connecting, opening the store) is never timed and every process
    /// starts writing together.
    var barrier: URL

    func run() throws {
        var configuration = try PostgreSQLStoreConfiguration(url: url)
        configuration.schema = schema
        configuration.poolSize = 1
        configuration.applicationName = "ocd-bench-\(side.rawValue)-\(writer)"
        let model = try PostgreSQLBenchModel.make()
        let result: (conflicts: Int, start: Double, end: Double)
        switch side {
        case .ours: result = try writeThroughStore(model: model, configuration: configuration)
        case .raw: result = try writeRaw(model: model, configuration: configuration)
        }
        print("\(rows) \(result.conflicts) \(result.start) \(result.end)")
    }

    private func waitForStart() throws -> Double {
        try Data().write(to: barrier.appendingPathComponent("ready-\(writer)"))
        let go = barrier.appendingPathComponent("go").path
        let deadline = Date(timeIntervalSinceNow: 600)
        while !FileManager.default.fileExists(atPath: go) {
            guard Date() < deadline else { throw BenchWorkerFailure(description: "writer \(writer) was never told to start") }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return Date().timeIntervalSince1970
    }

    private func writeThroughStore(model: ManagedObjectModel, configuration: PostgreSQLStoreConfiguration) throws
        -> (conflicts: Int, start: Double, end: Double) {
        let store = try PostgreSQLStore(model: model, configuration: configuration, keyBlockSize: batch)
        defer { store.close() }
        let item = model.entitiesByName["Item"]!
        let table = PostgreSQLBenchModel.table(model).name
        var conflicts = 0
        let start = try waitForStart()
        var written = 0
        while written < rows {
            let count = min(batch, rows - written)
            let first = try store.reservePrimaryKeys(root: item, count: count)
            let changes = StoreChangeSet(insertingRows: (first..<first + Int64(count)).map { key in
                (ManagedObjectID(entity: item, primaryKey: key, store: nil), table, PostgreSQLBenchModel.row(model, key: key, writer: writer))
            })
            do {
                try store.apply(changes)
            } catch let found as StoreConflicts {
                // Fresh keys never conflict; counted (and the batch not retried) if the store ever says so.
                conflicts += found.conflicts.count
            }
            written += count
        }
        return (conflicts, start, Date().timeIntervalSince1970)
    }

    private func writeRaw(model: ManagedObjectModel, configuration: PostgreSQLStoreConfiguration) throws
        -> (conflicts: Int, start: Double, end: Double) {
        let raw = try RawPostgreSQL(configuration)
        defer { raw.close() }
        let item = model.entitiesByName["Item"]!
        let (table, columns) = PostgreSQLBenchModel.table(model)
        let insert = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES ("
            + (1...columns.count).map { "$\($0)" }.joined(separator: ", ") + ")"
        let start = try waitForStart()
        var written = 0
        while written < rows {
            let count = min(batch, rows - written)
            let reserved = try raw.run("UPDATE Z_PRIMARYKEY SET Z_MAX = COALESCE(Z_MAX, 0) + $1 WHERE Z_ENT = $2 RETURNING Z_MAX",
                                   [Int64(count).databaseValue, Int64(item.entityNumber).databaseValue])
            guard let last = try reserved.rows.first?.decode(Int64.self) else {
                throw BenchWorkerFailure(description: "Z_PRIMARYKEY has no row for Item")
            }
            try raw.run("BEGIN")
            for key in (last - Int64(count) + 1)...last {
                try raw.run(insert, Array(PostgreSQLBenchModel.row(model, key: key, writer: writer)))
            }
            try raw.run("COMMIT")
            written += count
        }
        return (0, start, Date().timeIntervalSince1970)
    }
}

struct BenchWorkerFailure: Error, CustomStringConvertible {
    var description: String
}
