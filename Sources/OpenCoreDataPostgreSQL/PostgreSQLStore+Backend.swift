import Foundation
import OpenCoreData
import Synchronization

/// The PostgreSQL store behind the library's store boundary (``StoreBackend``): what contexts, fetch
/// requests, results controllers and the coordinator use, so they never ask which store they have.
///
/// Statements are the ones the layers above compile in the PostgreSQL dialect (``StoreQuery``,
/// ``SortKeyQuery``, dictionary queries); rows come back as ``RowValues`` or ``SteppedRow``s over decoded
/// values. A read that may be cancelled (an asynchronous fetch's) streams its rows and is cancelled on the
/// server (``readCancellable(_:_:cancellation:_:)``). Batch requests run in `PostgreSQLStore+Batch.swift`, history
/// requests and readers in `PostgreSQLStore+History.swift`. What PostgreSQL cannot do is refused with
/// ``StoreError/unsupported(request:server:)`` before anything runs.
extension PostgreSQLStore: StoreBackend {
    // MARK: Identity

    /// The server's URL without its password.
    package var displayPath: String { configuration.redactedURL }
    package var schema: StoreSchema { model.schema }
    /// Nil: external binary storage is a file store's.
    package var externalStorage: ExternalBinaryStorage? { nil }
    package var dialect: any SQLDialect { PostgreSQLDialect() }

    /// A ``BoundWrite`` is an SQLite statement: this store takes filled rows.
    package var bindsValuesDirectly: Bool { false }

    /// The store's pool is closed once no coordinator holds the store.
    package func didLeaveCoordinator() { close() }

    /// `Z_METADATA`'s property list as a dictionary, as on SQLite.
    ///
    /// - Throws: ``StoreError/corrupt(path:reason:)`` for metadata that is not a property list dictionary;
    ///   ``StoreError`` when the server cannot be read.
    package func metadataDictionary() throws -> [String: Any] {
        try pool.withSession { try Self.metadataDictionary($0, server: displayPath) }
    }

    /// Replaces the app's keys of the metadata in one transaction, as on SQLite.
    ///
    /// - Throws: ``StoreError/readOnly(path:)`` for a read-only store; what
    ///   ``StoreMetadata/propertyList(replacingAppKeysOf:with:)`` throws; ``StoreError``.
    package func setMetadataDictionary(_ metadata: [String: Any]) throws {
        if options.readOnly { throw StoreError.readOnly(path: displayPath) }
        try pool.withSession { session in
            try session.transaction {
                let data = try StoreMetadata.propertyList(
                    replacingAppKeysOf: Self.metadataDictionary(session, server: displayPath, forUpdate: true), with: metadata)
                _ = try session.execute("UPDATE Z_METADATA SET Z_PLIST = ?", [data.storeValue])
            }
        }
    }

