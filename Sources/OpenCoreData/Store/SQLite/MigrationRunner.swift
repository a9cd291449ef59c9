import Foundation
import GRDB

/// Runs migration plans on a store file, all of them in one SQLite transaction: the store ends at the
/// last plan's version, or (on a refusal or any failure) exactly as it was.
enum MigrationRunner {
    /// Runs `plans` in order on the store at `path`, calling `progress(done, total)` after each statement.
    ///
    /// - Throws: the ``MigrationError`` a check refuses with, ``MigrationError/stepFailed(path:step:reason:)``
    ///   when a statement fails, ``StoreError/busy(path:)`` when another connection holds the write lock.
    static func run(_ plans: [MigrationPlan], onStoreAt path: String, busyTimeout: TimeInterval = 5,
                    progress: ((Int, Int) -> Void)? = nil) throws {
        guard !plans.isEmpty else { return }
        let queue = try openConnection(to: path, busyTimeout: busyTimeout, label: "OpenCoreData.migration")
        defer { try? queue.close() }
        let total = plans.reduce(0) { $0 + $1.steps.reduce(0) { $0 + $1.statements.count } }
        var done = 0
        do {
            try queue.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    // The plans were made from a read; the write lock is taken only now. A store another
                    // connection migrated meanwhile is left alone; one changed otherwise is refused.
                    let stored = try StoreMetadata.read(db, path: path).versionHashes
                    if stored == plans[plans.count - 1].targetHashes { return .rollback }
                    guard stored == plans[0].sourceHashes else {
                        throw MigrationError.stepFailed(path: path, step: "check the store's version",
                                                        reason: "the store changed version while the migration was planned")
                    }
                    let history = try MigrationHistory.before(db)
                    for plan in plans {
                        // Read before the plan moves any row: the keys its objects move by.
                        let moves = try history?.keyMoves(of: plan, in: db)
                        try run(plan.steps, in: db, path: path) {
                            done += 1
                            progress?(done, total)
                        }
                        if let moves { try history?.move(moves, in: db) }
                    }
                    // A store with persistent history keeps it, and records the migration (docs/HISTORY.md).
                    try history?.after(plans, in: db)
                    return .commit
                }
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw StoreError.busy(path: path)
        }
    }

    /// A connection of its own to the store at `path` that waits `busyTimeout` for another connection's
    /// write lock: what a migration writes through.
    ///
    /// - Throws: the ``StoreError`` opening maps SQLite's error to.
    static func openConnection(to path: String, busyTimeout: TimeInterval, label: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = label
        do {
            return try DatabaseQueue(path: path, configuration: configuration)
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
    }

    /// Runs only the checks of `plan` (and the link collection they read), on any connection, changing
    /// nothing: what a dry run and an automatic open do before writing.
    ///
    /// - Throws: the ``MigrationError`` the first failing check refuses with.
    static func runChecks(of plan: MigrationPlan, in db: Database, path: String) throws {
        let steps = plan.steps.filter { [.collectLinks, .check, .cleanUp].contains($0.kind) }
        try db.inSavepoint {
            try run(steps, in: db, path: path) {}
            return .rollback
        }
    }

    private static func run(_ steps: [SchemaStep], in db: Database, path: String, after: () -> Void) throws {
        for step in steps {
            for statement in step.statements {
                do {
                    if let refusal = step.refusal {
                        let count = try Int.fetchOne(db, sql: statement.sql, arguments: StatementArguments(statement.arguments)) ?? 0
                        if count > 0 { throw refusal.error(rowCount: count) }
                    } else {
                        try db.execute(sql: statement.sql, arguments: StatementArguments(statement.arguments))
                    }
                } catch let error as DatabaseError where error.resultCode != .SQLITE_BUSY && error.resultCode != .SQLITE_LOCKED {
                    throw MigrationError.stepFailed(path: path, step: step.description,
                                                    reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
                }
                after()
            }
        }
    }
}
