import Foundation
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
    /// Migrates the store when `metadata` carries the hashes of an earlier version of the bundle `model` was
    /// loaded from and `options` allow it (``StoreOptions/migratesStoreAutomatically`` and
    /// ``StoreOptions/infersMappingModelAutomatically``, not ``StoreOptions/readOnly``); returns the plans it
    /// ran, empty when it ran none (the store fits the model, the model has no bundle, no version of the
    /// bundle wrote the store, or migration is not allowed: the open then refuses with the differences).
    /// Runs in the caller's transaction, which must hold the layout lock. A store with persistent history
    /// keeps it as a SQLite store does (``MigrationHistory``) and records the migration's transaction,
    /// announced on `channel`. A ``StoreOptions/stagedMigrationManager`` runs its stages in that same
    /// transaction: each inferred segment planned on the store as the one before left it.
    ///
    /// - Throws: the planner's refusals (``MigrationError/unsupportedChange(entity:property:reason:)``,
    ///   ``MigrationError/missingRequiredValues(entity:attribute:rowCount:)``, …),
    ///   ``MigrationError/storeIsNewer(path:storeVersion:modelVersion:)``,
    ///   ``MigrationError/storeDoesNotMatchItsVersion(path:version:differences:)``,
    ///   ``MigrationError/stepFailed(path:step:reason:)`` naming the step when the server refuses a statement,
    ///   ``MappingMigrationNeeded`` when a mapping model applies (the caller runs it outside this transaction),
    ///   ``MigrationError/invalidStage(stage:reason:)`` for a stage the bundle does not fit,
    ///   ``MigrationError/stageFailed(path:stage:reason:)`` when a custom stage's handler throws,
    ///   and ``StoreError/connectionLost(server:reason:)``.
    ///   Whatever is thrown, the caller's transaction rolls everything back.
    static func migrateIfNeeded(_ session: PostgreSQLSession, model: ManagedObjectModel, metadata: StoreMetadata,
                                options: StoreOptions, configuration: PostgreSQLStoreConfiguration, channel: String,
                                tables: Set<String>) throws -> [MigrationPlan] {
        let server = configuration.redactedURL
        guard let bundleURL = model.versionBundleURL, let modelVersion = model.versionName,
              metadata.versionHashes != model.entityVersionHashesByName else { return [] }
        let bundle = try ModelVersionBundle(contentsOf: bundleURL)
        guard let stored = bundle.version(withHashes: metadata.versionHashes, notAfter: modelVersion),
              let target = bundle.version(named: modelVersion) else { return [] }
        guard !options.readOnly, options.migratesStoreAutomatically else { return [] }
        let versions = "\(stored.name) → \(modelVersion)"
        // A store with history tables keeps its history through the migration, as a SQLite store does
        // (docs/HISTORY.md, "Migrations"): the plans rewrite Z_PRIMARYKEY from the model alone and may
        // renumber entities.
        let recordsHistory = tables.isSuperset(of: ["ATRANSACTION", "ACHANGE"])
        /// Plans the inferred migration from the version the store is at now (in this transaction) to
        /// `destination`, and runs it.
        func migrate(to destination: ModelVersion, model destinationModel: ManagedObjectModel) throws -> [MigrationPlan] {
            guard let metadata = try PostgreSQLStore.storedMetadata(session, server: server) else { return [] }
            let tables = try PostgreSQLStore.tableNames(session)
            let plans = try StoreMigration.plans(
                metadata: metadata, path: server, bundle: bundle, target: destination, targetModel: destinationModel,
                dialect: PostgreSQLDialect(),
                differences: { version in
                    try PostgreSQLStore.layoutDifferences(session, model: version, schema: version.schema, tables: tables)
                },
                storedNumbers: { try storedEntityNumbers(session) })
            try run(plans, in: session, server: server, recordsHistory: recordsHistory, storeIdentifier: metadata.uuidString,
                    channel: channel)
            return plans
        }
        if let manager = options.stagedMigrationManager, options.infersMappingModelAutomatically {
            // The stages run in this one transaction: each inferred segment planned on the store as the
            // segments before it left it. A custom stage's handlers get a container whose store works on
            // this same session, so their saves are part of the migration and go with it on failure.
            guard let from = bundle.versions.firstIndex(where: { $0.name == stored.name }),
                  let to = bundle.versions.firstIndex(where: { $0.name == target.name }) else { return [] }
            if from > to { throw MigrationError.storeIsNewer(path: server, storeVersion: stored.name, modelVersion: target.name) }
            let segments = try StagedMigrationRunner.segments(of: manager, in: bundle, from: from, to: to)
            return try segments.flatMap { segment in
                if let stage = segment.stage, let handler = stage.willMigrateHandler {
                    try runHandler(handler, of: stage, named: "willMigrate", manager: manager, version: bundle.versions[segment.from],
                                   session: session, configuration: configuration, recordsHistory: recordsHistory)
                }
                let plans = try migrate(to: bundle.versions[segment.to], model: segment.to == to ? model : bundle.versions[segment.to].model)
                if let stage = segment.stage, let handler = stage.didMigrateHandler {
                    try runHandler(handler, of: stage, named: "didMigrate", manager: manager, version: bundle.versions[segment.to],
                                   session: session, configuration: configuration, recordsHistory: recordsHistory)
                }
                return plans
            }
        }
        let mapping = try options.mappingModels.first {
            ($0.sourceModelVersionName == stored.name && $0.destinationModelVersionName == modelVersion)
                || $0.fits(sourceModel: stored.model, destinationModel: model)
        } ?? MappingModel.find(in: bundleURL.deletingLastPathComponent(), from: stored.name, to: modelVersion)
        // A mapping model's migration writes a new schema through stores of its own, outside this
        // transaction: the open rolls back and runs it (``PostgreSQLStore/init(model:configuration:recordsHistory:keyBlockSize:options:)``).
        if let mapping { throw MappingMigrationNeeded(mapping: mapping, sourceModel: stored.model, versions: versions) }
        guard options.infersMappingModelAutomatically else { return [] }
        return try migrate(to: target, model: model)
    }

    /// Runs a custom stage's handler with ``StagedMigrationManager/container`` holding the store at `version`,
    /// opened on the migration's own `session` (its transaction is the migration's: the handler's saves are
    /// savepoints in it, seen by the stages after it, and undone with it), as SQLite runs it on its copy.
    ///
    /// - Throws: ``MigrationError/stageFailed(path:stage:reason:)`` naming the stage and handler when the store
    ///   cannot be opened at `version` or the handler throws.
    private static func runHandler(_ handler: CustomMigrationStage.Handler, of stage: CustomMigrationStage, named name: String,
                                   manager: StagedMigrationManager, version: ModelVersion, session: PostgreSQLSession,
                                   configuration: PostgreSQLStoreConfiguration, recordsHistory: Bool) throws {
        let stageName = "\(stage.description) (\(name), at '\(version.name)')"
        let server = configuration.redactedURL
        let container = PersistentContainer(name: "StagedMigration", managedObjectModel: version.model)
        // Automatic migration off: the store is at exactly this version, and must not move on its own.
        // History as the store keeps it, so the handler's saves are recorded like any other.
        let options = StoreOptions(persistentHistoryTracking: recordsHistory, migratesStoreAutomatically: false)
        let store: PostgreSQLStore
        do {
            store = try PostgreSQLStore(model: version.model, configuration: configuration, recordsHistory: recordsHistory,
                                        keyBlockSize: 100, options: options,
                                        pool: PostgreSQLConnectionPool(borrowing: session, configuration: configuration))
            try container.persistentStoreCoordinator.add(store)
        } catch {
            throw MigrationError.stageFailed(path: server, stage: stageName, reason: "the store could not be opened at this version: \(error)")
        }
        manager.setContainer(container)
        defer {
            manager.setContainer(nil)
            container.persistentStoreCoordinator.remove(store)
        }
        do {
            try handler(manager, stage)
        } catch {
            throw MigrationError.stageFailed(path: server, stage: stageName, reason: "\(error)")
        }
    }

    /// The entity numbers in `Z_PRIMARYKEY` by entity name (the history's reserved rows left out).
    private static func storedEntityNumbers(_ session: PostgreSQLSession) throws -> [String: Int] {
        var numbers: [String: Int] = [:]
        for row in try session.rows("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
                                    [Int64(HistoryTables.firstReservedEntityNumber).storeValue]) {
            if let name = String.fromStoreValue(row[0]), let number = Int.fromStoreValue(row[1]) { numbers[name] = number }
        }
        return numbers
    }

    /// Runs `plans` in order; with `recordsHistory` (the store has history tables), keeps the history through
    /// them (``MigrationHistory``) and records the migration's transaction, announced on `channel`.
    ///
    /// - Throws: what ``run(_:in:server:)`` throws; ``MigrationError/stepFailed(path:step:reason:)`` naming
    ///   "keep the persistent history" when the server refuses one of the history's statements.
    private static func run(_ plans: [MigrationPlan], in session: PostgreSQLSession, server: String, recordsHistory: Bool,
                            storeIdentifier: String, channel: String) throws {
        guard !plans.isEmpty else { return }
        let history = recordsHistory ? try keepingHistory(server: server) { try MigrationHistory.before(session) } : nil
        for plan in plans {
            // Read before the plan moves any row: the keys its objects move by.
            let moves = try history.map { history in try keepingHistory(server: server) { try history.keyMoves(of: plan, in: session) } }
            try run(plan, in: session, server: server)
            if let history, let moves { try keepingHistory(server: server) { try history.move(moves, in: session) } }
        }
        if let history {
            try keepingHistory(server: server) {
                try history.after(plans, in: session)
                try PostgreSQLHistory.recordMigration(plans, storeIdentifier: storeIdentifier, channel: channel, in: session)
            }
        }
    }

    /// Runs `body`, a step keeping the history; a statement the server refuses names that step.
    private static func keepingHistory<Result>(server: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch StoreError.serverError(let state, let message, _) {
            throw MigrationError.stepFailed(path: server, step: "keep the persistent history",
                                            reason: "\(message) (SQLSTATE \(state))")
        }
    }

    /// Runs the steps of `plan` in order: a check counts and refuses, every other step executes.
    ///
    /// - Throws: the check's ``MigrationError`` refusal; ``MigrationError/stepFailed(path:step:reason:)`` when
    ///   the server refuses a statement; ``StoreError/connectionLost(server:reason:)``.
    static func run(_ plan: MigrationPlan, in session: PostgreSQLSession, server: String) throws {
        for step in plan.steps {
            for statement in step.statements {
                do {
                    if let refusal = step.refusal {
                        let count = try session.rows(statement.sql, statement.arguments).first?.first
                            .flatMap { Int.fromStoreValue($0) } ?? 0
                        if count > 0 { throw refusal.error(rowCount: count) }
                    } else {
                        try session.execute(statement.sql, statement.arguments)
                    }
                } catch StoreError.serverError(let state, let message, _) {
                    throw MigrationError.stepFailed(path: server, step: step.description,
                                                    reason: "\(message) (SQLSTATE \(state))")
                }
            }
        }
    }
}