    private static func metadataDictionary(_ session: PostgreSQLSession, server: String,
                                           forUpdate: Bool = false) throws -> [String: Any] {
        let row = try session.rows("SELECT Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1" + (forUpdate ? " FOR UPDATE" : "")).first
        guard let plist = row.flatMap({ Data.fromStoreValue($0[0]) }),
              let dictionary = try? PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any] else {
            throw StoreError.corrupt(path: server, reason: "metadata is not a property list dictionary")
        }
        return dictionary
    }

    // MARK: Rows by key

    package func rows(for ids: [ManagedObjectID]) throws -> [RowValues] {
        var keysByTable: [(table: String, keys: [Int64])] = []
        for id in ids where !id.isTemporaryID {
            let table = id.entity.tableName
            if let index = keysByTable.firstIndex(where: { $0.table == table }) {
                keysByTable[index].keys.append(id.primaryKey)
            } else {
                keysByTable.append((table, [id.primaryKey]))
            }
        }
        return try keysByTable.flatMap { try rows(ofTable: $0.table, primaryKeys: $0.keys) }
    }

    package func rows(inTable tableName: String, keys: ArraySlice<Int64>,
                      _ body: (consuming RowValues) throws -> Void) throws {
        for row in try rows(ofTable: tableName, primaryKeys: Array(keys)) { try body(row) }
    }

    package func relatedIDs(of id: ManagedObjectID, relationship: RelationshipDescription,
                            storage: StoreSchema.PropertyStorage) throws -> [ManagedObjectID] {
        guard let destination = relationship.destinationEntity,
              let sql = model.schema.relatedIDsSQL(relationship: relationship, storage: storage) else { return [] }
        let rows = try pool.withSession { try $0.rows(sql, [id.primaryKey.storeValue]) }
        return rows.compactMap { row in
            guard let number = Int.fromStoreValue(row[0]), let key = Int64.fromStoreValue(row[1]) else { return nil }
            return ManagedObjectID(entity: model.entity(number: number) ?? destination, primaryKey: key, store: identity)
        }
    }

    // MARK: Queries

    package func count(of query: StoreQuery) throws -> Int {
        let rows = try pool.withSession { try $0.rows(query.countSQL, query.arguments) }
        return rows.first.flatMap { $0.first }.flatMap(Int.fromStoreValue) ?? 0
    }

    package func readRows(of query: StoreQuery, cancellation: CancellationFlag?,
                          _ body: (consuming RowValues) throws -> Void) throws {
        if let cancellation {
            return try readCancellable(query.rowsSQL, query.arguments, cancellation: cancellation) { try body(RowValues(values: $0)) }
        }
        for row in try pool.withSession({ try $0.rows(query.rowsSQL, query.arguments) }) {
            try body(RowValues(values: row))
        }
    }

    package func readPrimaryKeys(of query: StoreQuery, cancellation: CancellationFlag?,
                                 _ body: (Int64) throws -> Void) throws {
        if let cancellation {
            return try readCancellable(query.primaryKeysSQL, query.arguments, cancellation: cancellation) {
                try body(Int64.fromStoreValue($0[0]) ?? 0)
            }
        }
        for row in try pool.withSession({ try $0.rows(query.primaryKeysSQL, query.arguments) }) {
            try body(Int64.fromStoreValue(row[0]) ?? 0)
        }
    }

    package func readEntityKeys(of query: StoreQuery, cancellation: CancellationFlag?,
                                _ body: (_ entityNumber: Int, _ primaryKey: Int64) throws -> Void) throws {
        if let cancellation {
            return try readCancellable(query.idsSQL, query.arguments, cancellation: cancellation) {
                try body(Int.fromStoreValue($0[0]) ?? 0, Int64.fromStoreValue($0[1]) ?? 0)
            }
        }
        for row in try pool.withSession({ try $0.rows(query.idsSQL, query.arguments) }) {
            try body(Int.fromStoreValue(row[0]) ?? 0, Int64.fromStoreValue(row[1]) ?? 0)
        }
    }

    package func readRows(of query: PredicateSQLCompiler.CompiledDictionaryQuery, _ body: (SteppedRow) throws -> Void) throws {
        for row in try pool.withSession({ try $0.rows(query.sql, query.arguments) }) {
            try row.withUnsafeBufferPointer { try body(SteppedRow(values: $0)) }
        }
    }

    package func readInOneTransaction<T>(_ body: (StoreReadTransaction) throws -> T) throws -> T {
        try pool.withSession { session in
            // One snapshot for every statement of the transaction (READ COMMITTED takes one per statement).
            try session.transaction(beginning: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY") {
                try body(StoreReadTransaction(PostgreSQLSnapshotReads(session: session, storeIdentifier: identifier)))
            }
        }
    }

    package func rowIDs(of entity: EntityDescription, holding values: [StoreValue],
                        forKeys keys: [String]) throws -> [ManagedObjectID] {
        guard let sql = StoreSchema.constraintLookupSQL(entity: entity, keys: keys) else { return [] }
        return try pool.withSession { try $0.rows(sql, values) }.compactMap { row in
            guard let key = Int64.fromStoreValue(row[0]), let number = Int.fromStoreValue(row[1]) else { return nil }
            return ManagedObjectID(entity: model.entity(number: number) ?? entity, primaryKey: key, store: identity)
        }
    }

    // MARK: Writing

    package func reservePrimaryKeys(_ counts: [(root: EntityDescription, count: Int)]) throws -> [Int64] {
        try refuseIfReadOnly()
        return try counts.map { try reservePrimaryKeys(root: $0.root, count: $0.count) }
    }

    @discardableResult
    package func apply(_ changes: StoreChangeSet, history: [HistoryEntry.Change],
                       resolvingConflicts resolve: (([StoreConflict]) throws -> StoreChangeSet)?) throws -> StoreChangeSet {
        try refuseIfReadOnly()
        let authorship = HistoryAuthorship.current
        let entry = recordsHistory
            ? HistoryEntry(author: authorship.author, contextName: authorship.contextName, changes: history) : nil
        return try apply(changes, history: entry, resolvingConflicts: resolve)
    }

    func refuseIfReadOnly() throws {
        if options.readOnly { throw StoreError.readOnly(path: displayPath) }
    }

    // MARK: Batch requests (PostgreSQLStore+Batch.swift)

    package func batchUpdate(entity: EntityDescription, assignments: [(column: String, sql: String, arguments: [StoreValue])],
                             selection: BatchSelection, returningIDs: Bool,
                             followUps: [(sql: String, arguments: [StoreValue])]) throws -> (count: Int, ids: [ManagedObjectID]) {
        try runBatchUpdate(entity: entity, assignments: assignments, selection: selection, returningIDs: returningIDs,
                           followUps: followUps)
    }

    /// The deleted IDs are read whenever the history, the nullified rows or the caller need them.
    package func batchDelete(initial: [ManagedObjectID]?, entity: EntityDescription, selection: BatchSelection, needsIDs: Bool,
                             followUps: [(sql: String, arguments: [StoreValue])])
        throws -> (count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID]) {
        try runBatchDelete(initial: initial, entity: entity, selection: selection, needsIDs: needsIDs, followUps: followUps)
    }

    package func batchInsert(entity: EntityDescription, count: Int, returningIDs: Bool,
                             fillRow: (Int, inout RowValues) throws -> Void) throws -> (count: Int, ids: [ManagedObjectID]) {
        try runBatchInsert(entity: entity, count: count, returningIDs: returningIDs, fillRow: fillRow)
    }

    /// Refused: a ``BoundWrite`` is an SQLite statement (contexts hand this store filled rows instead).
    package func batchInsert(entity: EntityDescription, count: Int, returningIDs: Bool,
                             bindRow: (_ index: Int, _ key: Int64, _ insert: BoundWrite) throws -> Void)
        throws -> (count: Int, ids: [ManagedObjectID]) {
        throw unsupported("a batch insert of '\(entity.name)' bound to an SQLite statement")
    }

    private func unsupported(_ request: String) -> StoreError {
        .unsupported(request: request, server: displayPath)
    }

    // MARK: History (PostgreSQLStore+History.swift)

    // MARK: Commits made elsewhere

    /// The number of commits made elsewhere the store's change watch has heard of; without a watch a new
    /// number every time, so the coordinator's row cache never hands out a row another process may have
    /// changed since.
    package func externalChangeToken() -> Int {
        if watchCount.load(ordering: .relaxed) > 0 { return heardCommits.load(ordering: .relaxed) }
        return -1 - unwatchedReads.add(1, ordering: .relaxed).newValue
    }

    /// Whether commits made elsewhere can be noticed: with history, through ``PostgreSQLChangeListener``.
    package var canNoticeCommitsElsewhere: Bool { recordsHistory }

    package func watchCommitsElsewhere(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreChangeWatch)? {
        guard canNoticeCommitsElsewhere else { return nil }
        let start = try currentHistoryToken()
        let listener = try PostgreSQLChangeListener(store: self, after: start) { [weak self] _ in
            self?.heardCommits.add(1, ordering: .relaxed)
            onChange()
        }
        watchCount.add(1, ordering: .relaxed)
        return PostgreSQLChangeWatch(listener: listener) { [weak self] in self?.watchCount.subtract(1, ordering: .relaxed) }
    }
}

