import Foundation
import GRDBSQLite

// The raw side: SQLite's C API with prepared statements, rows stepped into plain Swift structs.
// No GRDB, no OpenCoreData: the floor the library is measured against.

struct RawSQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String
    var sql: String?

    var description: String { "SQLite error \(code): \(message)" + (sql.map { " (\($0))" } ?? "") }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound text before the call returns.
private let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection, opened with the same pragmas the library uses for file stores.
final class RawConnection {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw RawSQLiteError(code: code, message: message, sql: nil)
        }
        handle = db
        sqlite3_busy_timeout(db, 5000)
        // The library's file stores: WAL (GRDB's DatabasePool) and synchronous = NORMAL.
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
        // The library's pool (GRDB's DatabasePool) writes once when it opens a store whose WAL is missing
        // or empty (a table created and dropped), so the WAL's first write, with its header sync and the
        // folder sync of a new file, happens while the store is opened, untimed. Do the same here, or the
        // raw side pays those syncs inside its first timed write (milliseconds: more than the whole
        // batch-delete of 2,500 rows).
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        if walSize == 0 {
            try execute("BEGIN IMMEDIATE; CREATE TABLE ocd_bench_wal_start (id INTEGER PRIMARY KEY); DROP TABLE ocd_bench_wal_start; COMMIT")
        }
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &error)
        if code != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(error)
            throw RawSQLiteError(code: code, message: message, sql: sql)
        }
    }

    func prepare(_ sql: String) throws -> RawStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw RawSQLiteError(code: code, message: lastMessage, sql: sql)
        }
        return RawStatement(handle: statement, connection: self)
    }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }
    var changes: Int { Int(sqlite3_changes(handle)) }
}

/// A prepared statement. Bind, step, read columns, reset.
final class RawStatement {
    let handle: OpaquePointer
    private let connection: RawConnection

    fileprivate init(handle: OpaquePointer, connection: RawConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    @inline(__always) func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    @inline(__always) func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    @inline(__always) func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(handle, index, value, -1, sqliteTransient)
    }

    /// Steps once: true for a row, false when done.
    @inline(__always) func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw RawSQLiteError(code: code, message: connection.lastMessage, sql: nil)
    }

    /// Runs a statement that returns no rows, then resets it.
    @inline(__always) func run() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    @inline(__always) func reset() { sqlite3_reset(handle) }

    @inline(__always) func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    @inline(__always) func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    @inline(__always) func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    @inline(__always) func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}

/// A to-do item row as the raw side reads it: every column of ZITEM.
struct RawItem {
    var primaryKey: Int64
    var entity: Int64
    var version: Int64
    var name: String?
    var createdAt: Date?
    var done: Bool
    var group: Int64
    var category: Int64

    static let columns = "Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATEDAT, ZDONE, ZGROUP, ZCATEGORY"

    init(_ statement: RawStatement) {
        primaryKey = statement.int64(0)
        entity = statement.int64(1)
        version = statement.int64(2)
        name = statement.string(3)
        createdAt = statement.isNull(4) ? nil : Date(timeIntervalSinceReferenceDate: statement.double(4))
        done = statement.int64(5) != 0
        group = statement.int64(6)
        category = statement.int64(7)
    }
}

/// The values every scenario writes for item `i` (1-based), on both sides.
enum Seed {
    static let firstDate: Double = 700_000_000
    static func name(_ i: Int) -> String { "Item \(i)" }
    static func createdAt(_ i: Int) -> Double { firstDate + Double(i) }
    static func done(_ i: Int) -> Bool { i % 3 == 0 }
    static func group(_ i: Int) -> Int64 { Int64(i % 4) }
    static func category(_ i: Int) -> Int64 { Int64(i % 50) }
}

/// The raw baselines, one function per scenario; each returns the same checksum as its `ours` twin.
enum RawBaselines {
    /// The keys a query returns, read through a connection of their own that is closed before the timed
    /// work: the timed connection starts with an empty page cache, as ours' keyed reader does (ours reads
    /// its IDs through the pool's reader, not the connection that loads the batches).
    static func keys(path: String, sql: String) throws -> [Int64] {
        let db = try RawConnection(path: path)
        let select = try db.prepare(sql)
        var keys: [Int64] = []
        while try select.step() { keys.append(select.int64(0)) }
        return keys
    }

    /// The entity number of Item, as the library recorded it in Z_PRIMARYKEY.
    static func itemEntityNumber(_ db: RawConnection) throws -> Int64 {
        let statement = try db.prepare("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'")
        guard try statement.step() else {
            throw RawSQLiteError(code: 0, message: "Z_PRIMARYKEY has no Item row", sql: nil)
        }
        return statement.int64(0)
    }

