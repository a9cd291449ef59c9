import Foundation
import OpenCoreData

/// Batch update, delete and insert on PostgreSQL, with the SQLite store's meaning (`SQLiteStore+Batch`):
/// SQL straight on the tables, each request in one transaction, which also writes its history rows and
/// queues the change feed's `NOTIFY` as a save does (``PostgreSQLHistory``), so other coordinators on the
/// database hear it. Statements use the names the schema made and take values only as bound parameters.
extension PostgreSQLStore {
    // MARK: Batch update

    /// `UPDATE` of the rows `selection` names, `Z_OPT` moved on for each so optimistic locking sees the
    /// change; `followUps` (derived attributes of related rows) run after it in the same transaction.
    ///
    /// - Throws: ``StoreError/readOnly(path:)``; ``ObjectGraphError/validationFailed(_:)`` with a
    ///   ``ValidationFailure/Rule/uniquenessViolation`` naming the entity and keys when the new values meet a
    ///   uniqueness constraint (nothing is updated); ``StoreError`` when the server refuses a
    ///   statement or the connection drops (nothing is updated).
    func runBatchUpdate(entity: EntityDescription, assignments: [(column: String, sql: String, arguments: [StoreValue])],
                        selection: BatchSelection, returningIDs: Bool,
                        followUps: [(sql: String, arguments: [StoreValue])]) throws -> (count: Int, ids: [ManagedObjectID]) {
        // The history lists every row changed, so it needs their keys even when the caller does not.
        let needsIDs = returningIDs || recordsHistory
        let (sql, arguments) = selection.updateStatement(table: entity.tableName, assignments: assignments, returningIDs: needsIDs)
        let slots = entity.attributeSlots(assigned: assignments)
        return try inBatchTransaction(entity: entity) { session in
            let outcome: (count: Int, ids: [ManagedObjectID])
            if needsIDs {
                let ids = try session.rows(sql, arguments).map { objectID($0, default: entity) }
                outcome = (ids.count, ids)
            } else {
                outcome = (try session.execute(sql, arguments), [])
            }
            for statement in followUps { try session.execute(statement.sql, statement.arguments) }
            let history = outcome.ids.map {
                HistoryEntry.Change(type: .update, entityNumber: $0.entity.entityNumber, primaryKey: $0.primaryKey, updatedSlots: slots)
            }
            return (outcome, history)
        }
    }

    // MARK: Batch delete

