import Foundation

/// What the layers above `Store/` (contexts, requests, results controllers, the coordinator) use of a
/// store, in the library's own terms: identity and options, rows read by key, rows, keys and counts
/// fetched for a compiled query, keys reserved, change sets applied, batch requests, persistent history
/// and noticing commits made elsewhere. No SQL text, GRDB connection or statement crosses it; SQL is
/// written below it (or by the query compiler, whose output only the store runs).
///
/// ``SQLiteStore`` (SQLite) and the PostgreSQL store (module `OpenCoreDataPostgreSQL`) conform
/// (docs/ARCHITECTURE.md, "The store boundary"); `package` so that module can. Everything above `Store/`
/// holds `any StoreBackend`: a call through it is made once per fetch, per batch of rows, per fault fired
/// or per save, never per row or per column (rows are handed to closures; a ``SteppedRow`` is a concrete
/// struct).
///
/// What still crosses the line today, below this protocol's surface: values as GRDB's `StoreValue`
/// (rows, constraint values, batch arguments), a batch update's `column = SQL` assignments and follow-up statements (written by
/// `BatchDerivations` and `BatchValueCompiler`), and a batch insert's ``BoundWrite``.
package protocol StoreBackend: AnyObject, Sendable {
    // MARK: Identity

    /// The file, for a file store (nil for a PostgreSQL store, whose server ``displayPath`` names).
    var url: URL? { get }
    /// The store's UUID (`NSStoreUUID`).
    var identifier: String { get }
    /// The store as object IDs name it.
    var identity: StoreIdentity { get }
    /// The options it was opened with.
    var options: StoreOptions { get }
    /// Whether it was opened read-only.
    var isReadOnly: Bool { get }
    /// The file's path, `:memory:`, or the server's URL without its password, for messages.
    var displayPath: String { get }
    /// The tables and columns of the model's layout.
    var schema: StoreSchema { get }
    /// Where values kept in Core Data's external binary storage form live (a file store), or nil.
    var externalStorage: ExternalBinaryStorage? { get }

    /// How the query compiler spells SQL for this store.
    var dialect: any SQLDialect { get }
    /// The store's metadata as a dictionary (Core Data's `metadata(for:)`).
    /// - Throws: ``StoreError`` or the backend's error when the metadata row cannot be read.
    func metadataDictionary() throws -> [String: Any]
    /// Writes `metadata` as the store's metadata at once: the app's keys as given, the library's as they are
    /// (``StoreMetadata/propertyList(replacingAppKeysOf:with:)``).
    /// - Throws: what that throws; the backend's error for a read-only store or when the write is refused.
    func setMetadataDictionary(_ metadata: [String: Any]) throws
    /// Called once the coordinator has let go of the store: a store that holds connections of its own
    /// closes them.
    func didLeaveCoordinator()
    /// Whether a batch insert may bind a ``BoundWrite``'s values straight to the store's statement
    /// (``batchInsert(entity:count:returningIDs:bindRow:)``); otherwise contexts hand it filled rows.
    var bindsValuesDirectly: Bool { get }

    // MARK: Rows by key

    /// Rows by primary key, any entity of the model; keys without a row are skipped.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func rows(for ids: [ManagedObjectID]) throws -> [RowValues]
    /// The rows of `keys` in one table, each handed to `body` in the store's order.
    /// - Throws: ``StoreError`` when the store cannot be read; what `body` throws.
    func rows(inTable tableName: String, keys: ArraySlice<Int64>, _ body: (consuming RowValues) throws -> Void) throws
    /// The IDs a to-many relationship of one saved object holds.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func relatedIDs(of id: ManagedObjectID, relationship: RelationshipDescription,
                    storage: StoreSchema.PropertyStorage) throws -> [ManagedObjectID]

    // MARK: Queries

    /// How many rows `query` selects.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func count(of query: StoreQuery) throws -> Int
    /// Full rows of `query`, in order, each handed to `body` as it is read, all in one read (one snapshot).
    /// Cancelling `cancellation` stops the statement.
    /// - Throws: ``StoreError`` when the store cannot be read; ``ObjectGraphError/cancelled`` when cancelled;
    ///   what `body` throws; a store that cannot cancel on the server refuses a `cancellation` with a typed error.
    func readRows(of query: StoreQuery, cancellation: CancellationFlag?, _ body: (consuming RowValues) throws -> Void) throws
    /// The primary keys `query` selects, in order, each handed to `body` (for an entity alone in its table).
    /// - Throws: as ``readRows(of:cancellation:_:)``.
    func readPrimaryKeys(of query: StoreQuery, cancellation: CancellationFlag?, _ body: (Int64) throws -> Void) throws
    /// The entity numbers and primary keys `query` selects, in order, each handed to `body`.
    /// - Throws: as ``readRows(of:cancellation:_:)``.
    func readEntityKeys(of query: StoreQuery, cancellation: CancellationFlag?,
                        _ body: (_ entityNumber: Int, _ primaryKey: Int64) throws -> Void) throws
    /// Runs a dictionary-result query, handing each result row to `body` in order.
    /// - Throws: ``StoreError`` when the store cannot be read; what `body` throws.
    func readRows(of query: PredicateSQLCompiler.CompiledDictionaryQuery, _ body: (SteppedRow) throws -> Void) throws
    /// Runs `body` in one read transaction (one snapshot): a results controller's data token and keys.
    /// - Throws: ``StoreError`` when the store cannot be read; what `body` throws.
    func readInOneTransaction<T>(_ body: (StoreReadTransaction) throws -> T) throws -> T
    /// Runs `body` so that every call it makes to this store on the calling thread sees one snapshot and, with
    /// `writing`, commits as one transaction: a selection made in the app (``ResidualQuery``) and the statement
    /// acting on the keys it selected. Calls from other threads are not part of it.
    ///
    /// On PostgreSQL: one session in `REPEATABLE READ` (`READ ONLY` unless `writing`). A write meeting a row
    /// another session changed after the snapshot was taken (SQLSTATE 40001) rolls back, and `body` runs again
    /// on a new snapshot, a bounded number of times, so `body` must do nothing it cannot repeat but store calls.
    /// Nested calls join the one under way. SQLite runs `body` as it is (it never selects in the app).
    /// - Throws: what `body` throws; ``StoreError`` when the transaction cannot begin or commit; on PostgreSQL
    ///   `StoreError.serializationFailure` naming `request` (such as "a batch delete of 'Item'")
    ///   when every attempt met rows other sessions changed.
    func inOneSnapshot<T>(writing: Bool, request: String, _ body: () throws -> T) throws -> T
    /// The stored rows of `entity` and its sub-entities whose uniqueness-constraint `keys` hold `values`.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func rowIDs(of entity: EntityDescription, holding values: [StoreValue], forKeys keys: [String]) throws -> [ManagedObjectID]

    // MARK: Writing

    /// Reserves a block of primary keys per root entity in one transaction; the first key of each.
    /// - Throws: ``StoreError/primaryKeysExhausted(path:entity:maximum:)``, ``StoreError``.
    func reservePrimaryKeys(_ counts: [(root: EntityDescription, count: Int)]) throws -> [Int64]
    /// Writes a save's change set (with its history, conflicts resolved by `resolve`) in one transaction.
    /// - Throws: ``StoreError``; ``ObjectGraphError`` for conflicts left unresolved.
    @discardableResult
    func apply(_ changes: StoreChangeSet, history: [HistoryEntry.Change],
               resolvingConflicts resolve: (([StoreConflict]) throws -> StoreChangeSet)?) throws -> StoreChangeSet

    // MARK: Batch requests

    /// A batch update of the rows `selection` names, with follow-up statements in the same transaction.
    /// - Throws: ``StoreError`` when the store cannot be written or SQLite refuses.
    func batchUpdate(entity: EntityDescription, assignments: [(column: String, sql: String, arguments: [StoreValue])],
                     selection: BatchSelection, returningIDs: Bool,
                     followUps: [(sql: String, arguments: [StoreValue])]) throws -> (count: Int, ids: [ManagedObjectID])
    /// A batch delete of `initial` or of the rows `selection` names, with delete rules applied.
    /// - Throws: ``StoreError``; ``ObjectGraphError`` when a deny rule refuses.
    func batchDelete(initial: [ManagedObjectID]?, entity: EntityDescription, selection: BatchSelection, needsIDs: Bool,
                     followUps: [(sql: String, arguments: [StoreValue])])
        throws -> (count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID])
    /// A batch insert of `count` rows filled one at a time into a reused row.
    /// - Throws: ``StoreError``; what `fillRow` throws (nothing is inserted then).
    func batchInsert(entity: EntityDescription, count: Int, returningIDs: Bool,
                     fillRow: (Int, inout RowValues) throws -> Void) throws -> (count: Int, ids: [ManagedObjectID])
    /// A batch insert of `count` rows whose values `bindRow` binds straight to the statement.
    /// - Throws: ``StoreError``; what `bindRow` throws (nothing is inserted then).
    func batchInsert(entity: EntityDescription, count: Int, returningIDs: Bool,
                     bindRow: (_ index: Int, _ key: Int64, _ insert: BoundWrite) throws -> Void)
        throws -> (count: Int, ids: [ManagedObjectID])

    // MARK: History

    /// Whether this store writes persistent history with its commits.
    var recordsHistory: Bool { get }
    /// Runs a fetch or a delete of history.
    /// - Throws: ``StoreError`` when the store cannot be read or written.
    func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult
    /// The token of the newest transaction in the history (transaction 0 when there is none).
    /// - Throws: ``StoreError`` when the store cannot be read.
    func currentHistoryToken() throws -> PersistentHistoryToken
    /// The transactions this store object recorded up to `number`, forgotten as they are handed out.
    func takeOwnTransactions(through number: Int64) -> Set<Int64>
    /// Registers the history reader `name`, or moves its mark to `seen`.
    /// - Throws: ``StoreError`` when the store cannot be written.
    func registerHistoryReader(_ name: String, seen: Int64) throws
    /// Removes the history reader `name`; whether it was registered.
    /// - Throws: ``StoreError`` when the store cannot be written.
    func unregisterHistoryReader(_ name: String) throws -> Bool
    /// Every registered history reader, by name.
    /// - Throws: ``StoreError`` when the store cannot be read.
    func historyReaders() throws -> [(name: String, seen: Int64, timestamp: Double)]

    // MARK: Commits made elsewhere

    /// A number that changes when another connection commits.
    func externalChangeToken() -> Int
    /// Whether commits made elsewhere can be noticed.
    var canNoticeCommitsElsewhere: Bool { get }
    /// Starts watching for commits made elsewhere (nil when the store cannot have them).
    /// - Throws: ``StoreError`` when the watch cannot start.
    func watchCommitsElsewhere(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreChangeWatch)?
}