    /// Inserts `count` items in one transaction with one prepared INSERT, reserving their keys in
    /// Z_PRIMARYKEY as the library does. Returns the number of rows written.
    @discardableResult
    static func insert(_ db: RawConnection, count: Int, entity: Int64) throws -> Int {
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
                let i = Int(first) + offset
                insert.bind(1, Int64(i))
                insert.bind(2, entity)
                insert.bind(3, Int64(1))
                insert.bind(4, Seed.name(i))
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

    /// Reads every item into structs, then reads two attributes of each.
    static func fetchAll(_ db: RawConnection) throws -> Int {
        let select = try db.prepare("SELECT \(RawItem.columns) FROM ZITEM")
        defer { select.reset() }
        var items: [RawItem] = []
        while try select.step() { items.append(RawItem(select)) }
        var checksum = items.count
        for item in items {
            checksum &+= item.name?.utf8.count ?? 0
            checksum &+= Int(item.createdAt?.timeIntervalSinceReferenceDate ?? 0) & 7
        }
        return checksum
    }

    /// All IDs first, then rows by `Z_PK IN (…)` a batch at a time for the first `touch` items.
    static func idsThenBatches(_ db: RawConnection, batchSize: Int, touch: Int) throws -> Int {
        let selectIDs = try db.prepare("SELECT Z_PK FROM ZITEM")
        var ids: [Int64] = []
        while try selectIDs.step() { ids.append(selectIDs.int64(0)) }
        selectIDs.reset()
        var checksum = ids.count
        let wanted = min(touch, ids.count)
        var start = 0
        let placeholders = Array(repeating: "?", count: batchSize).joined(separator: ",")
        let full = try db.prepare("SELECT \(RawItem.columns) FROM ZITEM WHERE Z_PK IN (\(placeholders))")
        while start < wanted {
            let end = min(start + batchSize, ids.count)
            let statement = end - start == batchSize ? full : try db.prepare(
                "SELECT \(RawItem.columns) FROM ZITEM WHERE Z_PK IN (\(Array(repeating: "?", count: end - start).joined(separator: ",")))")
            for (position, key) in ids[start..<end].enumerated() { statement.bind(Int32(position + 1), key) }
            var rows: [RawItem] = []
            rows.reserveCapacity(end - start)
            while try statement.step() { rows.append(RawItem(statement)) }
            statement.reset()
            // Use the objects in ID order, as a batched fetch result hands them out.
            let byKey = Dictionary(rows.map { ($0.primaryKey, $0) }, uniquingKeysWith: { first, _ in first })
            for key in ids[start..<min(end, wanted)] { checksum &+= byKey[key]?.name?.utf8.count ?? 0 }
            start = end
        }
        return checksum
    }

    /// Loads each batch of primary keys with one prepared `Z_PK IN (…)` statement, reading every row.
    static func loadBatches(_ db: RawConnection, batches: [[Int64]]) throws -> Int {
        var statements: [Int: RawStatement] = [:]
        var checksum = 0
        for batch in batches {
            let statement: RawStatement
            if let cached = statements[batch.count] {
                statement = cached
            } else {
                let placeholders = Array(repeating: "?", count: batch.count).joined(separator: ",")
                statement = try db.prepare("SELECT \(RawItem.columns) FROM ZITEM WHERE Z_PK IN (\(placeholders))")
                statements[batch.count] = statement
            }
            for (position, key) in batch.enumerated() { statement.bind(Int32(position + 1), key) }
            var rows: [RawItem] = []
            rows.reserveCapacity(batch.count)
            while try statement.step() { rows.append(RawItem(statement)) }
            statement.reset()
            for row in rows { checksum &+= row.name?.utf8.count ?? 0 }
            checksum &+= rows.count
        }
        return checksum
    }

    /// SELECT COUNT(*) with the predicate's SQL, `times` times.
    static func count(_ db: RawConnection, whereClause: String, times: Int) throws -> Int {
        let statement = try db.prepare("SELECT COUNT(*) FROM ZITEM WHERE \(whereClause)")
        var total = 0
        for _ in 0..<times {
            guard try statement.step() else { throw RawSQLiteError(code: 0, message: "no count row", sql: nil) }
            total &+= Int(statement.int64(0))
            statement.reset()
        }
        return total
    }

    /// Selects the rows to change into structs, then, in one transaction, one
    /// `UPDATE … WHERE Z_PK = ? AND Z_OPT = ?` per row flipping `done` and bumping `Z_OPT` (the same
    /// optimistic-locking write the library does).
    static func updateRowByRow(_ db: RawConnection, selection: UpdateSelection) throws -> Int {
        let select = try db.prepare("SELECT Z_PK, Z_OPT, ZDONE FROM ZITEM \(selection.rawSQLSuffix)")
        struct Target { var key: Int64; var version: Int64; var done: Bool }
        var targets: [Target] = []
        while try select.step() {
            targets.append(Target(key: select.int64(0), version: select.int64(1), done: select.int64(2) != 0))
        }
        select.reset()
        try db.execute("BEGIN IMMEDIATE")
        var checksum = targets.count
        do {
            let update = try db.prepare("UPDATE ZITEM SET ZDONE = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?")
            for target in targets {
                update.bind(1, Int64(target.done ? 0 : 1))
                update.bind(2, target.key)
                update.bind(3, target.version)
                try update.run()
                guard db.changes == 1 else {
                    throw RawSQLiteError(code: 0, message: "row \(target.key) changed underneath", sql: nil)
                }
                checksum &+= target.done ? 0 : 1
            }
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
        return checksum
    }
}

/// Which rows the update scenario changes: by predicate (`group == 0`) or, until predicates exist,
/// the first rows/4 by fetchLimit.
enum UpdateSelection {
    case predicate
    case limit(Int)

    var rawSQLSuffix: String {
        switch self {
        case .predicate: return "WHERE ZGROUP = 0"
        case .limit(let count): return "LIMIT \(count)"
        }
    }
}
