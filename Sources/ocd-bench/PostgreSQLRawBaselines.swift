import Foundation
import OpenCoreData
import PostgresNIO

/// An item row as postgres-nio alone decodes it (the raw side of the PostgreSQL scenarios).
struct RawPostgreSQLItem {
    var primaryKey: Int64
    var entity: Int64
    var version: Int64
    var name: String?
    var createdAt: Date?
    var done: Bool
    var group: Int64
    var category: Int64

    static let columns = "Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATEDAT, ZDONE, ZGROUP, ZCATEGORY"

    init(_ row: PostgresRow) throws {
        let (key, entity, version, name, createdAt, done, group, category) =
            try row.decode((Int64, Int64, Int64, String?, Double?, Int64, Int64, Int64).self)
        self.primaryKey = key
        self.entity = entity
        self.version = version
        self.name = name
        // The store keeps dates as DOUBLE PRECISION seconds since 2001 (docs/POSTGRESQL.md, "Layout").
        self.createdAt = createdAt.map { Date(timeIntervalSinceReferenceDate: $0) }
        self.done = done != 0
        self.group = group
        self.category = category
    }
}

/// The raw twins of the PostgreSQL scenarios: the statements the store sends, through one postgres-nio
/// connection, each waited for. Each returns the same checksum as its `ours` twin.
enum PostgreSQLRawBaselines {
    /// Every item into structs, then name and createdAt of each read.
    static func fetchAll(_ db: RawPostgreSQL) throws -> Int {
        let items = try db.run("SELECT \(RawPostgreSQLItem.columns) FROM ZITEM").rows.map(RawPostgreSQLItem.init)
        var checksum = items.count
        for item in items {
            checksum &+= item.name?.utf8.count ?? 0
            checksum &+= Int(item.createdAt?.timeIntervalSinceReferenceDate ?? 0) & 7
        }
        return checksum
    }

    /// The items of group 0 not done, newest first, their names read.
    static func fetchWithPredicateAndSort(_ db: RawPostgreSQL) throws -> Int {
        let items = try db.run("SELECT \(RawPostgreSQLItem.columns) FROM ZITEM WHERE ZGROUP = $1 AND ZDONE = $2 ORDER BY ZCREATEDAT DESC",
                               [0.storeValue, 0.storeValue]).rows.map(RawPostgreSQLItem.init)
        return sortedChecksum(items.map { (name: $0.name, createdAt: $0.createdAt) })
    }

    /// Count plus name lengths, and whether the dates came in descending order (so a wrong sort shows).
    static func sortedChecksum(_ items: [(name: String?, createdAt: Date?)]) -> Int {
        var checksum = items.count
        var previous = Double.infinity
        for item in items {
            checksum &+= item.name?.utf8.count ?? 0
            let seconds = item.createdAt?.timeIntervalSinceReferenceDate ?? 0
            if seconds > previous { checksum &+= 1_000_000 }
            previous = seconds
        }
        return checksum
    }

    /// The keys of every item in the controller's order (untimed setup of the batch scenarios, and the
    /// timed key query of pg-frc-fetch).
    static func keysInCreatedOrder(_ db: RawPostgreSQL) throws -> [Int64] {
        try db.run("SELECT Z_PK FROM ZITEM ORDER BY ZCREATEDAT, Z_PK").rows.map { try $0.decode(Int64.self) }
    }

    /// The results controller's key query as the store sends it, in one REPEATABLE READ, READ ONLY
    /// transaction. The statement selects the sort key too, as the controller's does (a server sends what is
    /// selected), but only the keys are decoded: the dates' decoding is the library's work, measured on its side.
    static func controllerKeys(_ db: RawPostgreSQL) throws -> Int {
        try db.run("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        do {
            let keys = try db.run("SELECT t0.Z_PK, t0.ZCREATEDAT FROM ZITEM t0 ORDER BY t0.ZCREATEDAT, t0.Z_PK").rows
                .map { row in try row.first.map { try $0.decode(Int64.self) } ?? 0 }
            try db.run("COMMIT")
            return keys.count
        } catch {
            _ = try? db.run("ROLLBACK")
            throw error
        }
    }

