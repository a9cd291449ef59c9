import Foundation
import GRDB

// The peer side: what a Swift developer on Linux would write instead of OpenCoreData, GRDB's record layer
// used the way its documentation recommends (a Codable struct record, the query interface, a
// DatabasePool), on the same store file and its Core Data layout. Not tuned beyond that. Each body returns
// the same checksum as its `ours` and raw twins.

/// A to-do item as a GRDB record: a struct, Codable, with its columns named by its coding keys.
struct PeerItem: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "ZITEM"

    var id: Int64
    var entity: Int64
    var version: Int64
    var name: String?
    /// Seconds since 2001, as Core Data stores dates.
    var createdAt: Double?
    var done: Bool
    var group: Int64
    var category: Int64

    enum CodingKeys: String, CodingKey {
        case id = "Z_PK", entity = "Z_ENT", version = "Z_OPT", name = "ZNAME", createdAt = "ZCREATEDAT"
        case done = "ZDONE", group = "ZGROUP", category = "ZCATEGORY"
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let version = Column(CodingKeys.version)
        static let done = Column(CodingKeys.done)
        static let group = Column(CodingKeys.group)
        static let category = Column(CodingKeys.category)
        static let createdAt = Column(CodingKeys.createdAt)
    }

    /// Item `i` as every scenario seeds it.
    init(seed i: Int, entity: Int64, name: String) {
        id = Int64(i)
        self.entity = entity
        version = 1
        self.name = name
        createdAt = Seed.createdAt(i)
        done = Seed.done(i)
        group = Seed.group(i)
        category = Seed.category(i)
    }
}

/// The peer's baselines, one function per scenario body.
enum PeerBaselines {
    /// Why a scenario has no peer side, by scenario name (shown in the table and the JSON).
    static let missing: [String: String] = [
        "async-fetch-cancel": "GRDB has no cancellation of a read in progress that reports back like a fetch",
        "async-fetch-perform-latency": "measures the context's queue while a fetch runs; records have no queue",
        "batch-merge-ids": "records are values: there are no live objects to merge a batch's changes into",
        "frc-batch-on-access": "records have no faulting: a batch loaded on access has no record-layer twin",
        "frc-batch-typed": "records have no faulting: a batch loaded on access has no record-layer twin",
        "history-save": "GRDB keeps no history of its own; the raw column is the library without history",
        "history-fetch": "GRDB keeps no history of its own",
        "history-remote-latency": "GRDB's ValueObservation sees its own pool's writes only, not another process's",
    ]

    /// A pool on a store file, with the pragmas both other sides use (WAL is the pool's own).
    static func pool(_ url: URL) throws -> DatabasePool {
        var configuration = Configuration()
        // As the other sides: wait for a lock instead of failing at once (the other sides' connections may
        // still be closing when the peer opens the same file).
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        return try DatabasePool(path: url.path, configuration: configuration)
    }

    static func itemEntityNumber(_ pool: DatabasePool) throws -> Int64 {
        guard let entity = try pool.read({ db in
            try Int64.fetchOne(db, sql: "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?", arguments: ["Item"])
        }) else { throw RawSQLiteError(code: 0, message: "Z_PRIMARYKEY has no Item row", sql: nil) }
        return entity
    }

    /// Inserts items in one write transaction, their keys reserved in Z_PRIMARYKEY as Core Data's layout
    /// asks; `name(i)` gives item i's name (computed in the loop, or looked up when precomputed).
    static func insert(_ pool: DatabasePool, count: Int, entity: Int64, name: (Int) -> String) throws -> Int {
        try pool.write { db in
            guard let last = try Int64.fetchOne(
                db, sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + ? WHERE Z_ENT = ? RETURNING Z_MAX",
                arguments: [count, entity]) else {
                throw RawSQLiteError(code: 0, message: "no key row", sql: nil)
            }
            let first = Int(last) - count + 1
            for i in first..<(first + count) {
                try PeerItem(seed: i, entity: entity, name: name(i)).insert(db)
            }
        }
        return count
    }

    /// Every item as a record, then name and createdAt of each.
    static func fetchAll(_ pool: DatabasePool) throws -> Int {
        let items = try pool.read { db in try PeerItem.fetchAll(db) }
        var checksum = items.count
        for item in items {
            checksum &+= item.name?.utf8.count ?? 0
            checksum &+= Int(item.createdAt ?? 0) & 7
        }
        return checksum
    }

