import Foundation
import OpenCoreData

extension PostgreSQLStore {
    /// Migrates the store in `configuration`'s schema from `sourceModel` to `destinationModel` through
    /// `mapping` (Core Data's heavy migration; docs/POSTGRESQL.md, "Migration"): the two passes the SQLite
    /// migration makes (``MappingModelMigration``), read from the store and written into a new schema of the
    /// same database, which then takes the store's schema name.
    ///
    /// A store with persistent history keeps it as SQLite's mapping migration keeps it
    /// (``MappingMigrationHistory``: changes name the objects the migration made, the store's UUID and so
    /// its history tokens stay, one transaction by ``PersistentHistoryTransaction/migrationAuthor`` marks it).
    ///
    /// One transaction holds every table of the store in `SHARE` mode from the start to the swap: other
    /// instances keep reading, and their saves wait until the migration ends (then fail, as their model no
    /// longer fits the store). The swap (the old schema renamed away and dropped, the new one renamed in)
    /// commits with that transaction or not at all; on any failure the new schema is dropped and the store is
    /// exactly as it was.
    ///
    /// - Throws: the mapping's refusals (``MigrationError/unregisteredMigrationPolicy(entityMapping:className:)``,
    ///   ``MigrationError/unsupportedMapping(entityMapping:reason:)``, ``MigrationError/mappingDoesNotFitModels(entityMapping:reason:)``)
    ///   before anything is made; ``StoreError/incompatibleModel(path:differences:)`` when the
    ///   schema holds no store or one `sourceModel` did not write; ``MigrationError/stepFailed(path:step:reason:)``
    ///   when a batch fails, or naming "carry the persistent history over" when the server refuses one of the
    ///   history's statements; ``MigrationError/mappingFailed(entityMapping:object:reason:)`` when an expression
    ///   or a policy step fails on an object; ``StoreError`` when the server refuses a statement or
    ///   the connection drops.
    public static func migrate(configuration: PostgreSQLStoreConfiguration, from sourceModel: ManagedObjectModel,
                               to destinationModel: ManagedObjectModel, mapping: MappingModel,
                               batchSize: Int = MappingModelMigration.defaultBatchSize) throws {
        try migrate(configuration: configuration, from: sourceModel, to: destinationModel, mapping: mapping,
                    batchSize: batchSize, leavingMigratedStores: false)
    }

    /// ``migrate(configuration:from:to:mapping:batchSize:)``; with `leavingMigratedStores`, a store that is
    /// already at `destinationModel` when the migration's lock is taken (another instance opening it
    /// migrated it meanwhile) is left as it is.
    static func migrate(configuration: PostgreSQLStoreConfiguration, from sourceModel: ManagedObjectModel,
                        to destinationModel: ManagedObjectModel, mapping: MappingModel,
                        batchSize: Int = MappingModelMigration.defaultBatchSize, leavingMigratedStores: Bool) throws {
        try MappingModelMigration.check(mapping, sourceModel: sourceModel, destinationModel: destinationModel)
        let server = configuration.redactedURL
        let schema = configuration.schema ?? "public"
        // Names of our own making (a plain identifier), at most 30 bytes.
        let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        let working = "ocd_migrating_\(suffix)", replaced = "ocd_replaced_\(suffix)"
        let admin = PostgreSQLConnectionPool(configuration: configuration)
        defer { admin.close() }
        do {
            try admin.withSession { session in
                try session.transaction {
                    // One mapping migration of a database at a time: instances opening the store at once queue
                    // here, and the later ones find it migrated.
                    try session.execute("SELECT pg_advisory_xact_lock(?)", [mappingLockKey.storeValue])
                    let tables = try tableNames(session)
                    guard tables.contains("Z_METADATA") else {
                        throw StoreError.incompatibleModel(path: server, differences: ["the schema holds no store (no Z_METADATA)"])
                    }
                    if leavingMigratedStores,
                       try storedMetadata(session, server: server)?.versionHashes == destinationModel.entityVersionHashesByName {
                        return
                    }
                    // Sorted, so two migrations lock in one order.
                    for table in tables.sorted() { try session.execute("LOCK TABLE \(table) IN SHARE MODE") }
                    // A store with history keeps it (docs/HISTORY.md, "Migrations"), read under the locks.
                    let history = try tables.isSuperset(of: [HistoryTables.transactionTable, "ACHANGE"])
                        ? carryingHistory(server: server) { try MappingMigrationHistory.read(.postgreSQL(session)) } : nil
                    let migration = try runMapping(mapping, configuration: configuration, workingSchema: working,
                                                   sourceModel: sourceModel, destinationModel: destinationModel, batchSize: batchSize,
                                                   history: history, session: session)
                    let identifier = try storedMetadata(session, server: server)?.uuidString
                    try session.execute("ALTER SCHEMA \(schema) RENAME TO \(replaced)")
                    try session.execute("ALTER SCHEMA \(working) RENAME TO \(schema)")
                    try session.execute("DROP SCHEMA \(replaced) CASCADE")
                    // Listeners hear of the migration's transaction when the swap commits, not before.
                    if let migration, let identifier {
                        try session.execute("SELECT pg_notify(?, ?)", [PostgreSQLHistory.channel(schema: configuration.schema).storeValue,
                                                                       "\(identifier):\(migration)".storeValue])
                    }
                }
            }
        } catch {
            _ = try? admin.withSession { try $0.execute("DROP SCHEMA IF EXISTS \(working) CASCADE") }
            throw error
        }
    }

