import Foundation

/// Keeps a store's persistent history through a migration, inside the migration's transaction
/// (docs/HISTORY.md, "Migrations"): the history tables are left as they are, their key reservations in
/// `Z_PRIMARYKEY` (which a migration rewrites for the new model's entities) are put back, old changes are
/// renumbered to the new model's entity numbers, and one transaction by ``PersistentHistoryTransaction/migrationAuthor``
/// marks the migration, so readers learn that every object may have changed.
///
/// Only stores that already have history tables are touched: a migration records history where history
/// has been recorded.
package struct MigrationHistory {
    /// `Z_PRIMARYKEY` rows from 16000 up (Core Data's own entities: history, and any other), as they were.
    private let reservedRows: [[StoreValue]]
    /// The model's entity numbers by name before the migration.
    private let entityNumbersBefore: [String: Int64]

    /// Reads what the migration's rewrite of `Z_PRIMARYKEY` would lose, in a store that has history tables.
    ///
    /// - Throws: what `connection` throws.
    package static func before(_ connection: any SQLSession) throws -> MigrationHistory {
        MigrationHistory(
            reservedRows: try connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= ?",
                                              [Int64(HistoryTables.firstReservedEntityNumber).storeValue]),
            entityNumbersBefore: try entityNumbers(connection))
    }

    /// Entity numbers by name in a store's `Z_PRIMARYKEY` (the model's entities, not Core Data's own).
    ///
    /// - Throws: what `connection` throws.
    static func entityNumbers(_ connection: any SQLSession) throws -> [String: Int64] {
        var numbers: [String: Int64] = [:]
        for row in try connection.rows("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
                                       [Int64(HistoryTables.firstReservedEntityNumber).storeValue]) {
            if let name = String.fromStoreValue(row[0]), let number = Int64.fromStoreValue(row[1]) { numbers[name] = number }
        }
        return numbers
    }

    /// Objects that get new keys from one plan: the old entity numbers their changes carry, and what
    /// their keys move by.
    package struct KeyMoves {
        fileprivate var moves: [(numbers: [Int64], offset: Int64)]
    }

    /// Before `plan` runs: the key moves it makes (its offsets read on the store as it is now). Entities
    /// are found by name among the numbers the store had before the migration.
    ///
    /// - Throws: what `connection` throws.
    package func keyMoves(of plan: MigrationPlan, in connection: any SQLSession) throws -> KeyMoves {
        KeyMoves(moves: try plan.keyMoves.map { move in
            (move.sourceEntities.compactMap { entityNumbersBefore[$0] },
             try connection.rows("SELECT \(move.offset.sql)", move.offset.arguments).first?.first
                .flatMap { Int64.fromStoreValue($0) } ?? 0)
        })
    }

    /// After the plan ran: old changes of the objects it gave new keys name them by their new keys
    /// (deleted objects' keys move alike, into the same range, so they never name another object).
    ///
    /// - Throws: what `connection` throws.
    package func move(_ keyMoves: KeyMoves, in connection: any SQLSession) throws {
        for (numbers, offset) in keyMoves.moves where !numbers.isEmpty && offset != 0 {
            try connection.execute("UPDATE ACHANGE SET ZENTITYPK = ZENTITYPK + ? WHERE ZENTITY IN (\(numbers.map { _ in "?" }.joined(separator: ", ")))",
                                   [offset.storeValue] + numbers.map(\.storeValue))
        }
    }

    /// The migration transaction's context name: "source version → target version".
    package static func contextName(_ plans: [MigrationPlan]) -> String {
        "\(plans.first?.sourceVersion ?? "?") → \(plans.last?.targetVersion ?? "?")"
    }

    /// After the plans ran, before the commit: restores the reservations and renumbers old changes (the
    /// caller then records the migration's transaction, by ``PersistentHistoryTransaction/migrationAuthor``
    /// with the context name ``contextName(_:)``).
    ///
    /// - Throws: what `connection` throws.
    package func after(_ plans: [MigrationPlan], in connection: any SQLSession) throws {
        // Key reservations: never below what the tables hold, so numbers keep counting up.
        let tableByEntity = [HistoryTables.changeEntity: HistoryTables.changeTable,
                             HistoryTables.transactionEntity: HistoryTables.transactionTable,
                             HistoryTables.stringEntity: HistoryTables.stringTable]
        for row in reservedRows {
            guard let entity = Int64.fromStoreValue(row[0]) else { continue }
            var maximum = Int64.fromStoreValue(row[3]) ?? 0
            if let table = tableByEntity[Int(entity)] {
                maximum = max(maximum, try connection.rows("SELECT COALESCE(MAX(Z_PK), 0) FROM \(table)", []).first?.first
                    .flatMap { Int64.fromStoreValue($0) } ?? 0)
            }
            try connection.execute("DELETE FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [entity.storeValue])
            try connection.execute("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                                   [entity.storeValue, row[1], row[2], maximum.storeValue])
        }
        try moveUpdatedSlots(through: plans, in: connection)
        // Old changes name entities by number: follow each entity (by name) to its new number. Changes of an
        // entity the new model lacks get number 0, which no entity has: readers leave them out.
        let after = try Self.entityNumbers(connection)
        let moves = entityNumbersBefore.map { name, old in (old, after[name] ?? 0) }.filter { $0.0 != $0.1 }
        if !moves.isEmpty {
            let cases = String(repeating: " WHEN ? THEN ?", count: moves.count)
            try connection.execute("UPDATE ACHANGE SET ZENTITY = CASE ZENTITY\(cases) ELSE ZENTITY END WHERE ZENTITY < ?",
                                   moves.flatMap { [$0.0.storeValue, $0.1.storeValue] }
                                    + [Int64(HistoryTables.firstReservedEntityNumber).storeValue])
        }
    }

    /// Updated-property bitmaps (`ZCOLUMNS`, bit n for the entity's n-th property) of old changes follow
    /// each property to its slot in the new model, through every plan (a property the migration drops
    /// leaves them). Run while the changes still carry the entity numbers of before the migration.
    private func moveUpdatedSlots(through plans: [MigrationPlan], in connection: any SQLSession) throws {
        let nameByNumber = Dictionary(entityNumbersBefore.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        // (entity number, old bitmap, new bitmap), all rewritten by one statement: one by one, a bitmap
        // just written could be taken for an old one of the same value.
        var changes: [StoreValue] = []
        for row in try connection.rows("SELECT DISTINCT ZENTITY, ZCOLUMNS FROM ACHANGE WHERE ZCOLUMNS IS NOT NULL AND ZENTITY < ?",
                                       [Int64(HistoryTables.firstReservedEntityNumber).storeValue]) {
            guard let number = Int64.fromStoreValue(row[0]), let name = nameByNumber[number],
                  let bitmap = Data.fromStoreValue(row[1]) else { continue }
            var slots = HistoryEntry.slots(in: bitmap)
            for plan in plans {
                let moves = plan.slotMoves[name] ?? [:]
                slots = slots.compactMap { moves[$0] }
            }
            let moved = HistoryEntry.bitmap(slots.sorted())
            guard moved != bitmap else { continue }
            changes += [number.storeValue, bitmap.storeValue, moved?.storeValue ?? .null]
        }
        guard !changes.isEmpty else { return }
        let cases = String(repeating: " WHEN ZENTITY = ? AND ZCOLUMNS = ? THEN ?", count: changes.count / 3)
        try connection.execute("UPDATE ACHANGE SET ZCOLUMNS = CASE\(cases) ELSE ZCOLUMNS END WHERE ZCOLUMNS IS NOT NULL AND ZENTITY < ?",
                               changes + [Int64(HistoryTables.firstReservedEntityNumber).storeValue])
    }
}

extension PersistentHistoryTransaction {
    /// The author of the transaction a migration records in a store with history (its context name is
    /// "source version → target version"; it lists no changes: after it, any object may differ).
    public static let migrationAuthor = "NSPersistentStoreCoordinator migration"
}
