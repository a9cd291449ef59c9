import Foundation
import GRDB
import GRDBSQLite

/// A compiled fetch in store terms only (no context, no objects): runs on any thread, for example on a
/// background reader during an asynchronous fetch.
struct StoreQuery: @unchecked Sendable {
    // @unchecked Sendable: every member is immutable; the store and model are Sendable; DatabaseValue
    // arguments are values.
    let store: PersistentStore
    let model: ManagedObjectModel
    let entity: EntityDescription
    /// Full rows: the table's columns in table order.
    let rowsSQL: String
    /// IDs: the entity column and the primary key.
    let idsSQL: String
    /// Primary keys only (for an entity alone in its table).
    let primaryKeysSQL: String
    /// The number of rows the query selects (offset and limit applied).
    var countSQL: String {
        limitSQL.isEmpty ? "SELECT COUNT(*) \(selectionSQL)" : "SELECT COUNT(*) FROM (SELECT t0.Z_PK \(selectionSQL)\(limitSQL))"
    }
    /// ` LIMIT … OFFSET …`, or empty.
    private let limitSQL: String
    /// `FROM … WHERE …`: the rows the query selects, before order, offset and limit.
    let selectionSQL: String
    /// The compiled sort order (`t1.ZCLOSEDATE DESC, …`); nil without sort descriptors.
    let orderByClause: String?
    let arguments: [DatabaseValue]
    let columnCount: Int

    /// A fetch of `entity`'s rows matching `compiled` (made without the entity filter), its own rows only
    /// or its sub-entities' too, in `compiled`'s order, skipping `offset` rows and keeping at most `limit`
    /// (0: no limit). Every name in the SQL comes from the schema and the compiler; values are bound.
    init(store: PersistentStore, model: ManagedObjectModel, entity: EntityDescription,
         compiled: PredicateSQLCompiler.Compiled, includesSubentities: Bool, limit: Int, offset: Int) {
        self.store = store
        self.model = model
        self.entity = entity
        var conditions: [String] = []
        if model.schema.mapping(for: entity).sharesTable {
            let numbers = includesSubentities ? entity.entityNumbersIncludingSubentities : [entity.entityNumber]
            conditions.append(numbers.count == 1 ? "t0.Z_ENT = \(numbers[0])"
                              : "t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))")
        }
        if let whereClause = compiled.whereClause { conditions.append("(\(whereClause))") }
        let selection = "FROM \(compiled.fromClause)"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        var limitSQL = ""
        if limit > 0 { limitSQL += " LIMIT \(limit)" }
        if offset > 0 { limitSQL += (limit > 0 ? "" : " LIMIT -1") + " OFFSET \(offset)" }
        let tail = selection + (compiled.orderByClause.map { " ORDER BY \($0)" } ?? "") + limitSQL
        let table = model.schema.table(named: entity.tableName)
        let rowColumns = table.map { store.selectList(for: $0) } ?? "t0.Z_PK"
        rowsSQL = "SELECT \(rowColumns) \(tail)"
        idsSQL = "SELECT t0.Z_ENT, t0.Z_PK \(tail)"
        primaryKeysSQL = "SELECT t0.Z_PK \(tail)"
        self.limitSQL = limitSQL
        selectionSQL = selection
        orderByClause = compiled.orderByClause
        arguments = compiled.arguments
        columnCount = table?.columns.count ?? 1
    }

