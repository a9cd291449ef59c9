import Foundation
import GRDB

/// ``MigrationHistory`` on an SQLite store file's connection, as the migration runner holds it.
extension MigrationHistory {
    /// Reads what the migration's rewrite of `Z_PRIMARYKEY` would lose; nil when the store has no history.
    static func before(_ db: Database) throws -> MigrationHistory? {
        guard try HistoryTables.exist(in: db) else { return nil }
        return try before(SQLiteSession(db: db))
    }

    /// Entity numbers by name in a store's `Z_PRIMARYKEY` (the model's entities, not Core Data's own).
    static func entityNumbers(_ db: Database) throws -> [String: Int64] {
        try entityNumbers(SQLiteSession(db: db))
    }

    /// Before `plan` runs: the key moves it makes (its offsets read on the store as it is now). Entities
    /// are found by name among the numbers the store had before the migration.
    func keyMoves(of plan: MigrationPlan, in db: Database) throws -> KeyMoves {
        try keyMoves(of: plan, in: SQLiteSession(db: db))
    }

    /// After the plan ran: old changes of the objects it gave new keys name them by their new keys
    /// (deleted objects' keys move alike, into the same range, so they never name another object).
    func move(_ keyMoves: KeyMoves, in db: Database) throws {
        try move(keyMoves, in: SQLiteSession(db: db))
    }

    /// After the plans ran, before the commit: restores the reservations, renumbers old changes, and records
    /// the migration's transaction.
    func after(_ plans: [MigrationPlan], in db: Database) throws {
        try after(plans, in: SQLiteSession(db: db))
        _ = try HistoryTransactionWriter.insertTransaction(author: PersistentHistoryTransaction.migrationAuthor,
                                                          contextName: Self.contextName(plans), in: SQLiteSession(db: db))
    }
}
