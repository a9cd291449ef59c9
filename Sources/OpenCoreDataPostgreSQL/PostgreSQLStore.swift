import Foundation
import OpenCoreData
import Synchronization

/// A store kept in a PostgreSQL database, in Core Data's layout, shared by every process that opens it.
///
/// Opening one connects, and then in one transaction either creates the layout the model implies (an empty
/// schema) or checks that the tables and the metadata's version hashes fit the model, refusing with the
/// differences named. Several processes may open the same store at once: creation is serialised by an
/// advisory lock, so exactly one creates it and the others find it made.
///
/// ```swift
/// let configuration = try PostgreSQLStoreConfiguration(url: "postgresql://app@127.0.0.1/shop")
/// let store = try PostgreSQLStore(model: model, configuration: configuration)
/// defer { store.close() }
/// print(store.identifier)   // NSStoreUUID, the same for every process on this database and schema
/// ```
public final class PostgreSQLStore: PersistentStore, @unchecked Sendable {
    // @unchecked Sendable: the pool locks its own state; `keyBlocks` changes only under `keyLock`.
    /// Where the store lives.
    public let configuration: PostgreSQLStoreConfiguration
    /// The model the store was opened with.
    public let model: ManagedObjectModel
    let pool: PostgreSQLConnectionPool
    /// How many keys one trip to `Z_PRIMARYKEY` reserves for this process (see ``reservePrimaryKeys(root:count:)``).
    let keyBlockSize: Int
    /// Whether saves record persistent history (Core Data's `NSPersistentHistoryTrackingKey`) and announce
    /// their transactions to listeners (``PostgreSQLChangeListener``).
    public let recordsHistory: Bool
    /// The store as object IDs name it.
    package let identity: StoreIdentity
    /// History transactions this store object wrote, until the coordinator takes them (its own saves are
    /// not merged again when the change feed reports them).
    let ownTransactions = Mutex<Set<Int64>>([])
    /// Commits the change watch heard of, and how many watches run (``externalChangeToken()``).
    let heardCommits = Atomic<Int>(0)
    let watchCount = Atomic<Int>(0)
    /// Counts token requests made without a watch, each answered with a new token.
    let unwatchedReads = Atomic<Int>(0)
    /// The `NOTIFY` channel the store's transactions are announced on.
    var historyChannel: String { PostgreSQLHistory.channel(schema: configuration.schema) }
    let keyLock = NSLock()
    /// Keys reserved but not handed out yet, by root entity number: next, end (exclusive).
    var keyBlocks: [Int: (next: Int64, end: Int64)] = [:]
    /// The `NSStoreType` a PostgreSQL store writes into its metadata.
    static let storeType = "PostgreSQL"
    /// The advisory lock that serialises creating and checking the layout (any constant; "OCD1").
    static let layoutLockKey: Int64 = 0x4F43_4431

    /// Opens the store, creating its layout in an empty database or schema (and, with `recordsHistory`, the
    /// history tables where missing, with the history reader registry unless ``StoreOptions/readOnly``). `keyBlockSize` is how many primary keys one trip to `Z_PRIMARYKEY`
    /// reserves for this process. Of `options`, ``StoreOptions/readOnly`` refuses saves,
    /// ``StoreOptions/remoteChangeNotifications`` makes a coordinator listen to the change feed (with
    /// `recordsHistory`), and ``StoreOptions/rowCacheCapacity`` sizes its row cache. A store written by an
    /// earlier version of the model's bundle is migrated first, as SQLite does it (``PostgreSQLMigration``):
    /// by a mapping model when ``StoreOptions/mappingModels`` or the bundle's folder has one for the step
    /// (``migrate(configuration:from:to:mapping:batchSize:)``, all or nothing), else by the inferred plans.
    ///
    /// - Throws: ``StoreError/connectionFailed(server:reason:)`` when the server cannot be reached;
    ///   what a migration throws (``MigrationError``; the store is then as it was);
    ///   ``StoreError/incompatibleModel(path:differences:)`` when the database holds a store of
    ///   another model or tables that do not fit this one (nothing is changed), or when its encoding is not
    ///   UTF-8; a ``ModelError`` when the model cannot be laid out;
    ///   ``StoreError/serverError(sqlState:message:statement:)`` when the server refuses a statement
    ///   (for example for lack of privileges).
    public convenience init(model: ManagedObjectModel, configuration: PostgreSQLStoreConfiguration, recordsHistory: Bool = false,
                            keyBlockSize: Int = 100, options: StoreOptions = StoreOptions()) throws {
        try self.init(model: model, configuration: configuration, recordsHistory: recordsHistory, keyBlockSize: keyBlockSize,
                      options: options, pool: PostgreSQLConnectionPool(configuration: configuration))
    }