    /// How many rows the query selects.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    func count() throws -> Int {
        let sql = countSQL, arguments = self.arguments
        return try store.read { db in try db.fetchInteger(sql: sql, arguments: arguments) ?? 0 }
    }

    /// Full rows, in order. `progress` is called with the running row count every `progressInterval` rows.
    func readRows(cancellation: CancellationFlag? = nil, progressInterval: Int = 0,
                  progress: ((Int) -> Void)? = nil) throws -> [RowValues] {
        let start = ContinuousClock.now
        let rows: [RowValues] = try store.read { db in
            var rows: [RowValues] = []
            try db.fetchRowValues(sql: rowsSQL, arguments: arguments, columnCount: columnCount,
                                  cancellation: cancellation, external: externalColumns) { row in
                rows.append(row)
                if progressInterval > 0, rows.count % progressInterval == 0 { progress?(rows.count) }
            }
            return rows
        }
        progress?(rows.count)
        PersistentStore.logFetch(rows: rows.count, since: start)
        return rows
    }

    /// The columns of the entity's table kept in Core Data's external binary storage form, decoded as full
    /// rows are read.
    var externalColumns: ExternalBinaryStorage.TableColumns? {
        store.externalStorage?.columns(forTable: entity.tableName)
    }

    /// Full rows, in order, each handed to `body` as soon as its block is read, all in one read (one
    /// snapshot). Cancelling `cancellation` stops the statement.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; ``ObjectGraphError/cancelled`` when cancelled;
    ///   what `body` throws.
    func readRows(cancellation: CancellationFlag?, _ body: (consuming RowValues) throws -> Void) throws {
        try store.read { db in
            try db.fetchRowValues(sql: rowsSQL, arguments: arguments, columnCount: columnCount,
                                  cancellation: cancellation, external: externalColumns, body)
        }
    }

    /// Whether every row of the entity's table is of the entity (no entity column to read).
    private var isAloneInTable: Bool { !model.schema.mapping(for: entity).sharesTable }

    /// Primary keys only, in order (for an entity alone in its table).
    func readPrimaryKeys() throws -> [Int64] {
        let start = ContinuousClock.now
        let sql = primaryKeysSQL
        let keys: [Int64] = try store.read { db in
            var keys: [Int64] = []
            try db.stepRows(sql: sql, arguments: arguments) { handle in keys.append(sqlite3_column_int64(handle, 0)) }
            return keys
        }
        PersistentStore.logFetch(rows: keys.count, since: start)
        return keys
    }

    /// IDs only, in order.
    func readIDs(cancellation: CancellationFlag? = nil, progressInterval: Int = 0,
                 progress: ((Int) -> Void)? = nil) throws -> [ManagedObjectID] {
        let start = ContinuousClock.now
        let identity = store.identity
        let entity = self.entity
        let aloneInTable = isAloneInTable
        let ids: [ManagedObjectID] = try store.read { db in
            var ids: [ManagedObjectID] = []
            var nextReport = progressInterval > 0 ? progressInterval : Int.max
            if aloneInTable {
                // An entity alone in its table needs no entity column: every row is one of its objects. The
                // keys are collected first (8 bytes each), so the IDs (32 bytes each) are allocated once at
                // their final size instead of being copied at every doubling.
                var keys: [Int64] = []
                try db.stepRows(sql: primaryKeysSQL, arguments: arguments, cancellation: cancellation) { handle in
                    keys.append(sqlite3_column_int64(handle, 0))
                    if keys.count == nextReport {
                        progress?(keys.count)
                        nextReport += progressInterval
                    }
                }
                ids.reserveCapacity(keys.count)
                let storeIndex = identity.index
                // Every ID holds the entity: its references are added at once, and each ID takes one.
                let sharedEntity = Unmanaged.passUnretained(entity)
                sharedEntity.retain(count: keys.count)
                for key in keys {
                    ids.append(ManagedObjectID(entity: sharedEntity.takeRetainedValue(), primaryKey: key, storeIndex: storeIndex))
                }
                return ids
            }
            try db.stepRows(sql: idsSQL, arguments: arguments, cancellation: cancellation) { handle in
                let number = Int(sqlite3_column_int64(handle, 0))
                ids.append(ManagedObjectID(entity: model.entity(number: number) ?? entity,
                                           primaryKey: sqlite3_column_int64(handle, 1), store: identity))
                if ids.count == nextReport {
                    progress?(ids.count)
                    nextReport += progressInterval
                }
            }
            return ids
        }
        progress?(ids.count)
        PersistentStore.logFetch(rows: ids.count, since: start)
        return ids
    }
}
