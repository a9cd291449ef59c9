import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import PostgresNIO

/// One writer process of the multi-writer scenario (`ocd-bench --worker ours|raw …`, started by
/// ``PostgreSQLMultiWriter``): inserts its share of objects in saves of up to a batch each, then prints one
/// line, `rows conflicts start end` (start and end in seconds since 1970, so the parent can line up the
/// processes' clocks).
struct PostgreSQLWriterWorker {
    enum Side: String {
        /// Through the object graph: a coordinator on the store (keys reserved a batch at a time) and a
        /// private-queue context inserting each batch's objects and saving them, with every check a save makes.
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
        case .ours: result = try writeThroughContext(model: model, configuration: configuration)
        case .raw: result = try writeRaw(model: model, configuration: configuration)
        }
        print("\(rows) \(result.conflicts) \(result.start) \(result.end)")
    }

    private func waitForStart() throws -> Double {
        try WorkerBarrier.waitForStart(in: barrier, index: writer)
    }

    private func writeThroughContext(model: ManagedObjectModel, configuration: PostgreSQLStoreConfiguration) throws
        -> (conflicts: Int, start: Double, end: Double) {
        // The store is made here rather than by `addPersistentStore(type:at:)` so its key block is one batch.
        let store = try PostgreSQLStore(model: model, configuration: configuration, keyBlockSize: batch)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.add(store)
        } catch {
            store.close()
            throw error
        }
        defer { coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        var conflicts = 0
        let start = try waitForStart()
        var written = 0
        while written < rows {
            let count = min(batch, rows - written)
            conflicts += try context.performAndWait { try saveBatch(of: count, in: context) }
            written += count
        }
        return (conflicts, start, Date().timeIntervalSince1970)
    }

    /// Inserts `count` objects into `context` and saves them, returning the conflicts the save reported
    /// (fresh objects never conflict; counted, and the batch not retried, if the store ever says so). The
    /// objects' values are the raw side's for the same key, so both sides write the same bytes; the context
    /// is reset afterwards so it holds one batch at a time.
    private func saveBatch(of count: Int, in context: ManagedObjectContext) throws -> Int {
        defer { context.reset() }
        let objects = try (0..<count).map { _ in try context.insertNewObject(forEntityName: "Item") }
        try context.obtainPermanentIDs(for: objects)
        for object in objects {
            let key = object.objectID.primaryKey
            let values = PostgreSQLBenchModel.values(key: key, writer: writer)
            try object.setValue(values.name, forKey: "name")
            try object.setValue(values.value, forKey: "value")
            try object.setValue(values.created, forKey: "created")
        }
        do {
            try context.save()
            return 0
        } catch ObjectGraphError.mergeConflict(let found) {
            return found.count
        }
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
                                   [Int64(count).storeValue, Int64(item.entityNumber).storeValue])
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