    /// Opens the store as the public initializer does, through `pool` (a migration's handlers get a store on
    /// the migration's own session, ``PostgreSQLConnectionPool/init(borrowing:configuration:)``).
    ///
    /// - Throws: as the public initializer.
    init(model: ManagedObjectModel, configuration: PostgreSQLStoreConfiguration, recordsHistory: Bool,
         keyBlockSize: Int, options: StoreOptions, pool: PostgreSQLConnectionPool) throws {
        self.configuration = configuration
        self.recordsHistory = recordsHistory
        self.model = model
        self.keyBlockSize = max(1, keyBlockSize)
        let schema = model.schema
        self.pool = pool
        func open() throws -> String {
            try pool.withSession { session in
                try session.transaction {
                    try session.execute("SELECT pg_advisory_xact_lock(?)", [Self.layoutLockKey.storeValue])
                    let identifier = try Self.prepareLayout(session, model: model, schema: schema, options: options,
                                                            configuration: configuration,
                                                            channel: PostgreSQLHistory.channel(schema: configuration.schema))
                    try PostgreSQLCaseMapping.install(in: session, server: configuration.redactedURL)
                    // A read-only store never writes the registry, so an open for reading does not add it.
                    if recordsHistory { try PostgreSQLHistory.create(in: session, model: model, readerRegistry: !options.readOnly) }
                    return identifier
                }
            }
        }
        let identifier: String
        do {
            do {
                identifier = try open()
            } catch let needed as MappingMigrationNeeded {
                // The open's transaction is rolled back: the mapping's migration runs on its own (all or
                // nothing, ``migrate(configuration:from:to:mapping:batchSize:)``), then the open again finds
                // the store at the model's version. An instance that migrated meanwhile leaves nothing to do.
                try Self.migrate(configuration: configuration, from: needed.sourceModel, to: model, mapping: needed.mapping,
                                 leavingMigratedStores: true)
                identifier = try open()
            }
        } catch {
            pool.close()
            throw error
        }
        identity = StoreIdentity(uuid: identifier)
        // No file URL: ``displayPath`` and ``configuration`` name the server. Of the options, readOnly, remoteChangeNotifications and the row cache's capacity apply; the SQLite
        // file's own options do not.
        super.init(typeName: Self.storeType, url: nil, identifier: identifier,
                   options: options)
    }

    /// Closes the store's connections. Work started afterwards fails with a typed error.
    public func close() { pool.close() }

    // A store let go without `close()` (a coordinator released with its stores) closes its connections:
    // postgres-nio requires every connection to be closed before it is released.
    deinit { pool.close() }

    /// Creates the layout in an empty schema, or checks the one there (migrating it first when it was
    /// written by an earlier version of the model's bundle and `options` allow, ``PostgreSQLMigration``);
    /// returns the store's UUID. A migration of a store with history announces its transaction on `channel`.
    private static func prepareLayout(_ session: PostgreSQLSession, model: ManagedObjectModel, schema: StoreSchema,
                                      options: StoreOptions, configuration: PostgreSQLStoreConfiguration,
                                      channel: String) throws -> String {
        let server = configuration.redactedURL
        var existing = try tableNames(session)
        if existing.isEmpty {
            for statement in try PostgreSQLLayout.creationSQL(for: schema, server: server) { try session.execute(statement) }
            var metadata = StoreMetadata(model: model)
            metadata.storeType = storeType
            try StoreBookkeeping.writeInitialRows(model: model, metadata: metadata, in: session)
            try PostgreSQLModelCache.store(model, in: session)
            return metadata.uuidString
        }
        guard existing.contains("Z_METADATA"), existing.contains("Z_PRIMARYKEY") else {
            throw StoreError.incompatibleModel(
                path: server, differences: ["the schema has tables but not Core Data's Z_METADATA and Z_PRIMARYKEY"])
        }
        if let stored = try storedMetadata(session, server: server),
           try !PostgreSQLMigration.migrateIfNeeded(session, model: model, metadata: stored, options: options,
                                                     configuration: configuration, channel: channel, tables: existing).isEmpty {
            existing = try tableNames(session)
        }
        if !options.readOnly { try widenDateColumns(session, schema: schema) }
        // Columns this library named before it followed Core Data: renamed by a writable open, explained by a
        // read-only one.
        let renamings = EarlierEntityColumnNames.needed(by: model, columnsByTable: try columnsByTable(session))
        if !options.readOnly { try EarlierEntityColumnNames.rename(renamings, in: session) }
        var differences = EarlierEntityColumnNames.explained(
            try layoutDifferences(session, model: model, schema: schema, tables: existing), renamings)
        guard let metadata = try storedMetadata(session, server: server) else {
            throw StoreError.incompatibleModel(
                path: server, differences: differences + ["Z_METADATA has no property list, so the store's model is unknown"])
        }
        differences += metadata.differences(from: model)
        guard differences.isEmpty else { throw StoreError.incompatibleModel(path: server, differences: differences) }
        if !options.readOnly { try PostgreSQLModelCache.store(model, in: session) }
        return metadata.uuidString
    }

