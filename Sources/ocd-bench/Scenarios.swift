import Foundation
import OpenCoreData

// The scenarios: for each, how to set a size up, what "ours" does through OpenCoreData, and what the raw
// SQLite twin does. Every timed body returns a checksum; ours and raw must agree.

/// The benchmark's model: one to-do item entity (table ZITEM).
enum BenchModel {
    /// `itemClass` is the class items are made as: a typed subclass for the scenarios that read through
    /// typed properties (the same entity, table and version hashes either way).
    static func make(itemClass: ManagedObject.Type = ManagedObject.self) throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Item", class: itemClass) {
                Attribute("name", .string)
                Attribute("createdAt", .date)
                Attribute("done", .boolean, default: false)
                Attribute("group", .integer64, default: Int64(0))
                // 50 values (i mod 50): the fetched results controller's section key.
                Attribute("category", .integer64, default: Int64(0))
            }
        }
    }
}

/// An item read through typed properties, as a Swift developer declares one.
final class BenchItem: ManagedObject {
    override class var entityName: String { "Item" }
    /// Keeps nothing but `@Managed` properties: its instances may be given another row.
    override class var allowsInstanceReuse: Bool { true }
    @Managed("name") var name: String?
}

/// Thrown by a scenario that cannot run yet (a missing library feature); reported as skipped.
struct ScenarioSkipped: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

/// One side of a scenario: `prepare` runs untimed and returns the timed body.
typealias PreparedRun = () throws -> () throws -> Int

/// A scenario bound to one size.
struct ScenarioRun {
    /// The rows the scenario works on (objects inserted, fetched, updated…).
    var rows: Int
    var ours: PreparedRun
    /// nil for scenarios with an absolute target only (nothing raw to compare with).
    var raw: PreparedRun?
    /// GRDB's record layer doing the same work the way its documentation recommends (PeerGRDB.swift);
    /// nil where it has none (`PeerBaselines.missing` says why).
    var peer: PreparedRun? = nil
    /// Printed with the result (fallbacks, what was averaged).
    var note: String?
    /// Extra figures for the JSON: name → value per timed run of each side, derived from seconds.
    var perRunDivisor: (key: String, count: Int)?
    /// Scenario-specific figures the runs record (latencies, bytes per row…), each with its own target.
    var figures: Figures?
}

struct Scenario: Sendable {
    var name: String
    /// ours/raw median ratio to stay under; nil when there is no raw side (figures carry the targets).
    var targetRatio: Double?
    var summary: String
    /// Upper bound for ours' peak memory growth above the run's baseline, in MB (nil: none).
    var peakMemoryTargetMB: Double? = nil
    var make: @Sendable (_ size: Int, _ fixtures: Fixtures) throws -> ScenarioRun
}

/// Store files: fresh empty stores per run, and populated stores made once per size.
final class Fixtures {
    let directory: URL
    let model: ManagedObjectModel
    /// The same model with items made as ``BenchItem``.
    let typedModel: ManagedObjectModel
    private var populated: [Int: URL] = [:]
    private var counter = 0
    /// Per-run files, deleted by `removeScratch()` after the run (outside the timing).
    private var scratch: [URL] = []

    init(directory: URL) throws {
        self.directory = directory
        self.model = try BenchModel.make()
        self.typedModel = try BenchModel.make(itemClass: BenchItem.self)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A new file path in the work directory.
    func freshURL(_ label: String) -> URL {
        counter += 1
        let url = directory.appendingPathComponent("\(label)-\(counter).sqlite")
        scratch.append(url)
        return url
    }

    /// Deletes the per-run files made since the last call.
    func removeScratch() {
        for url in scratch { remove(url) }
        scratch = []
    }

    /// Deletes a store file and its WAL companions.
    func remove(_ url: URL) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    /// Creates an empty store in the library's layout (the coordinator writes the schema), then closes it.
    func createEmptyStore(at url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        coordinator.remove(store)
    }

    /// A store with `size` items, created through the library and filled with raw prepared INSERTs.
    /// Made once per size; read scenarios open it, write scenarios copy it.
    func populatedStore(size: Int) throws -> URL {
        if let url = populated[size] { return url }
        let url = directory.appendingPathComponent("populated-\(size).sqlite")
        remove(url)
        try createEmptyStore(at: url)
        do {
            let db = try RawConnection(path: url.path)
            let entity = try RawBaselines.itemEntityNumber(db)
            try RawBaselines.insert(db, count: size, entity: entity)
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        populated[size] = url
        return url
    }

    /// A private copy of the populated store, for scenarios that write.
    func copyOfPopulatedStore(size: Int) throws -> URL {
        let source = try populatedStore(size: size)
        let url = freshURL("copy-\(size)")
        try FileManager.default.copyItem(at: source, to: url)
        return url
    }

    /// A coordinator with the store at `url` open.
    func openCoordinator(_ url: URL, typed: Bool = false) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: typed ? typedModel : model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        return coordinator
    }

    func makeContext(_ coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }
}

// MARK: The scenarios

enum Scenarios {
    static let all: [Scenario] = [insert, fetchAll, fetchBatched, loadBatchByID, countWithPredicate, updatePerObject]
        + AsyncFetchScenarios.all + BatchScenarios.all + ResultsControllerScenarios.all + HistoryScenarios.all
        + SyncScenarios.all + ServeScenarios.all
        + MigrationScenarios.all

