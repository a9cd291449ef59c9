import Foundation

/// A compiled fetch in store terms only (no context, no objects): runs on any thread, for example on a
/// background reader during an asynchronous fetch. Its SQL is in the store's dialect; the store runs it
/// (``StoreBackend/readRows(of:cancellation:_:)`` and its siblings), so one dynamic call is made per fetch
/// and rows reach the caller through a closure.
package struct StoreQuery: @unchecked Sendable {
    // @unchecked Sendable: every member is immutable; the store and model are Sendable; StoreValue
    // arguments are values.
    package let store: any StoreBackend
    package let model: ManagedObjectModel
    package let entity: EntityDescription
    /// Full rows: the table's columns in table order.
    package let rowsSQL: String
    /// IDs: the entity column and the primary key.
    package let idsSQL: String
    /// Primary keys only (for an entity alone in its table).
    package let primaryKeysSQL: String
    /// The number of rows the query selects (offset and limit applied).
    package var countSQL: String {
        limitSQL.isEmpty ? "SELECT COUNT(*) \(selectionSQL)"
            : "SELECT COUNT(*) FROM (SELECT t0.Z_PK \(selectionSQL)\(limitSQL)) AS selected"
    }
    /// ` LIMIT … OFFSET …`, or empty.
    private let limitSQL: String
    /// `FROM … WHERE …`: the rows the query selects, before order, offset and limit.
    package let selectionSQL: String
    /// The compiled sort order (`t1.ZCLOSEDATE DESC, …`); nil without sort descriptors.
    package let orderByClause: String?
    package let arguments: [StoreValue]
    package let columnCount: Int
    /// What the store's SQL leaves to the app (PostgreSQL only): then the SQL reads the narrowed rows without
    /// offset or limit, and every read below goes through it.
    let residual: ResidualQuery?

    /// A fetch of `entity`'s rows matching `compiled` (made without the entity filter, in the store's
    /// dialect), its own rows only or its sub-entities' too, in `compiled`'s order, skipping `offset` rows
    /// and keeping at most `limit` (0: no limit). Every name in the SQL comes from the schema and the
    /// compiler; values are bound.
    init(store: any StoreBackend, model: ManagedObjectModel, entity: EntityDescription,
         compiled: PredicateSQLCompiler.Compiled, residual: ResidualQuery? = nil, includesSubentities: Bool,
         limit: Int, offset: Int) {
        self.store = store
        // With a residual, offset and limit apply to the rows left after it, in memory.
        self.residual = residual.map { planned in
            var paged = planned
            paged.offset = offset
            paged.limit = limit
            return paged
        }
        let (sqlLimit, sqlOffset) = residual == nil ? (limit, offset) : (0, 0)
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
        if sqlLimit > 0 { limitSQL += " LIMIT \(sqlLimit)" }
        if sqlOffset > 0 { limitSQL += store.dialect.limitBeforeOffset(limit: sqlLimit) + " OFFSET \(sqlOffset)" }
        let tail = selection + (compiled.orderByClause.map { " ORDER BY \($0)" } ?? "") + limitSQL
        let table = model.schema.table(named: entity.tableName)
        let rowColumns = table.map { $0.columns.map { "t0." + $0.name }.joined(separator: ", ") } ?? "t0.Z_PK"
        rowsSQL = "SELECT \(rowColumns) \(tail)"
        idsSQL = "SELECT t0.Z_ENT, t0.Z_PK \(tail)"
        primaryKeysSQL = "SELECT t0.Z_PK \(tail)"
        self.limitSQL = limitSQL
        selectionSQL = selection
        orderByClause = compiled.orderByClause
        arguments = compiled.arguments
        columnCount = table?.columns.count ?? 1
    }

    /// A fetch of `entity`'s rows matching `predicate` in the order of `sortDescriptors`, compiled for `store`'s
    /// dialect; what that dialect refuses is left to the app (``ResidualQuery``).
    ///
    /// - Throws: ``QueryLanguageError`` for a predicate or sort key the model cannot answer; on SQLite,
    ///   ``QueryDialectRefusal`` for a comparison with external binary storage.
    package static func fetch(store: any StoreBackend, model: ManagedObjectModel, entity: EntityDescription,
                              predicate: QueryPredicate?, sortDescriptors: [QuerySortDescriptor],
                              includesSubentities: Bool, limit: Int, offset: Int) throws -> StoreQuery {
        let (compiled, residual) = try ResidualQuery.compile(model: model, entity: entity, predicate: predicate,
                                                             sortDescriptors: sortDescriptors, dialect: store.dialect)
        return StoreQuery(store: store, model: model, entity: entity, compiled: compiled, residual: residual,
                          includesSubentities: includesSubentities, limit: limit, offset: offset)
    }

    /// How many rows the query selects.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; what evaluating a residual predicate throws.
    package func count() throws -> Int {
        if let residual { return try residual.rows(of: self, cancellation: nil).count }
        return try store.count(of: self)
    }

    /// Full rows, in order. `progress` is called with the running row count every `progressInterval` rows.
    ///
    /// - Throws: as ``readRows(cancellation:_:)``.
    package func readRows(cancellation: CancellationFlag? = nil, progressInterval: Int = 0,
                  progress: ((Int) -> Void)? = nil) throws -> [RowValues] {
        let start = ContinuousClock.now
        var rows: [RowValues] = []
        if let residual {
            rows = try residual.rows(of: self, cancellation: cancellation)
        } else {
            try store.readRows(of: self, cancellation: cancellation) { row in
                rows.append(row)
                if progressInterval > 0, rows.count % progressInterval == 0 { progress?(rows.count) }
            }
        }
        progress?(rows.count)
        SQLiteStore.logFetch(rows: rows.count, since: start)
        return rows
    }

    /// The columns of the entity's table kept in Core Data's external binary storage form, readied as full
    /// rows are read (``ExternalBinaryStorage/TableColumns/deferRow(_:start:)``).
    var externalColumns: ExternalBinaryStorage.TableColumns? {
        store.externalStorage?.columns(forTable: entity.tableName)
    }

    /// Full rows, in order, each handed to `body` as soon as its block is read, all in one read (one
    /// snapshot). Cancelling `cancellation` stops the statement.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; ``ObjectGraphError/cancelled`` when cancelled;
    ///   what `body` throws; a store that cannot cancel on its server refuses a `cancellation` with a typed error.
    func readRows(cancellation: CancellationFlag?, _ body: (consuming RowValues) throws -> Void) throws {
        if let residual {
            for row in try residual.rows(of: self, cancellation: cancellation) { try body(row) }
            return
        }
        try store.readRows(of: self, cancellation: cancellation, body)
    }

    /// Whether every row of the entity's table is of the entity (no entity column to read).
    private var isAloneInTable: Bool { !model.schema.mapping(for: entity).sharesTable }

    /// Primary keys only, in order (for an entity alone in its table).
    ///
    /// - Throws: as ``readRows(cancellation:_:)``.
    func readPrimaryKeys() throws -> [Int64] {
        let start = ContinuousClock.now
        var keys: [Int64] = []
        if let residual {
            keys = try residual.rows(of: self, cancellation: nil).map { Int64.fromStoreValue($0[0]) ?? 0 }
            SQLiteStore.logFetch(rows: keys.count, since: start)
            return keys
        }
        try store.readPrimaryKeys(of: self, cancellation: nil) { keys.append($0) }
        SQLiteStore.logFetch(rows: keys.count, since: start)
        return keys
    }

    /// IDs only, in order.
    ///
    /// - Throws: as ``readRows(cancellation:_:)``.
    func readIDs(cancellation: CancellationFlag? = nil, progressInterval: Int = 0,
                 progress: ((Int) -> Void)? = nil) throws -> [ManagedObjectID] {
        let start = ContinuousClock.now
        let identity = store.identity
        let entity = self.entity
        let model = self.model
        var ids: [ManagedObjectID] = []
        var nextReport = progressInterval > 0 ? progressInterval : Int.max
        if let residual {
            for row in try residual.rows(of: self, cancellation: cancellation) {
                let number = row.count > 1 ? Int.fromStoreValue(row[1]) : nil
                ids.append(ManagedObjectID(entity: number.flatMap { model.entity(number: $0) } ?? entity,
                                           primaryKey: Int64.fromStoreValue(row[0]) ?? 0, store: identity))
            }
        } else if isAloneInTable {
            // An entity alone in its table needs no entity column: every row is one of its objects. The
            // keys are collected first (8 bytes each), so the IDs (32 bytes each) are allocated once at
            // their final size instead of being copied at every doubling.
            var keys: [Int64] = []
            try store.readPrimaryKeys(of: self, cancellation: cancellation) { key in
                keys.append(key)
                if keys.count == nextReport {
                    progress?(keys.count)
                    nextReport += progressInterval
                }
            }
            ids.reserveCapacity(keys.count)
            let storeIndex = identity.index
            // Every ID holds the entity: its references are added at once, and each ID takes one.
            // Unsafe: exactly `keys.count` references are added and each ID takes one; `entity` is held by
            // this call throughout. Saves an atomic retain per ID (`async-fetch-ids`, `fetch-batched-first-100`).
            let sharedEntity = Unmanaged.passUnretained(entity)
            sharedEntity.retain(count: keys.count)
            for key in keys {
                ids.append(ManagedObjectID(entity: sharedEntity.takeRetainedValue(), primaryKey: key, storeIndex: storeIndex))
            }
        } else {
            try store.readEntityKeys(of: self, cancellation: cancellation) { number, key in
                ids.append(ManagedObjectID(entity: model.entity(number: number) ?? entity, primaryKey: key, store: identity))
                if ids.count == nextReport {
                    progress?(ids.count)
                    nextReport += progressInterval
                }
            }
        }
        progress?(ids.count)
        SQLiteStore.logFetch(rows: ids.count, since: start)
        return ids
    }
}