    /// Turns date columns an earlier layout made `NUMERIC` into `DOUBLE PRECISION` (``PostgreSQLLayout``), in
    /// the open's transaction: a `NUMERIC` column keeps only 15 digits of each date written to it. Every value
    /// already there reads the same afterwards.
    private static func widenDateColumns(_ session: PostgreSQLSession, schema: StoreSchema) throws {
        let dateColumns = Set(schema.tables.flatMap { table in
            table.columns.filter { $0.sqlType == "TIMESTAMP" }.map { "\(table.name).\($0.name)" }
        })
        guard !dateColumns.isEmpty else { return }
        let numeric = try session.rows("""
            SELECT upper(table_name), upper(column_name) FROM information_schema.columns
            WHERE table_schema = current_schema() AND data_type = 'numeric' ORDER BY 1, 2
            """).compactMap { row -> (String, String)? in
            guard let table = String.fromStoreValue(row[0]), let column = String.fromStoreValue(row[1]),
                  dateColumns.contains("\(table).\(column)") else { return nil }
            return (table, column)
        }
        // Names come from the schema (matched above), never from the server's answer alone.
        for (table, column) in numeric {
            try session.execute("ALTER TABLE \(table) ALTER COLUMN \(column) TYPE DOUBLE PRECISION")
        }
    }

    /// The tables of the store's schema, their names in upper case as the layout spells them.
    static func tableNames(_ session: PostgreSQLSession) throws -> Set<String> {
        Set(try session.rows("SELECT upper(table_name) FROM information_schema.tables WHERE table_schema = current_schema()")
            .compactMap { $0.first.flatMap { String.fromStoreValue($0) } })
    }

    /// The metadata in `Z_METADATA`; nil when it holds no property list.
    ///
    /// - Throws: the errors of ``PostgreSQLSession/rows(_:_:)``, and ``StoreError`` for a property list that
    ///   is not a store's metadata.
    static func storedMetadata(_ session: PostgreSQLSession, server: String) throws -> StoreMetadata? {
        let row = try session.rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1").first
        guard let plist = row.flatMap({ Data.fromStoreValue($0[1]) }) else { return nil }
        return try StoreMetadata(plistData: plist, rowUUID: row.flatMap { String.fromStoreValue($0[0]) }, storePath: server)
    }

    /// The columns of each table of the store's schema, names in upper case as the layout spells them.
    static func columnsByTable(_ session: PostgreSQLSession) throws -> [String: Set<String>] {
        var columnsByTable: [String: Set<String>] = [:]
        for row in try session.rows("SELECT upper(table_name), upper(column_name) FROM information_schema.columns WHERE table_schema = current_schema()") {
            if let table = String.fromStoreValue(row[0]), let column = String.fromStoreValue(row[1]) {
                columnsByTable[table, default: []].insert(column)
            }
        }
        return columnsByTable
    }

    /// How the tables in the schema differ from what the model implies: entity numbering, tables, columns,
    /// text columns' collation.
    static func layoutDifferences(_ session: PostgreSQLSession, model: ManagedObjectModel, schema: StoreSchema,
                                          tables: Set<String>) throws -> [String] {
        var differences: [String] = []
        differences += StoreBookkeeping.numberingDifferences(model: model, stored: try StoreBookkeeping.entityNames(in: session))
        let columnsByTable = try columnsByTable(session)
        // Text outside "C" would compare and sort in the server's locale order, not in memory's (code points).
        let textTables = Set(schema.tables.map(\.name))
        for row in try session.rows("""
            SELECT upper(table_name), upper(column_name), collation_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND data_type = 'text' AND collation_name IS DISTINCT FROM 'C'
            ORDER BY 1, 2
            """) {
            guard let table = String.fromStoreValue(row[0]), textTables.contains(table),
                  let column = String.fromStoreValue(row[1]) else { continue }
            let collation = String.fromStoreValue(row[2]) ?? "the database's default"
            differences.append("column \(table).\(column) is in the collation \(collation), not \"C\" (code point order)")
        }
        let wanted = schema.tables.map { ($0.name, $0.columns.map(\.name)) } + schema.joinTables.map { ($0.name, $0.columns) }
        for (table, columns) in wanted {
            guard tables.contains(table) else {
                differences.append("table \(table) is missing")
                continue
            }
            for column in columns where !(columnsByTable[table]?.contains(column) ?? false) {
                differences.append("column \(table).\(column) is missing")
            }
        }
        return differences
    }
}
