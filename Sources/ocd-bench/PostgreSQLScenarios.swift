import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// A scenario run against a PostgreSQL server (`ocd-bench --store postgresql://…`): contexts on a coordinator
/// with the PostgreSQL store ("ours") beside postgres-nio alone sending the same statements ("raw").
struct PostgreSQLScenario: Sendable {
    var name: String
    /// ours/raw median ratio to stay under; nil when there is no raw side (figures carry the targets).
    var targetRatio: Double?
    var summary: String
    var make: @Sendable (_ size: Int, _ fixtures: PostgreSQLFixtures) throws -> ScenarioRun
}

/// The context scenarios of BENCHMARKS.md that make sense on a server, on the same items as on SQLite. Read
/// scenarios share one filled schema per size; write scenarios refill a schema of their side before each run.
enum PostgreSQLScenarios {
    static let all: [PostgreSQLScenario] = [insert, fetchAll, fetchWithPredicateAndSort, loadBatchByID, countWithPredicate,
                                            updatePerObject, controllerFetch, controllerBatchOnAccess, PostgreSQLFeedLatency.scenario,
                                            PostgreSQLResidualFetch.scenario]
        + PostgreSQLRequestScenarios.all

    /// Every name `--store` accepts with `--scenario`, the multi-process ones included.
    static var names: [String] { all.map(\.name) + [multiWriterName, PostgreSQLContendedUpdate.name] }

    /// The multi-writer scenario's name (``PostgreSQLMultiWriter``, run after the others).
    static let multiWriterName = "pg-multi-writer"

    static let insert = PostgreSQLScenario(
        name: "pg-insert-save", targetRatio: 2.0,
        summary: "As insert-save, on the server: insert N items in one context, save once. Raw: the key block's UPDATE … RETURNING, BEGIN, one multi-row INSERT per 500 items, COMMIT."
    ) { size, fixtures in
        let oursSchema = try fixtures.newSchema(), rawSchema = try fixtures.newSchema()
        return ScenarioRun(rows: size, ours: {
            try fixtures.fill(oursSchema, size: 0)
            let coordinator = try fixtures.openCoordinator(oursSchema)
            return {
                try ContextWork.insertAndSave(size, in: fixtures.makeContext(coordinator))
            }
        }, raw: {
            try fixtures.fill(rawSchema, size: 0)
            let db = try fixtures.raw(rawSchema)
            return { try PostgreSQLRawBaselines.insert(db, count: size, entity: fixtures.itemEntityNumber) }
        })
    }

