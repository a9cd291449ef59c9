import Foundation
import GRDB
import OpenCoreData

/// Migrating a PostgreSQL store to its model's version as it is opened: the inferred plans the SQLite store
/// runs (`InferredMappingPlanner`, docs/MIGRATION.md), spelled for PostgreSQL, run inside the open's own
/// transaction and under its advisory lock.
///
/// PostgreSQL's DDL is transactional, so the whole migration (tables rebuilt, rows and links moved,
/// `Z_PRIMARYKEY` and `Z_METADATA` rewritten) commits with the open or not at all: a refusal, a failing
/// statement or a lost connection leaves the database exactly as it was. Instances opening at once wait
/// for the lock; the first migrates, the others then find the new version and open it.
enum PostgreSQLMigration {
    /// The planner's statements as PostgreSQL reads them: names in lower case (the layout writes them
    /// unquoted, so the server folds them), temporary tables in `pg_temp`, the layout's column types.
    static let spelling = MigrationSQLSpelling(
        name: { "\"" + $0.lowercased().replacingOccurrences(of: "\"", with: "\"\"") + "\"" },
        temporarySchema: "pg_temp", qualifiesTemporaryIndexes: false, greatest: "GREATEST",
        doubleType: "DOUBLE PRECISION", never: "FALSE", nullNumber: "CAST(NULL AS BIGINT)", aliasesSubqueries: true,
        columnDefinition: { PostgreSQLLayout.columnDefinition(forSQLiteType: $0) },
        bookkeepingColumnDefinition: { PostgreSQLLayout.columnType(forSQLiteType: $0) })

    /// Migrates the store when `metadata` carries the hashes of an earlier version of the bundle `model` was
    /// loaded from and `options` allow it (``StoreOptions/migratesStoreAutomatically`` and
    /// ``StoreOptions/infersMappingModelAutomatically``, not ``StoreOptions/readOnly``); returns the plans it
    /// ran, empty when it ran none (the store fits the model, the model has no bundle, no version of the
    /// bundle wrote the store, or migration is not allowed: the open then refuses with the differences).
    /// Runs in the caller's transaction, which must hold the layout lock.
    ///
    /// - Throws: the planner's refusals (``MigrationError/unsupportedChange(entity:property:reason:)``,
    ///   ``MigrationError/missingRequiredValues(entity:attribute:rowCount:)``, …),
    ///   ``MigrationError/storeIsNewer(path:storeVersion:modelVersion:)``,
    ///   ``MigrationError/storeDoesNotMatchItsVersion(path:version:differences:)``,
    ///   ``MigrationError/stepFailed(path:step:reason:)`` naming the step when the server refuses a statement
    ///   or when the migration needs what this store does not do yet (a mapping model, staged migration, a
    ///   store with persistent history), and ``PostgreSQLStoreError/connectionLost(server:reason:)``.
    ///   Whatever is thrown, the caller's transaction rolls everything back.
    static func migrateIfNeeded(_ session: PostgreSQLSession, model: ManagedObjectModel, metadata: StoreMetadata,
                                options: StoreOptions, server: String, tables: Set<String>) throws -> [MigrationPlan] {
        guard let bundleURL = model.versionBundleURL, let modelVersion = model.versionName,
              metadata.versionHashes != model.entityVersionHashesByName else { return [] }
        let bundle = try ModelVersionBundle(contentsOf: bundleURL)
        guard let stored = bundle.version(withHashes: metadata.versionHashes),
              let target = bundle.version(named: modelVersion) else { return [] }
        guard !options.readOnly, options.migratesStoreAutomatically else { return [] }
        let versions = "\(stored.name) → \(modelVersion)"
        if options.stagedMigrationManager != nil {
            throw MigrationError.stepFailed(
                path: server, step: "staged migration \(versions)",
                reason: "staged migrations run their stages on a copy of the store, which a PostgreSQL store does not make yet")
        }
        let mapping = try options.mappingModels.first {
            ($0.sourceModelVersionName == stored.name && $0.destinationModelVersionName == modelVersion)
                || $0.fits(sourceModel: stored.model, destinationModel: model)
        } ?? MappingModel.find(in: bundleURL.deletingLastPathComponent(), from: stored.name, to: modelVersion)
        if mapping != nil {
            throw MigrationError.stepFailed(
                path: server, step: "mapping model \(versions)",
                reason: "migrations by a mapping model do not run on a PostgreSQL store yet")
        }
        guard options.infersMappingModelAutomatically else { return [] }
        // The plans rewrite Z_PRIMARYKEY from the model alone, which would drop the history's own row there;
        // and history rows name entity numbers that a migration may change.
        if tables.contains("ATRANSACTION") {
            throw MigrationError.stepFailed(
                path: server, step: "migrate persistent history \(versions)",
                reason: "a PostgreSQL store with persistent history is not migrated yet")
        }
        let plans = try StoreMigration.plans(
            metadata: metadata, path: server, bundle: bundle, target: target, targetModel: model, spelling: spelling,
            differences: { version in
                try PostgreSQLStore.layoutDifferences(session, model: version, schema: version.schema, tables: tables)
            },
            storedNumbers: { try storedEntityNumbers(session) })
        for plan in plans { try run(plan, in: session, server: server) }
        return plans
    }