    /// All keys, then records by key a batch at a time for the first `touch` items, used in key order.
    static func idsThenBatches(_ pool: DatabasePool, batchSize: Int, touch: Int) throws -> Int {
        try pool.read { db in
            let ids = try PeerItem.select(PeerItem.Columns.id, as: Int64.self).fetchAll(db)
            var checksum = ids.count
            let wanted = min(touch, ids.count)
            var start = 0
            while start < wanted {
                let end = min(start + batchSize, ids.count)
                let records = try PeerItem.fetchAll(db, keys: ids[start..<end])
                let byKey = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                for key in ids[start..<min(end, wanted)] { checksum &+= byKey[key]?.name?.utf8.count ?? 0 }
                start = end
            }
            return checksum
        }
    }

    /// Each batch of keys as records, every name read.
    static func loadBatches(_ pool: DatabasePool, batches: [[Int64]]) throws -> Int {
        try pool.read { db in
            var checksum = 0
            for batch in batches {
                let records = try PeerItem.fetchAll(db, keys: batch)
                for record in records { checksum &+= record.name?.utf8.count ?? 0 }
                checksum &+= records.count
            }
            return checksum
        }
    }

    /// `done == NO` counted `times` times.
    static func countNotDone(_ pool: DatabasePool, times: Int) throws -> Int {
        try pool.read { db in
            var total = 0
            for _ in 0..<times { total &+= try PeerItem.filter(PeerItem.Columns.done == false).fetchCount(db) }
            return total
        }
    }

    /// The records of group 0 fetched, `done` flipped and each record updated, in one write transaction
    /// (the version column bumped too, as the other sides' optimistic locking does).
    static func updatePerRecord(_ pool: DatabasePool, selection: UpdateSelection) throws -> Int {
        try pool.write { db in
            let request: QueryInterfaceRequest<PeerItem>
            switch selection {
            case .predicate: request = PeerItem.filter(PeerItem.Columns.group == 0)
            case .limit(let count): request = PeerItem.limit(count)
            }
            var items = try request.fetchAll(db)
            var checksum = items.count
            for index in items.indices {
                checksum &+= items[index].done ? 0 : 1
                items[index].done.toggle()
                items[index].version += 1
                try items[index].update(db)
            }
            return checksum
        }
    }

    /// The batch scenarios' rows: group 0.
    static var matching: QueryInterfaceRequest<PeerItem> { PeerItem.filter(PeerItem.Columns.group == 0) }
    static var markDone: [ColumnAssignment] { [PeerItem.Columns.done.set(to: true), PeerItem.Columns.version += 1] }

    /// `UPDATE … SET done = 1` through the query interface; the number of rows changed.
    static func batchUpdateCount(_ pool: DatabasePool) throws -> Int {
        try pool.write { db in try matching.updateAll(db, markDone) }
    }

    /// The same update returning the changed keys; their count plus their sum.
    static func batchUpdateKeys(_ pool: DatabasePool) throws -> Int {
        try pool.write { db in
            let statement = try matching.updateAndFetchStatement(db, markDone, selection: [PeerItem.Columns.id])
            let keys = try Int64.fetchAll(statement)
            var sum = keys.count
            for key in keys { sum &+= Int(key) }
            return sum
        }
    }

    /// `DELETE … WHERE group = 0` through the query interface; the number of rows deleted.
    static func batchDelete(_ pool: DatabasePool) throws -> Int {
        try pool.write { db in try matching.deleteAll(db) }
    }

    /// Reads off the caller's queue (`asyncRead`) and waits for the result, as an app waits for a
    /// completion: every record, primary keys summed.
    static func asyncFetchAll(_ pool: DatabasePool) throws -> Int {
        try waitForRead(pool) { db in
            let items = try PeerItem.fetchAll(db)
            var sum = items.count
            for item in items { sum &+= Int(item.id) }
            return sum
        }
    }

    /// Every key off the caller's queue; count plus sum.
    static func asyncFetchKeys(_ pool: DatabasePool) throws -> Int {
        try waitForRead(pool) { db in
            let keys = try PeerItem.select(PeerItem.Columns.id, as: Int64.self).fetchAll(db)
            var sum = keys.count
            for key in keys { sum &+= Int(key) }
            return sum
        }
    }

    private static func waitForRead(_ pool: DatabasePool,
                                    _ body: @escaping @Sendable (Database) throws -> Int) throws -> Int {
        let done = Latch()
        let outcome = Shared<Result<Int, any Error>>(.success(0))
        pool.asyncRead { database in
            outcome.value = Result { try body(try database.get()) }
            done.signal()
        }
        try done.wait(what: "the peer's asynchronous read")
        return try outcome.value.get()
    }
}
