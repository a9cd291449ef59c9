import Foundation
import GRDB
import GRDBSQLite

extension SQLiteStore {
    /// The SELECT list of every column of a table, aliased t0.
    func selectList(for table: StoreSchema.Table) -> String {
        table.columns.map { "t0." + $0.name }.joined(separator: ", ")
    }

    /// Reads rows by primary key, any entity of the model.
    package func rows(for ids: [ManagedObjectID]) throws -> [RowValues] {
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
    package func rows(inTable tableName: String, keys: ArraySlice<Int64>, _ body: (consuming RowValues) throws -> Void) throws {
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
        let external = externalStorage?.columns(forTable: tableName)
        for chunkStart in stride(from: keys.startIndex, to: keys.endIndex, by: 500) {
            let chunk = keys[chunkStart..<min(chunkStart + 500, keys.endIndex)]
            if let keyed {
                do {
                    readCount.add(1, ordering: .relaxed)
                    if try keyed.read(table: table, keys: chunk, external: external, body) != nil { continue }
                    readCount.subtract(1, ordering: .relaxed)
                } catch {
                    throw StoreError.from(error, path: displayPath)
                }
            }
            try read { db in
                let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let sql = "SELECT \(selectList(for: table)) FROM \(tableName) t0 WHERE t0.Z_PK IN (\(placeholders))"
                try db.fetchRowValues(sql: sql, arguments: chunk.map(\.storeValue),
                                      columnCount: table.columns.count, expectedRows: chunk.count,
                                      external: external, body)
            }
        }
    }

    /// Reads the IDs a to-many relationship of one object holds.
    package func relatedIDs(of id: ManagedObjectID, relationship: RelationshipDescription,
                    storage: StoreSchema.PropertyStorage) throws -> [ManagedObjectID] {
        guard let destination = relationship.destinationEntity,
              let sql = schema.relatedIDsSQL(relationship: relationship, storage: storage) else { return [] }
        let model = self.model
        let store = identity
        return try read { db in
            var ids: [ManagedObjectID] = []
            try db.stepRows(sql: sql, arguments: [id.primaryKey.storeValue]) { handle in
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
    package func externalChangeToken() -> Int {
        guard type == .sqlite, !isReadOnly else { return 0 }
        if let pool = writer as? DatabasePool {
            return (try? pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA data_version") ?? 0 }) ?? -1
        }
        // A rollback-journal store's one connection may be inside a read already (a fault filled while rows
        // are read): the reentrant form.
        return (try? writer.unsafeReentrantWrite { try Int.fetchOne($0, sql: "PRAGMA data_version") ?? 0 }) ?? -1
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

    /// Runs a write transaction, mapping SQLite errors. An XML store's file is written before the
    /// transaction commits (unless `changesObjects` is false: keys reserved, nothing else), so a file that
    /// cannot be written rolls the transaction back.
    func write<T>(changesObjects: Bool = true, _ body: (Database) throws -> T) throws -> T {
        guard !isReadOnly else { throw StoreError.readOnly(path: displayPath) }
        activeWrites.add(1, ordering: .relaxed)
        defer { activeWrites.subtract(1, ordering: .relaxed) }
        do {
            guard let xmlFile, changesObjects else { return try writer.write(body) }
            return try writer.write { db in
                let result = try body(db)
                try xmlFile.write(from: SQLiteSession(db: db), model: model)
                return result
            }
        } catch {
            throw StoreError.from(error, path: displayPath)
        }
    }

    /// Reserves a block of new primary keys for each root entity (its table) in one write transaction:
    /// `counts[i].count` keys for `counts[i].root`. Returns the first key of each block, in the same order.
    ///
    /// - Throws: ``StoreError/primaryKeysExhausted(path:entity:maximum:)`` when an entity's keys would pass
    ///   2^63 - 1 (nothing is reserved then: the transaction rolls back); ``StoreError/corrupt(path:reason:)``
    ///   when `Z_PRIMARYKEY` has no row for a root; ``StoreError`` when the store cannot be written.
    package func reservePrimaryKeys(_ counts: [(root: EntityDescription, count: Int)]) throws -> [Int64] {
        try write(changesObjects: false) { db in
            try counts.map { try reservePrimaryKeys(root: $0.root, count: $0.count, in: db) }
        }
    }

    /// Reserves `count` new primary keys for entities stored in `root`'s table; returns the first.
    ///
    /// - Throws: ``StoreError/primaryKeysExhausted(path:entity:maximum:)`` when the keys would pass
    ///   2^63 - 1 or `Z_MAX` is not an integer (checked before anything is written, so the transaction
    ///   changes nothing); ``StoreError/corrupt(path:reason:)`` when `Z_PRIMARYKEY` has no row for `root`.
    func reservePrimaryKeys(root: EntityDescription, count: Int, in db: Database) throws -> Int64 {
        // Never behind the table's own keys, even if another program inserted rows without bumping Z_MAX.
        let row = try Row.fetchOne(db, sql: """
            SELECT Z_MAX, (SELECT MAX(Z_PK) FROM \(SQLIdentifier.quoted(root.tableName))) FROM Z_PRIMARYKEY WHERE Z_ENT = ?
            """, arguments: [root.entityNumber])
        guard let row else {
            throw StoreError.corrupt(path: displayPath, reason: "Z_PRIMARYKEY has no row for entity \(root.name)")
        }
        let stored: StoreValue = row[0], highest: StoreValue = row[1]
        // SQLite turns an integer sum past 2^63 - 1 into a real, so the arithmetic is done here, not in SQL.
        func integer(_ value: StoreValue) -> Int64? {
            switch value.storage {
            case .null: return 0
            case .int64(let number): return number
            case .double(let number): return Int64(exactly: number)
            default: return nil
            }
        }
        guard let storedMax = integer(stored), let tableMax = integer(highest) else {
            throw StoreError.primaryKeysExhausted(path: displayPath, entity: root.name,
                                                  maximum: "\(stored), not an integer")
        }
        let current = max(storedMax, tableMax, 0)
        let (newMax, overflow) = current.addingReportingOverflow(Int64(count))
        guard !overflow else {
            throw StoreError.primaryKeysExhausted(path: displayPath, entity: root.name, maximum: String(current))
        }
        try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", arguments: [newMax, root.entityNumber])
        return current + 1
    }
}