    /// The entity numbers in `Z_PRIMARYKEY` by entity name (the history's reserved rows left out).
    private static func storedEntityNumbers(_ session: PostgreSQLSession) throws -> [String: Int] {
        var numbers: [String: Int] = [:]
        for row in try session.rows("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
                                    [Int64(HistoryTables.firstReservedEntityNumber).databaseValue]) {
            if let name = String.fromDatabaseValue(row[0]), let number = Int.fromDatabaseValue(row[1]) { numbers[name] = number }
        }
        return numbers
    }

    /// Runs the steps of `plan` in order: a check counts and refuses, every other step executes.
    ///
    /// - Throws: the check's ``MigrationError`` refusal; ``MigrationError/stepFailed(path:step:reason:)`` when
    ///   the server refuses a statement; ``PostgreSQLStoreError/connectionLost(server:reason:)``.
    static func run(_ plan: MigrationPlan, in session: PostgreSQLSession, server: String) throws {
        for step in plan.steps {
            for statement in step.statements {
                do {
                    if let refusal = step.refusal {
                        let count = try session.rows(statement.sql, statement.arguments).first?.first
                            .flatMap { Int.fromDatabaseValue($0) } ?? 0
                        if count > 0 { throw refusal.error(rowCount: count) }
                    } else {
                        try session.execute(statement.sql, statement.arguments)
                    }
                } catch PostgreSQLStoreError.serverError(let state, let message, _) {
                    throw MigrationError.stepFailed(path: server, step: step.description,
                                                    reason: "\(message) (SQLSTATE \(state))")
                }
            }
        }
    }
}

extension PostgreSQLStore {
    /// What ``migrate(configuration:to:version:dryRun:)`` found and did.
    public struct MigrationOutcome: Sendable {
        /// The version of the bundle whose hashes the store carried (nil: none of them, or no store there).
        public var storeVersion: String?
        /// The plans, in order (empty: the store was already at the target version).
        public var plans: [MigrationPlan]
        /// Whether they were committed (false for a dry run or when there was nothing to do).
        public var committed: Bool
    }

    /// Migrates the store in the database and schema of `configuration` to `version` of `bundle` (nil: its
    /// current version) by the inferred plans, in one transaction under the store's layout lock, as an
    /// open does (docs/POSTGRESQL.md, "Migration"); what `ocd migrate` runs on a URL. With `dryRun` the plans
    /// run and are rolled back, so every check and statement is tried and nothing is changed.
    ///
    /// - Throws: ``PostgreSQLStoreError/connectionFailed(server:reason:)``,
    ///   ``PostgreSQLStoreError/incompatibleStore(server:differences:)`` when the schema holds no store or
    ///   one no version of the bundle wrote, ``ModelError/versionNotFound(bundle:version:available:)`` for an
    ///   unknown `version`, and what opening with migration throws
    ///   (``PostgreSQLMigration/migrateIfNeeded(_:model:metadata:options:server:tables:)``); the database is
    ///   then as it was.
    public static func migrate(configuration: PostgreSQLStoreConfiguration, to bundle: ModelVersionBundle,
                               version: String? = nil, dryRun: Bool = false) throws -> MigrationOutcome {
        let target: ModelVersion
        if let version {
            guard let found = bundle.version(named: version) else {
                throw ModelError.versionNotFound(bundle: bundle.url.path, version: version, available: bundle.versions.map(\.name))
            }
            target = found
        } else {
            target = bundle.current
        }
        let server = configuration.redactedURL
        let pool = PostgreSQLConnectionPool(configuration: configuration)
        defer { pool.close() }
        /// Rolls a dry run's transaction back after its plans ran.
        struct DryRun: Error { var outcome: MigrationOutcome }
        do {
            return try pool.withSession { session in
                try session.transaction {
                    try session.execute("SELECT pg_advisory_xact_lock(?)", [layoutLockKey.databaseValue])
                    let tables = try tableNames(session)
                    guard tables.contains("Z_METADATA"), let metadata = try storedMetadata(session, server: server) else {
                        throw PostgreSQLStoreError.incompatibleStore(server: server, differences: ["the schema holds no store (no Z_METADATA)"])
                    }
                    let stored = bundle.version(withHashes: metadata.versionHashes)
                    guard stored != nil else {
                        throw PostgreSQLStoreError.incompatibleStore(server: server, differences: metadata.differences(from: target.model))
                    }
                    let plans = try PostgreSQLMigration.migrateIfNeeded(session, model: target.model, metadata: metadata,
                                                                        options: StoreOptions(), server: server, tables: tables)
                    let outcome = MigrationOutcome(storeVersion: stored?.name, plans: plans, committed: !dryRun && !plans.isEmpty)
                    if dryRun && !plans.isEmpty { throw DryRun(outcome: outcome) }
                    return outcome
                }
            }
        } catch let dryRun as DryRun {
            return dryRun.outcome
        }
    }
}
