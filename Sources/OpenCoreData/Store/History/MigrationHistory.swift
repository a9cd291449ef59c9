import Foundation
import GRDB

/// Keeps a store's persistent history through a migration, inside the migration's transaction
/// (docs/HISTORY.md, "Migrations"): the history tables are left as they are, their key reservations in
/// `Z_PRIMARYKEY` (which a migration rewrites for the new model's entities) are put back, old changes are
/// renumbered to the new model's entity numbers, and one transaction by ``PersistentHistoryTransaction/migrationAuthor``
/// marks the migration, so readers learn that every object may have changed.
///
/// Only stores that already have history tables are touched: a migration records history where history
/// has been recorded.
struct MigrationHistory {
    /// `Z_PRIMARYKEY` rows from 16000 up (Core Data's own entities: history, and any other), as they were.
    private let reservedRows: [Row]
    /// The model's entity numbers by name before the migration.
    private let entityNumbersBefore: [String: Int64]

    /// Reads what the migration's rewrite of `Z_PRIMARYKEY` would lose; nil when the store has no history.
    static func before(_ db: Database) throws -> MigrationHistory? {
        guard try HistoryTables.exist(in: db) else { return nil }
        return MigrationHistory(
            reservedRows: try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= ?",
                                           arguments: [HistoryTables.firstReservedEntityNumber]),
            entityNumbersBefore: try entityNumbers(db))
    }

    /// Entity numbers by name in a store's `Z_PRIMARYKEY` (the model's entities, not Core Data's own).
    static func entityNumbers(_ db: Database) throws -> [String: Int64] {
        var numbers: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
                                    arguments: [HistoryTables.firstReservedEntityNumber]) {
            if let name = row[0] as String?, let number = row[1] as Int64? { numbers[name] = number }
        }
        return numbers
    }

    /// Objects that get new keys from one plan: the old entity numbers their changes carry, and what
    /// their keys move by.
    struct KeyMoves {
        fileprivate var moves: [(numbers: [Int64], offset: Int64)]
    }

    /// Before `plan` runs: the key moves it makes (its offsets read on the store as it is now). Entities
    /// are found by name among the numbers the store had before the migration.
    func keyMoves(of plan: MigrationPlan, in db: Database) throws -> KeyMoves {
        KeyMoves(moves: try plan.keyMoves.map { move in
            (move.sourceEntities.compactMap { entityNumbersBefore[$0] },
             try Int64.fetchOne(db, sql: "SELECT \(move.offset.sql)", arguments: StatementArguments(move.offset.arguments)) ?? 0)
        })
    }

    /// After the plan ran: old changes of the objects it gave new keys name them by their new keys
    /// (deleted objects' keys move alike, into the same range, so they never name another object).
    func move(_ keyMoves: KeyMoves, in db: Database) throws {
        for (numbers, offset) in keyMoves.moves where !numbers.isEmpty && offset != 0 {
            try db.execute(sql: "UPDATE ACHANGE SET ZENTITYPK = ZENTITYPK + ? WHERE ZENTITY IN (\(numbers.map { _ in "?" }.joined(separator: ", ")))",
                           arguments: StatementArguments([offset] + numbers))
        }
    }

    /// After the plans ran, before the commit: restores the reservations, renumbers old changes, and records
    /// the migration's transaction.
    func after(_ plans: [MigrationPlan], in db: Database) throws {
        // Key reservations: never below what the tables hold, so numbers keep counting up.
        let tableByEntity = [HistoryTables.changeEntity: HistoryTables.changeTable,
                             HistoryTables.transactionEntity: HistoryTables.transactionTable,
                             HistoryTables.stringEntity: HistoryTables.stringTable]
        for row in reservedRows {
            let entity: Int64 = row[0]
            var maximum: Int64 = row[3] ?? 0
            if let table = tableByEntity[Int(entity)] {
                maximum = max(maximum, try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(Z_PK), 0) FROM \(table)") ?? 0)
            }
            try db.execute(sql: "INSERT OR REPLACE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                           arguments: [entity, row[1] as DatabaseValue, row[2] as DatabaseValue, maximum])
        }
        // Old changes name entities by number: follow each entity (by name) to its new number. Changes of an
        // entity the new model lacks get number 0, which no entity has: readers leave them out.
        let after = try Self.entityNumbers(db)
        let moves = entityNumbersBefore.map { name, old in (old, after[name] ?? 0) }.filter { $0.0 != $0.1 }
        if !moves.isEmpty {
            let cases = String(repeating: " WHEN ? THEN ?", count: moves.count)
            try db.execute(sql: "UPDATE ACHANGE SET ZENTITY = CASE ZENTITY\(cases) ELSE ZENTITY END WHERE ZENTITY < ?",
                           arguments: StatementArguments(moves.flatMap { [$0.0, $0.1] } + [Int64(HistoryTables.firstReservedEntityNumber)]))
        }
        let versions = "\(plans.first?.sourceVersion ?? "?") → \(plans.last?.targetVersion ?? "?")"
        _ = try HistoryRecorder.insertTransaction(author: PersistentHistoryTransaction.migrationAuthor,
                                                  contextName: versions, in: db)
    }
}

extension PersistentHistoryTransaction {
    /// The author of the transaction a migration records in a store with history (its context name is
    /// "source version → target version"; it lists no changes: after it, any object may differ).
    public static let migrationAuthor = "NSPersistentStoreCoordinator migration"
}
