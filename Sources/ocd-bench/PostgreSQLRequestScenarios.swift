import Foundation
import OpenCoreData

/// The batch-request and asynchronous-fetch scenarios on a server: the SQLite scenarios' twins (BatchScenarios,
/// AsyncFetchScenarios) on the same items, against postgres-nio alone sending the statements the store sends.
/// Write scenarios refill a schema of each side before each run (untimed).
enum PostgreSQLRequestScenarios {
    static let all: [PostgreSQLScenario] = [batchUpdateCount, batchUpdateIDs, batchDelete, asyncFetchAll]

    /// A batch update of the `group == 0` items (N/4): `done` set, as on SQLite.
    static func updateRequest(_ resultType: BatchResultType) throws -> BatchUpdateRequest {
        let request = BatchUpdateRequest(entityName: "Item")
        request.predicate = try QueryPredicate(format: BatchScenarios.matching)
        request.propertiesToUpdate = ["done": true]
        request.resultType = resultType
        return request
    }

    /// The store's batch update statement (PostgreSQLStore+Batch), `RETURNING` the keys when `returning`.
    static func rawUpdate(returning: Bool) -> String {
        "UPDATE ZITEM AS t0 SET ZDONE = $1, Z_OPT = Z_OPT + 1 WHERE t0.ZGROUP = $2" + (returning ? " RETURNING t0.Z_ENT, t0.Z_PK" : "")
    }

    /// Runs `body` between `BEGIN` and `COMMIT` on the raw connection (`ROLLBACK` when it throws).
    static func inTransaction<T>(_ db: RawPostgreSQL, _ body: () throws -> T) throws -> T {
        try db.run("BEGIN")
        do {
            let result = try body()
            try db.run("COMMIT")
            return result
        } catch {
            _ = try? db.run("ROLLBACK")
            throw error
        }
    }

    static let batchUpdateCount = PostgreSQLScenario(
        name: "pg-batch-update-count", targetRatio: 1.2,
        summary: "As batch-update-count, on a schema refilled before each run: BatchUpdateRequest, group == 0 (N/4 rows), done = true, resultType .count. Raw: BEGIN, UPDATE ZITEM AS t0 SET ZDONE = $1, Z_OPT = Z_OPT + 1 WHERE t0.ZGROUP = $2, COMMIT."
    ) { size, fixtures in
        let oursSchema = try fixtures.newSchema(), rawSchema = try fixtures.newSchema()
        return ScenarioRun(rows: size / 4, ours: {
            try fixtures.fill(oursSchema, size: size)
            let coordinator = try fixtures.openCoordinator(oursSchema)
            let request = try updateRequest(.count)
            return { try BatchScenarios.execute(request, coordinator: coordinator, context: fixtures.makeContext(coordinator)).count }
        }, raw: {
            try fixtures.fill(rawSchema, size: size)
            let db = try fixtures.raw(rawSchema)
            return {
                try inTransaction(db) {
                    try db.run(rawUpdate(returning: false), [true.storeValue, 0.storeValue]).metadata.rows ?? -1
                }
            }
        })
    }

    static let batchUpdateIDs = PostgreSQLScenario(
        name: "pg-batch-update-ids", targetRatio: 1.5,
        summary: "As pg-batch-update-count with resultType .objectIDs (the IDs' primary keys summed). Raw: the same UPDATE … RETURNING t0.Z_ENT, t0.Z_PK, decoded into [Int64]."
    ) { size, fixtures in
        let oursSchema = try fixtures.newSchema(), rawSchema = try fixtures.newSchema()
        return ScenarioRun(rows: size / 4, ours: {
            try fixtures.fill(oursSchema, size: size)
            let coordinator = try fixtures.openCoordinator(oursSchema)
            let request = try updateRequest(.objectIDs)
            return {
                let result = try BatchScenarios.execute(request, coordinator: coordinator, context: fixtures.makeContext(coordinator))
                var sum = result.objectIDs.count
                for id in result.objectIDs { sum &+= Int(id.primaryKey) }
                return sum
            }
        }, raw: {
            try fixtures.fill(rawSchema, size: size)
            let db = try fixtures.raw(rawSchema)
            return {
                let keys = try inTransaction(db) {
                    try db.run(rawUpdate(returning: true), [true.storeValue, 0.storeValue]).rows.map { try $0.decode((Int64, Int64).self).1 }
                }
                var sum = keys.count
                for key in keys { sum &+= Int(key) }
                return sum
            }
        })
    }

    static let batchDelete = PostgreSQLScenario(
        name: "pg-batch-delete", targetRatio: 1.5,
        summary: "As batch-delete, on a schema refilled before each run: BatchDeleteRequest(fetchRequest:), group == 0 (N/4 rows), resultType .count. Raw: BEGIN, DELETE FROM ZITEM WHERE ZGROUP = $1, COMMIT (the store sends the same one statement: no relationship touches Item)."
    ) { size, fixtures in
        let oursSchema = try fixtures.newSchema(), rawSchema = try fixtures.newSchema()
        return ScenarioRun(rows: size / 4, ours: {
            try fixtures.fill(oursSchema, size: size)
            let coordinator = try fixtures.openCoordinator(oursSchema)
            let fetch = FetchRequest<ManagedObject>(entityName: "Item")
            fetch.predicate = try QueryPredicate(format: BatchScenarios.matching)
            let request = BatchDeleteRequest(fetchRequest: fetch)
            request.resultType = .count
            return { try BatchScenarios.execute(request, coordinator: coordinator, context: fixtures.makeContext(coordinator)).count }
        }, raw: {
            try fixtures.fill(rawSchema, size: size)
            let db = try fixtures.raw(rawSchema)
            return {
                try inTransaction(db) { try db.run("DELETE FROM ZITEM WHERE ZGROUP = $1", [0.storeValue]).metadata.rows ?? -1 }
            }
        })
    }

    static let asyncFetchAll = PostgreSQLScenario(
        name: "pg-async-fetch-all", targetRatio: 2.0,
        summary: "As async-fetch-all: AsynchronousFetchRequest for all N items (progressInterval 500) on a private-queue context, timed from execute to the completion block (which sums the primary keys); first_progress_ms: execute → first progress report. Raw: SELECT every column into structs, primary keys summed."
    ) { size, fixtures in
        let schema = try fixtures.populated(size: size)
        let figures = Figures([FigureSpec("first_progress_ms", .median, target: 50)])
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(schema)
            return { try AsyncFetchScenarios.fetchAllSummingKeys(in: fixtures.makeContext(coordinator), figures: figures) }
        }, raw: {
            let db = try fixtures.raw(schema)
            return {
                let items = try db.run("SELECT \(RawPostgreSQLItem.columns) FROM ZITEM").rows.map(RawPostgreSQLItem.init)
                var sum = items.count
                for item in items { sum &+= Int(item.primaryKey) }
                return sum
            }
        }, figures: figures)
    }
}