    /// The advisory lock a mapping migration holds (the layout lock is taken by the stores it opens).
    static let mappingLockKey: Int64 = 0x4F43_4432

    /// The version of `bundle` whose entity version hashes the store in `configuration`'s schema records; nil
    /// when none of its versions wrote it. Reads the metadata only (nothing is created or changed).
    ///
    /// - Throws: ``StoreError/incompatibleModel(path:differences:)`` when the schema holds no store;
    ///   ``StoreError`` when the server cannot be reached or refuses the query.
    public static func storedVersion(configuration: PostgreSQLStoreConfiguration,
                                     in bundle: ModelVersionBundle) throws -> ModelVersion? {
        let server = configuration.redactedURL
        let pool = PostgreSQLConnectionPool(configuration: configuration)
        defer { pool.close() }
        return try pool.withSession { session in
            guard try tableNames(session).contains("Z_METADATA"), let metadata = try storedMetadata(session, server: server) else {
                throw StoreError.incompatibleModel(path: server, differences: ["the schema holds no store (no Z_METADATA)"])
            }
            return bundle.version(withHashes: metadata.versionHashes)
        }
    }

    /// Opens the store read-only with `sourceModel` (which refuses a store that model did not write) and a new
    /// store of `destinationModel` in `workingSchema`, and runs the mapping from one into the other. With
    /// `history` (the store has history tables), the new store's keys start above the old ones and the history
    /// is copied from the store's schema, read through the migration's `session`, into the working schema;
    /// the number of the migration's history transaction is returned (nil without history).
    private static func runMapping(_ mapping: MappingModel, configuration: PostgreSQLStoreConfiguration,
                                   workingSchema: String, sourceModel: ManagedObjectModel,
                                   destinationModel: ManagedObjectModel, batchSize: Int,
                                   history: MappingMigrationHistory?, session: PostgreSQLSession) throws -> Int64? {
        let server = configuration.redactedURL
        let source = PersistentStoreCoordinator(managedObjectModel: sourceModel)
        try source.addPersistentStore(configuration: configuration, options: StoreOptions(readOnly: true))
        defer { source.postgreSQLStores.forEach(source.remove) }
        var destinationConfiguration = configuration
        destinationConfiguration.schema = workingSchema
        destinationConfiguration.poolSize = 1
        let destination = PersistentStoreCoordinator(managedObjectModel: destinationModel)
        try destination.addPersistentStore(configuration: destinationConfiguration)
        defer { destination.postgreSQLStores.forEach(destination.remove) }
        // The history's statements on the working schema: a connection of their own, as the new store's
        // are its own (whatever they leave there goes with the schema on failure).
        let working = PostgreSQLConnectionPool(configuration: destinationConfiguration)
        defer { working.close() }
        let run = try MappingModelMigration.run(mapping, from: source, into: destination, destinationName: server,
                                                batchSize: batchSize) {
            guard let history else { return }
            try carryingHistory(server: server) {
                try working.withSession { try history.reserveKeys(in: .postgreSQL($0)) }
            }
        }
        guard let history else { return nil }
        return try carryingHistory(server: server) {
            try working.withSession { destination in
                try destination.transaction {
                    try history.carry(from: .postgreSQL(session), into: .postgreSQL(destination), run: run)
                }
            }
        }
    }
}