/// A running watch for commits made elsewhere (``StoreBackend/watchCommitsElsewhere(_:)``).
package protocol StoreChangeWatch: AnyObject, Sendable {
    /// Stops watching; no change is reported once it returns.
    func stop()
}

extension SQLiteStore: StoreBackend {
    package var recordsHistory: Bool { history != nil }

    package func takeOwnTransactions(through number: Int64) -> Set<Int64> {
        history?.takeRecorded(through: number) ?? []
    }

    /// SQLite's: the library's functions and collations are registered on every connection.
    package var dialect: any SQLDialect { SQLiteDialect() }

    /// A ``BoundWrite`` is an SQLite statement: values go from the dictionaries to it with no row in between.
    package var bindsValuesDirectly: Bool { true }

    /// Nothing to close: GRDB closes the connections when the store goes.
    package func didLeaveCoordinator() {}

    /// `body` as it is: SQLite answers every predicate in its SQL, so no batch request or dictionary fetch
    /// selects its rows in the app first.
    ///
    /// - Throws: what `body` throws.
    package func inOneSnapshot<T>(writing: Bool, request: String, _ body: () throws -> T) throws -> T {
        try body()
    }
}

extension PersistentStore {
    /// The store as the layers above reach it. Every store is one: only the package subclasses
    /// ``PersistentStore``.
    package var backend: any StoreBackend {
        guard let backend = self as? any StoreBackend else {
            preconditionFailure("\(Swift.type(of: self)) is a PersistentStore that is not a StoreBackend")
        }
        return backend
    }
}