    /// One `SELECT … WHERE Z_PK IN (…) ORDER BY Z_PK` per batch, rows into structs, names read.
    static func loadBatches(_ db: RawPostgreSQL, batches: [[Int64]]) throws -> Int {
        var checksum = 0
        for batch in batches {
            let placeholders = (1...batch.count).map { "$\($0)" }.joined(separator: ", ")
            let rows = try db.run("SELECT \(RawPostgreSQLItem.columns) FROM ZITEM WHERE Z_PK IN (\(placeholders)) ORDER BY Z_PK",
                                  batch.map(\.storeValue)).rows.map(RawPostgreSQLItem.init)
            for row in rows { checksum &+= row.name?.utf8.count ?? 0 }
            checksum &+= rows.count
        }
        return checksum
    }

    /// `SELECT COUNT(*) … WHERE ZDONE = 0`, `times` times.
    static func countNotDone(_ db: RawPostgreSQL, times: Int) throws -> Int {
        var total = 0
        for _ in 0..<times {
            guard let row = try db.run("SELECT COUNT(*) FROM ZITEM WHERE ZDONE = $1", [0.storeValue]).rows.first else { continue }
            total &+= Int(try row.decode(Int64.self))
        }
        return total
    }

    /// Reserves `count` keys, then inserts items 1…`count` in one transaction, one INSERT each.
    static func insert(_ db: RawPostgreSQL, count: Int, entity: Int64) throws -> Int {
        guard let reserved = try db.run("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + $1 WHERE Z_ENT = $2 RETURNING Z_MAX",
                                        [Int64(count).storeValue, entity.storeValue]).rows.first else {
            throw BenchWorkerFailure(description: "Z_PRIMARYKEY has no row for entity \(entity)")
        }
        let first = try reserved.decode(Int64.self) - Int64(count) + 1
        try db.run("BEGIN")
        do {
            // Batched as the store batches a save: 500 rows a statement, seven parameters a row.
            let rowsPerStatement = 500
            for start in stride(from: 1, through: count, by: rowsPerStatement) {
                let end = min(start + rowsPerStatement - 1, count)
                var values: [String] = [], arguments: [StoreValue] = []
                for i in start...end {
                    let base = arguments.count
                    values.append("($\(base + 1), $\(base + 2), 1, $\(base + 3), $\(base + 4), $\(base + 5), $\(base + 6), $\(base + 7))")
                    arguments += [(first + Int64(i) - 1).storeValue, entity.storeValue, Seed.name(i).storeValue,
                                  Seed.createdAt(i).storeValue, (Seed.done(i) ? 1 : 0).storeValue,
                                  Seed.group(i).storeValue, Seed.category(i).storeValue]
                }
                try db.run("INSERT INTO ZITEM (\(RawPostgreSQLItem.columns)) VALUES " + values.joined(separator: ", "), arguments)
            }
            try db.run("COMMIT")
        } catch {
            _ = try? db.run("ROLLBACK")
            throw error
        }
        return count
    }

    /// The group-0 items' keys, versions and flags, then one transaction with one optimistic-locking
    /// UPDATE per row flipping `done`.
    static func updateRowByRow(_ db: RawPostgreSQL) throws -> Int {
        struct Target { var key: Int64; var version: Int64; var done: Bool }
        let targets = try db.run("SELECT Z_PK, Z_OPT, ZDONE FROM ZITEM WHERE ZGROUP = $1", [0.storeValue]).rows.map {
            let (key, version, done) = try $0.decode((Int64, Int64, Int64).self)
            return Target(key: key, version: version, done: done != 0)
        }
        var checksum = targets.count
        try db.run("BEGIN")
        do {
            for target in targets {
                let result = try db.run("UPDATE ZITEM SET ZDONE = $1, Z_OPT = Z_OPT + 1 WHERE Z_PK = $2 AND Z_OPT = $3",
                                        [(target.done ? 0 : 1).storeValue, target.key.storeValue, target.version.storeValue])
                guard result.metadata.rows == 1 else {
                    throw BenchWorkerFailure(description: "row \(target.key) changed underneath")
                }
                checksum &+= target.done ? 0 : 1
            }
            try db.run("COMMIT")
        } catch {
            _ = try? db.run("ROLLBACK")
            throw error
        }
        return checksum
    }
}
