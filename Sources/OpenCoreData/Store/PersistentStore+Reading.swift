import Foundation
import GRDB
import GRDBSQLite

extension PersistentStore {
    /// The SELECT list of every column of a table, aliased t0.
    func selectList(for table: StoreSchema.Table) -> String {
        table.columns.map { "t0." + $0.name }.joined(separator: ", ")
    }

    /// Reads rows by primary key, any entity of the model.
    func rows(for ids: [ManagedObjectID]) throws -> [RowValues] {
        // A batch is nearly always one entity's saved objects: checked by identity first, then by table.
        var byTable: [(table: String, keys: [Int64])] = []
        if let first = ids.first?.entity,
           ids.allSatisfy({ ($0.entity === first || $0.entity.tableName == first.tableName) && !$0.isTemporaryID }) {
            byTable = [(first.tableName, ids.map(\.primaryKey))]
        } else {
            var grouped: [String: [Int64]] = [:]
            for id in ids where !id.isTemporaryID { grouped[id.entity.tableName, default: []].append(id.primaryKey) }
            byTable = grouped.map { ($0.key, $0.value) }
        }
        var result: [RowValues] = []
        result.reserveCapacity(ids.count)
        for (tableName, keys) in byTable {
            try rows(inTable: tableName, keys: keys[...]) { result.append($0) }
        }
        return result
    }

    /// Reads the rows of `keys` in one table, handing each to `body` in key order (SQLite's order for
    /// `Z_PK IN (…)`). Keys without a row are skipped.
    func rows(inTable tableName: String, keys: ArraySlice<Int64>, _ body: (consuming RowValues) throws -> Void) throws {
        if Self.sqlDebug {
            let start = ContinuousClock.now
            var count = 0
            try readRows(inTable: tableName, keys: keys) { count += 1; try body($0) }
            Self.logFetch(rows: count, since: start)
        } else {
            try readRows(inTable: tableName, keys: keys, body)
        }
    }

    private func readRows(inTable tableName: String, keys: ArraySlice<Int64>, _ body: (consuming RowValues) throws -> Void) throws {
        guard let table = schema.table(named: tableName) else { return }
        // The store's own reader connection, unless SQL is being logged (the pool's connections log it)
        // or a write is under way (a read inside it must see its changes).
        let keyed = Self.sqlDebug || activeWrites.load(ordering: .relaxed) > 0 ? nil : keyedReader
        for chunkStart in stride(from: keys.startIndex, to: keys.endIndex, by: 500) {
            let chunk = keys[chunkStart..<min(chunkStart + 500, keys.endIndex)]
            if let keyed {
                do {
                    readCount.add(1, ordering: .relaxed)
                    if try keyed.read(table: table, keys: chunk, body) != nil { continue }
                    readCount.subtract(1, ordering: .relaxed)
                } catch {
                    throw StoreError.from(error, path: displayPath)
                }
            }
            try read { db in
                let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let sql = "SELECT \(selectList(for: table)) FROM \(tableName) t0 WHERE t0.Z_PK IN (\(placeholders))"
                try db.fetchRowValues(sql: sql, arguments: chunk.map(\.databaseValue),
                                      columnCount: table.columns.count, expectedRows: chunk.count, body)
            }
        }
    }

    /// Reads the IDs a to-many relationship of one object holds.
    func relatedIDs(of id: ManagedObjectID, relationship: RelationshipDescription,
                    storage: StoreSchema.PropertyStorage) throws -> [ManagedObjectID] {
        let destination = relationship.destinationEntity!
        let numbers = destination.entityNumbersIncludingSubentities
        let entityFilter = schema.mapping(for: destination).sharesTable
            ? " AND d.Z_ENT IN (\(numbers.map(String.init).joined(separator: ",")))" : ""
        let sql: String
        switch storage {
        case .toManyByForeignKey(let table, let column, let orderColumn):
            sql = "SELECT d.Z_ENT, d.Z_PK FROM \(table) d WHERE d.\(column) = ?\(entityFilter) ORDER BY "
                + (orderColumn.map { "d.\($0), " } ?? "") + "d.Z_PK"
        case .toManyByJoinTable(let join):
            sql = "SELECT d.Z_ENT, d.Z_PK FROM \(join.name) j JOIN \(destination.tableName) d ON d.Z_PK = j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) = ?\(entityFilter) ORDER BY "
                + (join.orderColumn.map { "j.\($0), " } ?? "") + "d.Z_PK"
        default:
            return []
        }
        let model = self.model
        let store = identity
        return try read { db in
            var ids: [ManagedObjectID] = []
            try db.stepRows(sql: sql, arguments: [id.primaryKey.databaseValue]) { handle in
                let number = Int(sqlite3_column_int64(handle, 0))
                let key = sqlite3_column_int64(handle, 1)
                ids.append(ManagedObjectID(entity: model.entity(number: number) ?? destination, primaryKey: key,
                                           store: store))
            }
            return ids
        }
    }

    /// A number that changes when another connection (another process, or another coordinator on the same
    /// file) commits: SQLite's `data_version` as the writer connection sees it. Our own saves, made on that
    /// connection, leave it alone. In-memory stores have no other writers.
    func externalChangeToken() -> Int {
        guard type == .sqlite, !isReadOnly, let pool = writer as? DatabasePool else { return 0 }
        return (try? pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA data_version") ?? 0 }) ?? -1
    }

    /// Runs a read on a reader connection (a WAL snapshot for file stores), mapping SQLite errors.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        readCount.add(1, ordering: .relaxed)
        do {
            return try writer.unsafeReentrantRead(body)
        } catch {
            throw StoreError.from(error, path: displayPath)
        }
    }

    /// Runs a write transaction, mapping SQLite errors.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: displayPath) }
        activeWrites.add(1, ordering: .relaxed)
        defer { activeWrites.subtract(1, ordering: .relaxed) }
        do {
            return try writer.write(body)
        } catch {
            throw StoreError.from(error, path: displayPath)
        }
    }

    /// Reserves `count` new primary keys for entities stored in `root`'s table.
    func reservePrimaryKeys(root: EntityDescription, count: Int, in db: Database) throws -> Int64 {
        // Never behind the table's own keys, even if another program inserted rows without bumping Z_MAX.
        let newMax = try Int64.fetchOne(db, sql: """
            UPDATE Z_PRIMARYKEY SET Z_MAX = MAX(IFNULL(Z_MAX, 0), (SELECT IFNULL(MAX(Z_PK), 0) FROM \(root.tableName))) + ?
            WHERE Z_ENT = ? RETURNING Z_MAX
            """, arguments: [count, root.entityNumber])
        guard let newMax else {
            throw StoreError.corrupt(path: displayPath, reason: "Z_PRIMARYKEY has no row for entity \(root.name)")
        }
        return newMax - Int64(count) + 1
    }
}
