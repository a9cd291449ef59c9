import Foundation
import OpenCoreData

// Issue 6, batch requests: BatchUpdateRequest / BatchDeleteRequest / BatchInsertRequest executed through
// a context, straight on the store, against the one SQL statement raw SQLite needs. `group == 0` selects
// a quarter of the rows (250,000 of 1,000,000). The per-object path for the same update is the
// `update-per-object` scenario.

enum BatchScenarios {
    static let all: [Scenario] = [updateCount, updateIDs, mergeIDs, insert, delete]

    static let matching = "group == 0"
    static let rawMatching = "ZGROUP = 0"

    static func updateRequest(_ resultType: BatchResultType) throws -> BatchUpdateRequest {
        let request = BatchUpdateRequest(entityName: "Item")
        request.predicate = try QueryPredicate(format: matching)
        request.propertiesToUpdate = ["done": true]
        request.resultType = resultType
        return request
    }

    /// Opens a raw connection to a private copy and reads one row, so the schema is loaded before the
    /// timed body (the library's coordinator has read it when the store was added).
    static func warmConnection(size: Int, fixtures: Fixtures) throws -> RawConnection {
        let db = try RawConnection(path: try fixtures.copyOfPopulatedStore(size: size).path)
        let probe = try db.prepare("SELECT Z_PK FROM ZITEM LIMIT 1")
        _ = try probe.step()
        probe.reset()
        return db
    }

    /// Runs a batch request on a fresh private-queue context.
    static func execute(_ request: some PersistentStoreRequest, coordinator: PersistentStoreCoordinator,
                        fixtures: Fixtures) throws -> BatchResult {
        try execute(request, coordinator: coordinator, context: fixtures.makeContext(coordinator))
    }

    /// Runs a batch request on `context` (fresh, on `coordinator`).
    static func execute(_ request: some PersistentStoreRequest, coordinator: PersistentStoreCoordinator,
                        context: ManagedObjectContext) throws -> BatchResult {
        try context.performAndWait {
            guard let result = try context.execute(request) as? BatchResult else {
                throw ScenarioSkipped(reason: "execute(\(type(of: request))) did not return a BatchResult")
            }
            return result
        }
    }

    /// (6a) Batch update, count result.
    static let updateCount = Scenario(
        name: "batch-update-count", targetRatio: 1.2,
        summary: "On a copy of the N-item store: BatchUpdateRequest, predicate group == 0 (N/4 rows), propertiesToUpdate done = true, resultType .count. Raw: UPDATE ZITEM SET ZDONE = 1, Z_OPT = Z_OPT + 1 WHERE ZGROUP = 0. Peak memory bounded: ≤ 10 MB above the run's baseline. The per-object path for the same rows is update-per-object.",
        peakMemoryTargetMB: 10
    ) { size, fixtures in
        ScenarioRun(rows: size / 4, ours: {
            let coordinator = try fixtures.openCoordinator(try fixtures.copyOfPopulatedStore(size: size))
            let request = try updateRequest(.count)
            return { try execute(request, coordinator: coordinator, fixtures: fixtures).count }
        }, raw: {
            let db = try warmConnection(size: size, fixtures: fixtures)
            return {
                try db.execute("UPDATE ZITEM SET ZDONE = 1, Z_OPT = Z_OPT + 1 WHERE \(rawMatching)")
                return db.changes
            }
        }, peer: {
            let pool = try PeerBaselines.pool(try fixtures.copyOfPopulatedStore(size: size))
            return { try PeerBaselines.batchUpdateCount(pool) }
        }, note: "the per-object path (fetch, setValue, save) for the same rows is update-per-object")
    }

    /// (6b) Batch update, object-IDs result.
    static let updateIDs = Scenario(
        name: "batch-update-ids", targetRatio: 1.5,
        summary: "As batch-update-count with resultType .objectIDs (the IDs' primary keys summed). Raw: UPDATE … WHERE ZGROUP = 0 RETURNING Z_PK, stepped into [Int64]."
    ) { size, fixtures in
        ScenarioRun(rows: size / 4, ours: {
            let coordinator = try fixtures.openCoordinator(try fixtures.copyOfPopulatedStore(size: size))
            let request = try updateRequest(.objectIDs)
            return {
                let result = try execute(request, coordinator: coordinator, fixtures: fixtures)
                var sum = result.objectIDs.count
                for id in result.objectIDs { sum &+= Int(id.primaryKey) }
                return sum
            }
        }, raw: {
            let db = try warmConnection(size: size, fixtures: fixtures)
            return {
                let update = try db.prepare("UPDATE ZITEM SET ZDONE = 1, Z_OPT = Z_OPT + 1 WHERE \(rawMatching) RETURNING Z_PK")
                var keys: [Int64] = []
                while try update.step() { keys.append(update.int64(0)) }
                update.reset()
                var sum = keys.count
                for key in keys { sum &+= Int(key) }
                return sum
            }
        }, peer: {
            let pool = try PeerBaselines.pool(try fixtures.copyOfPopulatedStore(size: size))
            return { try PeerBaselines.batchUpdateKeys(pool) }
        })
    }