/// Thrown inside an open's transaction when the store is migrated by a mapping model (found as SQLite finds
/// it: ``StoreOptions/mappingModels``, else beside the model's bundle), which runs outside that transaction.
struct MappingMigrationNeeded: Error {
    var mapping: MappingModel
    /// The model of the version that wrote the store.
    var sourceModel: ManagedObjectModel
    /// "old → new", for messages.
    var versions: String
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
    /// - Throws: ``StoreError/connectionFailed(server:reason:)``,
    ///   ``StoreError/incompatibleModel(path:differences:)`` when the schema holds no store or
    ///   one no version of the bundle wrote, ``ModelError/versionNotFound(bundle:version:available:)`` for an
    ///   unknown `version`, and what opening with migration throws
    ///   (``PostgreSQLMigration/migrateIfNeeded(_:model:metadata:options:configuration:channel:tables:)``); the database is
    ///   then as it was.
    public static func migrate(configuration: PostgreSQLStoreConfiguration, to bundle: ModelVersionBundle,
                               version: String? = nil, dryRun: Bool = false) throws -> MigrationOutcome {
        let target = try bundle.version(namedOrCurrent: version)
        let server = configuration.redactedURL
        let pool = PostgreSQLConnectionPool(configuration: configuration)
        defer { pool.close() }
        /// Rolls a dry run's transaction back after its plans ran.
        struct DryRun: Error { var outcome: MigrationOutcome }
        do {
            return try pool.withSession { session in
                try session.transaction {
                    try session.execute("SELECT pg_advisory_xact_lock(?)", [layoutLockKey.storeValue])
                    let tables = try tableNames(session)
                    guard tables.contains("Z_METADATA"), let metadata = try storedMetadata(session, server: server) else {
                        throw StoreError.incompatibleModel(path: server, differences: ["the schema holds no store (no Z_METADATA)"])
                    }
                    let stored = bundle.version(withHashes: metadata.versionHashes)
                    guard stored != nil else {
                        throw StoreError.incompatibleModel(path: server, differences: metadata.differences(from: target.model))
                    }
                    let plans: [MigrationPlan]
                    do {
                        plans = try PostgreSQLMigration.migrateIfNeeded(session, model: target.model, metadata: metadata,
                                                                        options: StoreOptions(), configuration: configuration,
                                                                        channel: PostgreSQLHistory.channel(schema: configuration.schema),
                                                                        tables: tables)
                    } catch let needed as MappingMigrationNeeded {
                        // Inferred plans only here: a mapping model's migration is the one taking the mapping.
                        throw MigrationError.stepFailed(path: server, step: "mapping model \(needed.versions)",
                                                        reason: "the bundle has a mapping model for this step: migrate with it")
                    }
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