    /// (1) Insert and save N new objects.
    static let insert = Scenario(
        name: "insert-save", targetRatio: 2.0,
        summary: "Insert N new Item objects (name \"Item i\", createdAt, done, group, category) in one context and save once. Raw: one transaction, keys reserved in Z_PRIMARYKEY, one prepared INSERT stepped N times."
    ) { size, fixtures in
        ScenarioRun(rows: size, ours: {
            let url = fixtures.freshURL("insert-ours")
            try fixtures.createEmptyStore(at: url)
            let coordinator = try fixtures.openCoordinator(url)
            return {
                try ContextWork.insertAndSave(size, in: fixtures.makeContext(coordinator))
            }
        }, raw: {
            let url = fixtures.freshURL("insert-raw")
            try fixtures.createEmptyStore(at: url)
            let db = try RawConnection(path: url.path)
            let entity = try RawBaselines.itemEntityNumber(db)
            return {
                return try RawBaselines.insert(db, count: size, entity: entity)
            }
        }, peer: {
            let url = fixtures.freshURL("insert-peer")
            try fixtures.createEmptyStore(at: url)
            let pool = try PeerBaselines.pool(url)
            let entity = try PeerBaselines.itemEntityNumber(pool)
            return { try PeerBaselines.insert(pool, count: size, entity: entity, name: Seed.name) }
        })
    }