/// A running ``PostgreSQLChangeListener`` as the coordinator's watch for commits made elsewhere.
final class PostgreSQLChangeWatch: StoreChangeWatch, Sendable {
    private let listener: PostgreSQLChangeListener
    private let stopped = Mutex(false)
    private let onStop: @Sendable () -> Void

    init(listener: PostgreSQLChangeListener, onStop: @escaping @Sendable () -> Void) {
        self.listener = listener
        self.onStop = onStop
    }

    func stop() {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        listener.stop()
        onStop()
    }
}

/// A results controller's reads on PostgreSQL, in one `REPEATABLE READ` transaction on one session.
private struct PostgreSQLSnapshotReads: StoreSnapshotReads {
    let session: PostgreSQLSession
    let storeIdentifier: String

    func dataToken(tables: [String]) throws -> String {
        try StoreBookkeeping.dataToken(storeIdentifier: storeIdentifier, tables: tables, in: session)
    }

    /// The rows arrive whole, so a cancel is noticed between rows, after the statement has run.
    func stepRows(of query: SortKeyQuery, cancellation: CancellationFlag?, _ body: (SteppedRow) throws -> Void) throws {
        try session.forEachRow(query.sql, query.arguments) { values in
            if cancellation?.isCancelled == true { throw ObjectGraphError.cancelled }
            try body(SteppedRow(values: values))
        }
    }
}