    /// Deletes `initial`, or the rows `selection` names, and keeps the store consistent as the SQLite store
    /// does: cascades (breadth first), nulls the to-one foreign keys that pointed at deleted rows (moving
    /// their `Z_OPT` on), removes join-table rows, and refuses the whole delete when a `deny` rule would
    /// break. Returns the deleted IDs and those of the rows whose foreign keys were cleared.
    ///
    /// - Throws: ``StoreError/readOnly(path:)``; ``ObjectGraphError/validationFailed(_:)`` with
    ///   ``ValidationFailure/Rule/deleteDenied`` when a deny rule refuses (nothing is deleted);
    ///   ``StoreError`` when the server refuses a statement or the connection drops.
    func runBatchDelete(initial: [ManagedObjectID]?, entity: EntityDescription, selection: BatchSelection, needsIDs: Bool,
                        followUps: [(sql: String, arguments: [StoreValue])])
        throws -> (count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID]) {
        let table = entity.tableName
        if initial == nil, model.deletesAlone(fromTable: table), selection.readsOnly(table: table),
           !recordsHistory || Self.preservedColumns(ofTable: table, model: model).isEmpty {
            // Nothing points in or out and no tombstone to keep: one DELETE, as raw SQL would do it.
            return try inBatchTransaction(entity: entity) { session in
                let outcome: (count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID])
                if needsIDs || recordsHistory {
                    let deleted = try session.rows(selection.deleteStatement(table: table, returningIDs: true), selection.arguments).map { objectID($0, default: entity) }
                    outcome = (deleted.count, deleted, [])
                } else {
                    outcome = (try session.execute(selection.deleteStatement(table: table, returningIDs: false), selection.arguments), [], [])
                }
                for statement in followUps { try session.execute(statement.sql, statement.arguments) }
                let history = outcome.deleted.map {
                    HistoryEntry.Change(type: .delete, entityNumber: $0.entity.entityNumber, primaryKey: $0.primaryKey)
                }
                return (outcome, history)
            }
        }
        return try inBatchTransaction(entity: entity) { session in
            // The history's tombstones: the preserved columns of each table's entities, read as the rows go.
            var tombstones: [ManagedObjectID: [StoreValue]] = [:]
            let cascade = BatchDeleteCascade(model: model, identity: identity, session: session)
            let outcome = try cascade.run(initial: initial, entity: entity, selection: selection) { table, list, keys in
                let preserved = recordsHistory ? Self.preservedColumns(ofTable: table, model: model) : []
                guard !preserved.isEmpty else {
                    try session.execute("DELETE FROM \(table) WHERE Z_PK IN \(list)", keys)
                    return
                }
                let position = Dictionary(uniqueKeysWithValues: preserved.enumerated().map { ($1, $0 + 2) })
                for row in try session.rows("DELETE FROM \(table) WHERE Z_PK IN \(list) RETURNING Z_ENT, Z_PK, "
                                            + preserved.joined(separator: ", "), keys) {
                    let id = cascade.objectID(row, default: entity)
                    tombstones[id] = HistoryTables.preservedColumns(of: id.entity).map { row[position[$0]!] }
                }
            }
            for statement in followUps { try session.execute(statement.sql, statement.arguments) }
            // Deletes, then the rows whose foreign keys were cleared (which key changed is not tracked, as on SQLite).
            let history = outcome.deleted.map { HistoryEntry.Change(type: .delete, entityNumber: $0.entity.entityNumber, primaryKey: $0.primaryKey,
                                                                    tombstone: tombstones[$0] ?? []) }
                + outcome.nullified.map { HistoryEntry.Change(type: .update, entityNumber: $0.entity.entityNumber, primaryKey: $0.primaryKey) }
            return ((outcome.deleted.count, outcome.deleted, outcome.nullified), history)
        }
    }

    /// The columns of `table` that hold a preserved attribute of one of its entities (what a delete's
    /// tombstone keeps), each once.
    private static func preservedColumns(ofTable table: String, model: ManagedObjectModel) -> [String] {
        var columns: [String] = []
        for entity in model.entitiesByNumber where entity.tableName == table {
            for column in HistoryTables.preservedColumns(of: entity) where !columns.contains(column) { columns.append(column) }
        }
        return columns
    }

    // MARK: Batch insert

    /// Inserts `count` rows made one at a time by `fillRow` (a buffer of the table's width reused from row
    /// to row; its first column is overwritten with the row's key), with keys from the store's key blocks
    /// (``reservePrimaryKeys(root:count:)``), so concurrent writers never collide.
    ///
    /// For an entity with uniqueness constraints (its own or a super-entity's) the insert is an upsert, as
    /// on SQLite: a row whose constraint values a stored row (or an earlier row of the batch) holds updates
    /// that row's attributes instead, which keeps its key; the IDs returned and the history name that row.
    /// With one constraint that is PostgreSQL's `ON CONFLICT … DO UPDATE`, which holds under concurrent
    /// writers; with several (PostgreSQL takes one conflict target a statement) each row looks its
    /// constraints up in order, under a transaction lock on the table's upserts (``upsertLockClass``), so two
    /// such batches meet each other's rows rather than collide. A context's save inserting a row with the
    /// same values meanwhile is still a uniqueness violation, as a save meeting a save is.
    ///
    /// - Throws: ``StoreError/readOnly(path:)``; what `fillRow` throws (nothing is inserted then);
    ///   ``ObjectGraphError/validationFailed(_:)`` with ``ValidationFailure/Rule/uniquenessViolation`` naming
    ///   the entity and keys when a row meets a constraint it cannot update through; ``StoreError``
    ///   when the server refuses a statement or the connection drops (nothing is inserted).
    func runBatchInsert(entity: EntityDescription, count: Int, returningIDs: Bool,
                        fillRow: (Int, inout RowValues) throws -> Void) throws -> (count: Int, ids: [ManagedObjectID]) {
        guard let table = model.schema.table(named: entity.tableName), count > 0 else { return (0, []) }
        if options.readOnly { throw StoreError.readOnly(path: displayPath) }
        let first = try reservePrimaryKeys(root: entity.rootEntity, count: count)
        let width = table.columns.count
        let columns = table.columns.map(\.name).joined(separator: ", ")
        let insertSQL = "INSERT INTO \(table.name) (\(columns)) VALUES (" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        let upsert = BatchUpsertPlan(entity: entity, schema: model.schema)
        let attributeSlots = entity.storage.indices.filter {
            if case .attribute = entity.storage[$0] { return true } else { return false }
        }
        var row = RowValues(values: [StoreValue](repeating: .null, count: width))
        return try inBatchTransaction(entity: entity) { session in
            guard let upsert else {
                // Plain inserts, many rows a statement.
                let inserter = session.rowInserter(table: table.name, columns: table.columns.map(\.name))
                for offset in 0..<count {
                    try fillRow(offset, &row)
                    row[0] = (first + Int64(offset)).storeValue
                    try inserter.insert(row)
                }
                try inserter.finish()
                let keys = (0..<count).map { first + Int64($0) }
                let ids = returningIDs ? keys.map { ManagedObjectID(entity: entity, primaryKey: $0, store: identity) } : []
                let history = keys.map { HistoryEntry.Change(type: .insert, entityNumber: entity.entityNumber, primaryKey: $0) }
                return ((count, ids), history)
            }
            // Upserts, one row a statement, so a later row of the batch meets an earlier one.
            if upsert.constraints.count > 1 {
                // Read committed: each lookup after the lock sees what the previous holder committed.
                try session.execute("SELECT pg_advisory_xact_lock(\(Self.upsertLockClass), hashtext(current_schema() || '.' || ?))",
                                    [table.name.storeValue])
            }
            var written: [(key: Int64, inserted: Bool)] = []
            written.reserveCapacity(count)
            for offset in 0..<count {
                try fillRow(offset, &row)
                let reserved = first + Int64(offset)
                row[0] = reserved.storeValue
                let key = try upsertRow(Array(row), plan: upsert, insertSQL: insertSQL, table: table, in: session)
                written.append((key, key == reserved))
            }
            let ids = returningIDs ? written.map { ManagedObjectID(entity: entity, primaryKey: $0.key, store: identity) } : []
            let history = written.map {
                HistoryEntry.Change(type: $0.inserted ? .insert : .update, entityNumber: entity.entityNumber,
                                    primaryKey: $0.key, updatedSlots: $0.inserted ? [] : attributeSlots)
            }
            return ((count, ids), history)
        }
    }

    /// The first key of the two-key advisory locks that serialise multi-constraint upserts into one table (the
    /// second is a hash of the schema and table); two-key locks never meet the layout's one-key lock. "OCDU".
    static let upsertLockClass: Int32 = 0x4F43_4455

    /// Writes one batch row under `plan` and returns the key of the row written: the row's own when it was
    /// inserted, the stored row's when it updated that one.
    private func upsertRow(_ values: [StoreValue], plan: BatchUpsertPlan, insertSQL: String, table: StoreSchema.Table,
                           in session: PostgreSQLSession) throws -> Int64 {
        let tableName = table.name
        if plan.constraints.count == 1, let constraint = plan.constraints.first {
            // Names come from the schema; the index's partial WHERE is `Z_ENT IN (…)` with numbers it made.
            let target = constraint.columns.joined(separator: ", ") + ")" + (constraint.whereClause.map { " WHERE " + $0 } ?? "")
            let assignments = plan.updatedColumns.map { "\($0) = excluded.\($0)" } + ["Z_OPT = \(tableName).Z_OPT + 1"]
            let sql = insertSQL + " ON CONFLICT (" + target + " DO UPDATE SET " + assignments.joined(separator: ", ") + " RETURNING Z_PK"
            guard let key = try session.rows(sql, values).first.flatMap({ Int64.fromStoreValue($0[0]) }) else {
                throw StoreError.corrupt(path: displayPath, reason: "a batch insert into \(tableName) returned no key")
            }
            return key
        }
        // The first constraint a stored row meets decides, as SQLite's ON CONFLICT clauses in order do.
        let columnIndex = Dictionary(table.columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        for constraint in plan.constraints {
            let constraintValues = constraint.columns.map { values[columnIndex[$0] ?? 0] }
            // A NULL never meets another row in a unique index.
            guard !constraintValues.contains(where: \.isNull) else { continue }
            let conditions = constraint.columns.map { "\($0) = ?" } + (constraint.whereClause.map { ["(\($0))"] } ?? [])
            guard let stored = try session.rows("SELECT Z_PK FROM \(tableName) WHERE " + conditions.joined(separator: " AND ")
                                                    + " FOR UPDATE", constraintValues)
                .first.flatMap({ Int64.fromStoreValue($0[0]) }) else { continue }
            let assignments = plan.updatedColumns.map { "\($0) = ?" } + ["Z_OPT = Z_OPT + 1"]
            try session.execute("UPDATE \(tableName) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ?",
                                plan.updatedColumns.map { values[columnIndex[$0] ?? 0] } + [stored.storeValue])
            return stored
        }
        try session.execute(insertSQL, values)
        return Int64.fromStoreValue(values[0]) ?? 0
    }

    // MARK: One transaction, with history

    /// Runs `body` in one transaction on one session, records the history changes it returns as one
    /// history transaction (announced to listeners when it commits), and turns a unique index's refusal
    /// into the uniqueness violation it stands for.
    private func inBatchTransaction<Result>(entity: EntityDescription,
                                            _ body: (PostgreSQLSession) throws -> (Result, [HistoryEntry.Change])) throws -> Result {
        if options.readOnly { throw StoreError.readOnly(path: displayPath) }
        let authorship = HistoryAuthorship.current
        do {
            return try pool.withSession { session in
                try session.transaction {
                    let (result, changes) = try body(session)
                    if recordsHistory,
                       let number = try PostgreSQLHistory.record(
                           HistoryEntry(author: authorship.author, contextName: authorship.contextName, changes: changes),
                           storeIdentifier: identifier, channel: historyChannel, in: session) {
                        // Kept even if the commit then fails: a number never committed is never reported.
                        ownTransactions.withLock { _ = $0.insert(number) }
                    }
                    return result
                }
            }
        } catch StoreError.serverError(let state, let message, let statement) where state == "23505" {
            if let violation = uniquenessViolation(message: message, entity: entity) { throw violation }
            throw StoreError.serverError(sqlState: state, message: message, statement: statement)
        }
    }

    /// The uniqueness violation a unique index's refusal (`duplicate key value violates unique constraint
    /// "z_tag_unique_0"`) stands for, naming the constraint's entity and keys; nil for another index.
    private func uniquenessViolation(message: String, entity: EntityDescription) -> ObjectGraphError? {
        var declaring: EntityDescription? = entity
        // The requested entity's constraints, its super-entities', then any other entity's (a cascade or
        // a derived attribute may write elsewhere).
        var candidates: [EntityDescription] = []
        while let current = declaring { candidates.append(current); declaring = current.superentity }
        candidates += model.entitiesByNumber.filter { candidate in !candidates.contains { $0 === candidate } }
        let lowered = message.lowercased()
        for candidate in candidates {
            for (position, keys) in candidate.uniquenessConstraints.enumerated()
            where lowered.contains("\"z_\(candidate.name.lowercased())_unique_\(position)\"") {
                return .validationFailed([ValidationFailure(
                    objectID: ManagedObjectID(temporaryFor: candidate), entity: candidate.name, key: keys.joined(separator: ","),
                    rule: .uniquenessViolation, message: "a batch request would store two \(candidate.name) objects with the same \(keys.joined(separator: ", ")): \(message)")])
            }
        }
        return nil
    }

    /// The object ID of a `(Z_ENT, Z_PK)` row.
    private func objectID(_ row: [StoreValue], default entity: EntityDescription) -> ManagedObjectID {
        ManagedObjectID(keyRow: row, default: entity, model: model, store: identity)
    }
}