    /// (2) Fetch all N objects and read two attributes of each.
    static let fetchAll = Scenario(
        name: "fetch-all", targetRatio: 2.0,
        summary: "Fetch all N items (no batch size) and read name and createdAt of each. Raw: SELECT every column into structs, then read the two fields."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(url)
            return {
                try ContextWork.fetchAllReadingNameAndDate(in: fixtures.makeContext(coordinator))
            }
        }, raw: {
            let db = try RawConnection(path: url.path)
            return { try RawBaselines.fetchAll(db) }
        }, peer: {
            let pool = try PeerBaselines.pool(url)
            return { try PeerBaselines.fetchAll(pool) }
        })
    }

    /// (3) A batched fetch: IDs first, objects 20 at a time; touch the first 100.
    static let fetchBatched = Scenario(
        name: "fetch-batched-first-100", targetRatio: 1.3,
        summary: "Fetch all N items with fetchBatchSize 20 and read the name of the first 100 (5 batches). Raw: SELECT Z_PK of all rows into an array, then SELECT … WHERE Z_PK IN (20 keys) per batch of the first 100."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(url)
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
                    let request = FetchRequest<ManagedObject>(entityName: "Item")
                    request.fetchBatchSize = 20
                    let items = try context.fetch(request)
                    var checksum = items.count
                    for index in 0..<min(100, items.count) {
                        checksum &+= (try items[index].value(forKey: "name") as? String)?.utf8.count ?? 0
                    }
                    return checksum
                }
            }
        }, raw: {
            let db = try RawConnection(path: url.path)
            return { try RawBaselines.idsThenBatches(db, batchSize: 20, touch: 100) }
        }, peer: {
            let pool = try PeerBaselines.pool(url)
            return { try PeerBaselines.idsThenBatches(pool, batchSize: 20, touch: 100) }
        })
    }

    /// (4) Load one batch of 20 objects by ID, over many random batches.
    static let loadBatchByID = Scenario(
        name: "load-batch-by-id", targetRatio: 1.3,
        summary: "Load random batches of 20 objects by ID (Z_PK IN (…)) and read each name; 1,000 batches (fewer for small N), the same seeded sequence on both sides. Ours: a fetchBatchSize-20 result whose IDs are fetched untimed; touching a batch's first element loads the batch. Raw: one prepared 20-placeholder SELECT."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        let batchCount = max(1, size / 20)
        let sampleCount = min(1000, batchCount)
        var generator = SeededGenerator(seed: 0x0CD_BE4C4 &+ UInt64(size))
        var chosen = Array(0..<batchCount)
        chosen.shuffle(using: &generator)
        let batchIndexes = Array(chosen.prefix(sampleCount))
        // The store stays open across runs on both sides, as in an app (see frc-batch-on-access).
        let coordinator = try fixtures.openCoordinator(url)
        let rawIDs = try RawBaselines.keys(path: url.path, sql: "SELECT Z_PK FROM ZITEM")
        let rawDB = try RawConnection(path: url.path)
        let peerPool = try PeerBaselines.pool(url)
        return ScenarioRun(rows: sampleCount * 20, ours: {
            let context = fixtures.makeContext(coordinator)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.fetchBatchSize = 20
            let items = try context.performAndWait { try context.fetch(request) }
            return {
                try ContextWork.readNames(ofBatches: batchIndexes, of: items, in: context)
            }
        }, raw: {
            let ids = rawIDs, db = rawDB
            let batches = batchIndexes.map { batch in Array(ids[(batch * 20)..<min(batch * 20 + 20, ids.count)]) }
            return { try RawBaselines.loadBatches(db, batches: batches) }
        }, peer: {
            let ids = rawIDs, pool = peerPool
            let batches = batchIndexes.map { batch in Array(ids[(batch * 20)..<min(batch * 20 + 20, ids.count)]) }
            return { try PeerBaselines.loadBatches(pool, batches: batches) }
        }, note: "\(sampleCount) random batches of 20 per timed run", perRunDivisor: (key: "us_per_batch", count: sampleCount))
    }

    /// (5) Count with a predicate.
    static let countWithPredicate = Scenario(
        name: "count-predicate", targetRatio: 1.1,
        summary: "count(for:) with the predicate `done == NO`, 20 times per timed run. Raw: SELECT COUNT(*) FROM ZITEM WHERE ZDONE = 0, prepared once, stepped 20 times."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        let times = 20
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(url)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            do {
                request.predicate = try QueryPredicate(format: "done == NO")
            } catch {
                throw ScenarioSkipped(reason: "QueryPredicate(format: \"done == NO\") failed: \(error)")
            }
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
                    var total = 0
                    for _ in 0..<times {
                        do {
                            total &+= try context.count(for: request)
                        } catch {
                            throw ScenarioSkipped(reason: "count(for:) with a predicate failed: \(error)")
                        }
                    }
                    return total
                }
            }
        }, raw: {
            let db = try RawConnection(path: url.path)
            return { try RawBaselines.count(db, whereClause: "ZDONE = 0", times: times) }
        }, peer: {
            let pool = try PeerBaselines.pool(url)
            return { try PeerBaselines.countNotDone(pool, times: times) }
        }, note: "\(times) counts per timed run")
    }

    /// (6) The per-object update path: fetch, set, save.
    static let updatePerObject = Scenario(
        name: "update-per-object", targetRatio: 3.0,
        summary: "On a copy of the N-item store, fetch the items with `group == 0` (N/4 of them), flip `done` on each with setValue, save once. Raw: SELECT Z_PK, Z_OPT, ZDONE into structs, then in one transaction one prepared UPDATE … SET ZDONE = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ? per row."
    ) { size, fixtures in
        let target = max(1, size / 4)
        let selection: UpdateSelection
        var note: String
        do {
            // Do predicates work yet? Ask for a count through the library on the populated store.
            let coordinator = try fixtures.openCoordinator(try fixtures.populatedStore(size: size))
            let context = fixtures.makeContext(coordinator)
            let probe = FetchRequest<ManagedObject>(entityName: "Item")
            probe.predicate = try QueryPredicate(format: "group == 0")
            let matches = try context.performAndWait { try context.count(for: probe) }
            selection = .predicate
            note = "group == 0 selects \(matches) of \(size)"
        } catch {
            selection = .limit(target)
            note = "fallback: fetchLimit \(target) instead of the predicate group == 0 (\(error))"
        }
        let rows: Int
        if case .limit(let count) = selection { rows = min(count, size) } else { rows = (size / 4) }
        return ScenarioRun(rows: rows, ours: {
            let url = try fixtures.copyOfPopulatedStore(size: size)
            let coordinator = try fixtures.openCoordinator(url)
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
                    let request = FetchRequest<ManagedObject>(entityName: "Item")
                    switch selection {
                    case .predicate: request.predicate = try QueryPredicate(format: "group == 0")
                    case .limit(let count): request.fetchLimit = count
                    }
                    let items = try context.fetch(request)
                    var checksum = items.count
                    for item in items {
                        let done = (try item.value(forKey: "done") as? Bool) ?? false
                        try item.setValue(!done, forKey: "done")
                        checksum &+= done ? 0 : 1
                    }
                    try context.save()
                    return checksum
                }
            }
        }, raw: {
            let url = try fixtures.copyOfPopulatedStore(size: size)
            let db = try RawConnection(path: url.path)
            return {
                return try RawBaselines.updateRowByRow(db, selection: selection)
            }
        }, peer: {
            let pool = try PeerBaselines.pool(try fixtures.copyOfPopulatedStore(size: size))
            return { try PeerBaselines.updatePerRecord(pool, selection: selection) }
        }, note: note)
    }
}