    /// (6c) Merging a batch update's IDs into a live context.
    static let mergeIDs = Scenario(
        name: "batch-merge-ids", targetRatio: nil,
        summary: "A context holding 1,000 registered, filled objects (the first 1,000 by Z_PK; a quarter of them are in group 0) merges the N/4 IDs a batch update of group == 0 returned: ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextDidSave(updated: ids), into: [context]). The ContextDidSave is built untimed (set_build_ms reports that). Absolute target: merge_ms ≤ 50 ms (median). No raw side."
    ) { size, fixtures in
        let figures = Figures([FigureSpec("merge_ms", .median, target: 50), FigureSpec("set_build_ms", .median)])
        return ScenarioRun(rows: size / 4, ours: {
            let coordinator = try fixtures.openCoordinator(try fixtures.copyOfPopulatedStore(size: size))
            let ids = try execute(try updateRequest(.objectIDs), coordinator: coordinator, fixtures: fixtures).objectIDs
            let buildStart = monotonicSeconds()
            let saved = ContextDidSave(updated: Set(ids))
            figures.recordMilliseconds("set_build_ms", from: buildStart, to: monotonicSeconds())
            let context = fixtures.makeContext(coordinator)
            let held = try context.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: "Item")
                request.fetchLimit = 1000
                request.sortDescriptors = [QuerySortDescriptor(key: "createdAt")]
                let objects = try context.fetch(request)
                for object in objects { _ = try object.value(forKey: "done") }
                return objects
            }
            let merged = ids.count
            return {
                withExtendedLifetime(held) {
                    let start = monotonicSeconds()
                    ManagedObjectContext.mergeChanges(fromRemoteContextSave: saved, into: [context])
                    figures.recordMilliseconds("merge_ms", from: start, to: monotonicSeconds())
                }
                return merged
            }
        }, raw: nil, note: "context holds 1,000 filled objects; the time column is the merge alone", figures: figures)
    }

    /// (6d) Batch insert of N dictionaries.
    static let insert = Scenario(
        name: "batch-insert", targetRatio: 1.5,
        summary: "Into an empty store: BatchInsertRequest with N dictionaries (name, createdAt, done, group, category; built untimed), resultType .count. Raw: one transaction, keys reserved in Z_PRIMARYKEY, one prepared INSERT stepped N times with the same precomputed names."
    ) { size, fixtures in
        ScenarioRun(rows: size, ours: {
            let url = fixtures.freshURL("batch-insert-ours")
            try fixtures.createEmptyStore(at: url)
            let coordinator = try fixtures.openCoordinator(url)
            var rows: [[String: Any]] = []
            rows.reserveCapacity(size)
            for i in 1...size {
                rows.append(["name": Seed.name(i), "createdAt": Date(timeIntervalSinceReferenceDate: Seed.createdAt(i)),
                             "done": Seed.done(i), "group": Seed.group(i), "category": Seed.category(i)])
            }
            let request = BatchInsertRequest(entityName: "Item", objects: rows)
            request.resultType = .count
            return { try execute(request, coordinator: coordinator, fixtures: fixtures).count }
        }, raw: {
            let url = fixtures.freshURL("batch-insert-raw")
            try fixtures.createEmptyStore(at: url)
            let db = try RawConnection(path: url.path)
            let entity = try RawBaselines.itemEntityNumber(db)
            let names = (1...size).map(Seed.name)
            return { try insertPrecomputed(db, names: names, entity: entity) }
        }, peer: {
            let url = fixtures.freshURL("batch-insert-peer")
            try fixtures.createEmptyStore(at: url)
            let pool = try PeerBaselines.pool(url)
            let entity = try PeerBaselines.itemEntityNumber(pool)
            let names = (1...size).map(Seed.name)
            return { try PeerBaselines.insert(pool, count: size, entity: entity, name: { names[$0 - 1] }) }
        })
    }

    /// (6e) Batch delete of N/4 rows.
    static let delete = Scenario(
        name: "batch-delete", targetRatio: 1.5,
        summary: "On a copy of the N-item store: BatchDeleteRequest(fetchRequest:) with the predicate group == 0 (N/4 rows), resultType .count. Raw: DELETE FROM ZITEM WHERE ZGROUP = 0."
    ) { size, fixtures in
        ScenarioRun(rows: size / 4, ours: {
            let coordinator = try fixtures.openCoordinator(try fixtures.copyOfPopulatedStore(size: size))
            let fetch = FetchRequest<ManagedObject>(entityName: "Item")
            fetch.predicate = try QueryPredicate(format: matching)
            let request = BatchDeleteRequest(fetchRequest: fetch)
            request.resultType = .count
            return { try execute(request, coordinator: coordinator, fixtures: fixtures).count }
        }, raw: {
            let db = try warmConnection(size: size, fixtures: fixtures)
            return {
                try db.execute("DELETE FROM ZITEM WHERE \(rawMatching)")
                return db.changes
            }
        }, peer: {
            let pool = try PeerBaselines.pool(try fixtures.copyOfPopulatedStore(size: size))
            return { try PeerBaselines.batchDelete(pool) }
        })
    }

    /// The raw insert with names computed beforehand (as ours gets its dictionaries beforehand).
    static func insertPrecomputed(_ db: RawConnection, names: [String], entity: Int64) throws -> Int {
        let count = names.count
        try db.execute("BEGIN IMMEDIATE")
        do {
            let reserve = try db.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ? RETURNING Z_MAX")
            reserve.bind(1, Int64(count))
            reserve.bind(2, entity)
            guard try reserve.step() else { throw RawSQLiteError(code: 0, message: "no key row", sql: nil) }
            let first = reserve.int64(0) - Int64(count) + 1
            reserve.reset()
            let insert = try db.prepare("INSERT INTO ZITEM (\(RawItem.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            for offset in 0..<count {
                let i = offset + 1
                insert.bind(1, first + Int64(offset))
                insert.bind(2, entity)
                insert.bind(3, Int64(1))
                insert.bind(4, names[offset])
                insert.bind(5, Seed.createdAt(i))
                insert.bind(6, Int64(Seed.done(i) ? 1 : 0))
                insert.bind(7, Seed.group(i))
                insert.bind(8, Seed.category(i))
                try insert.run()
            }
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        return count
    }
}