    static let fetchAll = PostgreSQLScenario(
        name: "pg-fetch-all", targetRatio: 2.0,
        summary: "As fetch-all: fetch all N items (no batch size), read name and createdAt of each. Raw: SELECT every column into structs."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(schema)
            return {
                try ContextWork.fetchAllReadingNameAndDate(in: fixtures.makeContext(coordinator))
            }
        }, raw: {
            let db = try fixtures.raw(schema)
            return { try PostgreSQLRawBaselines.fetchAll(db) }
        })
    }

    static let fetchWithPredicateAndSort = PostgreSQLScenario(
        name: "pg-fetch-predicate-sort", targetRatio: 2.0,
        summary: "Fetch the items with `group == 0 AND done == NO` (N/6) sorted by createdAt descending, read each name. Raw: the same SELECT with WHERE ZGROUP = $1 AND ZDONE = $2 ORDER BY ZCREATEDAT DESC into structs."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(schema)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try QueryPredicate(format: "group == 0 AND done == NO")
            request.sortDescriptors = [QuerySortDescriptor(key: "createdAt", ascending: false)]
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
                    let items = try context.fetch(request)
                    return PostgreSQLRawBaselines.sortedChecksum(try items.map {
                        (name: try $0.value(forKey: "name") as? String, createdAt: try $0.value(forKey: "createdAt") as? Date)
                    })
                }
            }
        }, raw: {
            let db = try fixtures.raw(schema)
            return { try PostgreSQLRawBaselines.fetchWithPredicateAndSort(db) }
        }, note: "group == 0 AND done == NO selects \(size / 4 - size / 12) of \(size)")
    }

    /// `min(1000, N/20)` random batch numbers, the same seeded sequence on both sides.
    static func randomBatches(size: Int, seed: UInt64) -> [Int] {
        let batchCount = max(1, size / 20)
        var generator = SeededGenerator(seed: seed &+ UInt64(size))
        var chosen = Array(0..<batchCount)
        chosen.shuffle(using: &generator)
        return Array(chosen.prefix(min(1000, batchCount)))
    }

    static let loadBatchByID = PostgreSQLScenario(
        name: "pg-load-batch-by-id", targetRatio: 1.3,
        summary: "As load-batch-by-id: a fetchBatchSize-20 result sorted by createdAt (IDs fetched untimed, the store kept open across runs); touching a random batch loads its 20 rows with one Z_PK IN (…); name of each read; min(1000, N/20) batches. Raw: one SELECT … WHERE Z_PK IN ($1…$20) ORDER BY Z_PK per batch, the same keys."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        let batchIndexes = randomBatches(size: size, seed: 0x0CD_BE4C4)
        let coordinator = try fixtures.openCoordinator(schema)
        let rawDB = try fixtures.raw(schema)
        let rawIDs = try PostgreSQLRawBaselines.keysInCreatedOrder(rawDB)
        return ScenarioRun(rows: batchIndexes.count * 20, ours: {
            let context = fixtures.makeContext(coordinator)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.fetchBatchSize = 20
            request.sortDescriptors = [QuerySortDescriptor(key: "createdAt")]
            let items = try context.performAndWait { try context.fetch(request) }
            return {
                try ContextWork.readNames(ofBatches: batchIndexes, of: items, in: context)
            }
        }, raw: {
            let batches = batchIndexes.map { batch in Array(rawIDs[(batch * 20)..<min(batch * 20 + 20, rawIDs.count)]) }
            return { try PostgreSQLRawBaselines.loadBatches(rawDB, batches: batches) }
        }, note: "\(batchIndexes.count) random batches of 20 per timed run",
           perRunDivisor: (key: "us_per_batch", count: batchIndexes.count))
    }

    static let countWithPredicate = PostgreSQLScenario(
        name: "pg-count-predicate", targetRatio: 1.1,
        summary: "As count-predicate: count(for:) with `done == NO`, 20 times per timed run. Raw: SELECT COUNT(*) FROM ZITEM WHERE ZDONE = $1, 20 times."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        let times = 20
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(schema)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try QueryPredicate(format: "done == NO")
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
                    var total = 0
                    for _ in 0..<times { total &+= try context.count(for: request) }
                    return total
                }
            }
        }, raw: {
            let db = try fixtures.raw(schema)
            return { try PostgreSQLRawBaselines.countNotDone(db, times: times) }
        }, note: "\(times) counts per timed run")
    }

    static let updatePerObject = PostgreSQLScenario(
        name: "pg-update-per-object", targetRatio: 3.0,
        summary: "As update-per-object, on a schema refilled before each run: fetch the `group == 0` items (N/4), flip `done` on each, save once. Raw: SELECT Z_PK, Z_OPT, ZDONE, then one transaction with one UPDATE … WHERE Z_PK = $2 AND Z_OPT = $3 per row."
    ) { size, fixtures in
        let oursSchema = try fixtures.newSchema(), rawSchema = try fixtures.newSchema()
        return ScenarioRun(rows: size / 4, ours: {
            try fixtures.fill(oursSchema, size: size)
            let coordinator = try fixtures.openCoordinator(oursSchema)
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try QueryPredicate(format: "group == 0")
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
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
            try fixtures.fill(rawSchema, size: size)
            let db = try fixtures.raw(rawSchema)
            return { try PostgreSQLRawBaselines.updateRowByRow(db) }
        })
    }

    static func makeController(_ context: ManagedObjectContext) throws -> FetchedResultsController<ManagedObject> {
        try ResultsControllerScenarios.makeController(context, sections: false)
    }

    static let controllerFetch = PostgreSQLScenario(
        name: "pg-frc-fetch", targetRatio: 1.3,
        summary: "As frc-fetch: a FetchedResultsController over all N items, fetchBatchSize 20, sorted by createdAt: performFetch. Raw: BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; the controller's SELECT Z_PK, ZCREATEDAT … ORDER BY ZCREATEDAT, Z_PK, keys decoded into [Int64]; COMMIT."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(schema)
            return {
                let context = fixtures.makeContext(coordinator)
                return try context.performAndWait {
                    let controller = try makeController(context)
                    try controller.performFetch()
                    return controller.sections?.first?.numberOfObjects ?? 0
                }
            }
        }, raw: {
            let db = try fixtures.raw(schema)
            return { try PostgreSQLRawBaselines.controllerKeys(db) }
        })
    }

    static let controllerBatchOnAccess = PostgreSQLScenario(
        name: "pg-frc-batch-on-access", targetRatio: 1.3,
        summary: "As frc-batch-on-access: a fetched controller over N items (batch size 20, sorted by createdAt; untimed, the store kept open across runs); min(1000, N/20) random batch-aligned runs of 20 index paths, object(at:) and name of each. Raw: one SELECT … WHERE Z_PK IN ($1…$20) ORDER BY Z_PK per batch, the same keys."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        let batchIndexes = randomBatches(size: size, seed: 0xF2C_BA7C4)
        let coordinator = try fixtures.openCoordinator(schema)
        let rawDB = try fixtures.raw(schema)
        let rawIDs = try PostgreSQLRawBaselines.keysInCreatedOrder(rawDB)
        return ScenarioRun(rows: batchIndexes.count * 20, ours: {
            let context = fixtures.makeContext(coordinator)
            let controller = try context.performAndWait {
                let controller = try makeController(context)
                try controller.performFetch()
                return controller
            }
            return {
                try ResultsControllerScenarios.readBatches(batchIndexes, of: controller, in: context) {
                    (try $0.value(forKey: "name") as? String)?.utf8.count ?? 0
                }
            }
        }, raw: {
            let batches = batchIndexes.map { batch in Array(rawIDs[(batch * 20)..<min(batch * 20 + 20, rawIDs.count)]) }
            return { try PostgreSQLRawBaselines.loadBatches(rawDB, batches: batches) }
        }, note: "\(batchIndexes.count) random batches of 20 per timed run",
           perRunDivisor: (key: "us_per_batch", count: batchIndexes.count))
    }
}
