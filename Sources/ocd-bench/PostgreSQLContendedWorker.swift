import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL
import PostgresNIO

/// One process of the contended-update scenario (`ocd-bench --worker ours|raw --worker-contended …`, started
/// by ``PostgreSQLContendedUpdate``): adds 1 to the shared counters in turn, a save per increment, retrying
/// each increment its save found in conflict, then prints one line, `increments conflicts start end`.
struct PostgreSQLContendedWorker {
    var side: PostgreSQLWriterWorker.Side
    var url: String
    var schema: String
    var increments: Int
    var worker: Int
    var barrier: URL

    /// Most tries of one increment before the worker gives up: conflicts are expected, an endless run of them
    /// is a defect the scenario must show rather than hide in a hang.
    static let triesPerIncrement = 10_000

    /// - Throws: when the server cannot be reached, a save fails otherwise than by a conflict, or an
    ///   increment meets ``triesPerIncrement`` conflicts in a row.
    func run() throws {
        var configuration = try PostgreSQLStoreConfiguration(url: url)
        configuration.schema = schema
        configuration.poolSize = 1
        configuration.applicationName = "ocd-bench-contended-\(side.rawValue)-\(worker)"
        let model = try PostgreSQLBenchModel.make()
        let result: (conflicts: Int, start: Double, end: Double)
        switch side {
        case .ours: result = try incrementThroughContext(model: model, configuration: configuration)
        case .raw: result = try incrementRaw(model: model, configuration: configuration)
        }
        print("\(increments) \(result.conflicts) \(result.start) \(result.end)")
    }

    /// The counter the worker's `step`-th increment goes to: workers start on different counters and go
    /// round them all, so every counter is contended.
    private func counter(_ step: Int, of count: Int) -> Int { (worker + step) % count }

    private func incrementThroughContext(model: ManagedObjectModel, configuration: PostgreSQLStoreConfiguration) throws
        -> (conflicts: Int, start: Double, end: Double) {
        let store = try PostgreSQLStore(model: model, configuration: configuration)
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
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "name", ascending: true)]
        let counters = try context.performAndWait { try context.fetch(request).map(\.objectID) }
        var conflicts = 0
        let start = try WorkerBarrier.waitForStart(in: barrier, index: worker)
        for step in 0..<increments {
            let id = counters[counter(step, of: counters.count)]
            var tries = 0
            while try !context.performAndWait({ try increment(id, in: context) }) {
                conflicts += 1
                tries += 1
                guard tries < Self.triesPerIncrement else {
                    throw BenchWorkerFailure(description: "worker \(worker): \(tries) conflicts in a row on one increment")
                }
            }
        }
        return (conflicts, start, Date().timeIntervalSince1970)
    }

    /// Adds 1 to the counter and saves: true when saved, false when the save met a newer version (the context
    /// is rolled back and the counter refreshed, so the next try reads the store's value).
    private func increment(_ id: ManagedObjectID, in context: ManagedObjectContext) throws -> Bool {
        let counter = try context.existingObject(with: id)
        let value = try counter.value(forKey: "value") as? Int64 ?? 0
        try counter.setValue(value + 1, forKey: "value")
        do {
            try context.save()
            return true
        } catch ObjectGraphError.mergeConflict {
            context.rollback()
            context.refresh(counter, mergeChanges: false)
            return false
        }
    }

    private func incrementRaw(model: ManagedObjectModel, configuration: PostgreSQLStoreConfiguration) throws
        -> (conflicts: Int, start: Double, end: Double) {
        let raw = try RawPostgreSQL(configuration)
        defer { raw.close() }
        let (table, _) = PostgreSQLBenchModel.table(model)
        let value = model.schema.columnName(of: "value", in: model.entitiesByName["Item"]!)!
        let name = model.schema.columnName(of: "name", in: model.entitiesByName["Item"]!)!
        let keys = try raw.run("SELECT Z_PK FROM \(table) ORDER BY \(name)").rows.map { try $0.decode(Int64.self) }
        let read = "SELECT \(value), Z_OPT FROM \(table) WHERE Z_PK = $1"
        let write = "UPDATE \(table) SET \(value) = $1, Z_OPT = $2 WHERE Z_PK = $3 AND Z_OPT = $4"
        var conflicts = 0
        let start = try WorkerBarrier.waitForStart(in: barrier, index: worker)
        for step in 0..<increments {
            let key = keys[counter(step, of: keys.count)]
            var tries = 0
            while true {
                guard let row = try raw.run(read, [key.storeValue]).rows.first else {
                    throw BenchWorkerFailure(description: "worker \(worker): counter \(key) is gone")
                }
                let (current, version) = try row.decode((Int64?, Int64).self)
                try raw.run("BEGIN")
                let updated = try raw.run(write, [((current ?? 0) + 1).storeValue, (version + 1).storeValue,
                                                  key.storeValue, version.storeValue])
                try raw.run("COMMIT")
                if updated.metadata.rows == 1 { break }
                conflicts += 1
                tries += 1
                guard tries < Self.triesPerIncrement else {
                    throw BenchWorkerFailure(description: "worker \(worker): \(tries) conflicts in a row on one increment")
                }
            }
        }
        return (conflicts, start, Date().timeIntervalSince1970)
    }
}
