import Foundation
import GRDB
import GRDBSQLite

/// Batch requests in store terms: SQL straight on the tables, one transaction each.
extension SQLiteStore {
    /// `UPDATE` of the rows `selection` names. `assignments` are `column = SQL` pairs with their
    /// arguments (from the query compiler).
    package func batchUpdate(entity: EntityDescription, assignments: [(column: String, sql: String, arguments: [StoreValue])],
                     selection: BatchSelection,
                     returningIDs: Bool, followUps: [(sql: String, arguments: [StoreValue])] = [])
        throws -> (count: Int, ids: [ManagedObjectID]) {
        let fromClause = selection.fromClause, whereSQL = selection.whereSQL, filterArguments = selection.arguments
        let table = entity.tableName
        // The history lists every row changed, so it needs their keys even when the caller does not.
        let needsIDs = returningIDs || history != nil
        let (sql, arguments) = selection.updateStatement(table: table, assignments: assignments, returningIDs: needsIDs)
        let model = self.model, identity = self.identity
        let slots = entity.attributeSlots(assigned: assignments)
        // Flagged columns the update replaces: the files their values were in go once it has committed.
        let replacedColumns = externalStorage.map { storage in
            storage.columnNames(ofTable: table, schema: schema).filter { name in assignments.contains { $0.column == name } }
        } ?? []
        var released: [String] = []
        let result = try writeRecordingHistory({ (outcome: (count: Int, ids: [ManagedObjectID])) in
            outcome.ids.map { HistoryEntry.Change(type: .update, entityNumber: $0.entity.entityNumber,
                                                  primaryKey: $0.primaryKey, updatedSlots: slots) }
        }) { db in
            if !replacedColumns.isEmpty {
                let columns = replacedColumns.map { "t0.\($0)" }.joined(separator: ", ")
                released = try ExternalBinaryStorage.referencedFiles(
                    db, sql: "SELECT \(columns) FROM \(fromClause)\(whereSQL)", arguments: StatementArguments(filterArguments))
            }
            var outcome: (count: Int, ids: [ManagedObjectID])
            if !needsIDs {
                try db.executeFully(sql: sql, arguments: arguments)
                outcome = (db.changesCount, [])
            } else {
                var ids: [ManagedObjectID] = []
                try db.stepRows(sql: sql, arguments: arguments) { handle in
                    ids.append(ManagedObjectID(entity: model.entity(number: Int(sqlite3_column_int64(handle, 0))) ?? entity,
                                               primaryKey: sqlite3_column_int64(handle, 1), store: identity))
                }
                outcome = (ids.count, ids)
            }
            // Rows of other entities whose derived attributes read the updated ones (BatchDerivations).
            for statement in followUps { try db.executeFully(sql: statement.sql, arguments: statement.arguments) }
            return outcome
        }
        externalStorage?.remove(released)
        return result
    }

    /// Deletes rows and keeps the store consistent: cascades, nulls foreign keys that pointed at them,
    /// clears join rows, and refuses the whole delete when a `deny` rule would break.
    /// `initial` lists the objects to delete, or `selection` names the rows.
    package func batchDelete(initial: [ManagedObjectID]?, entity: EntityDescription, selection: BatchSelection,
                     needsIDs: Bool = true,
                     followUps: [(sql: String, arguments: [StoreValue])] = [])
        throws -> (count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID]) {
        let whereSQL = selection.whereSQL, filterArguments = selection.arguments
        let model = self.model, identity = self.identity
        let table = entity.tableName
        // Deletes reach the history through its delete triggers; rows whose foreign keys were cleared are
        // updates (which key changed is not tracked here: their changed keys are left unknown).
        let updatedByNullifying: ((count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID])) -> [HistoryEntry.Change] = { outcome in
            outcome.updated.map { HistoryEntry.Change(type: .update, entityNumber: $0.entity.entityNumber, primaryKey: $0.primaryKey) }
        }
        // Derived attributes reading related rows (BatchDerivations) are rewritten once the rows are gone.
        func runFollowUps(_ db: Database) throws {
            for statement in followUps { try db.executeFully(sql: statement.sql, arguments: statement.arguments) }
        }
        // Files of the deleted rows' values kept outside them: listed in the transaction, removed after it.
        // A batch that fails removes nothing.
        var released: [String] = [], committed = false
        defer { if committed { externalStorage?.remove(released) } }
        func noteReleasedFiles(_ db: Database, from table: String, _ rows: String, _ arguments: StatementArguments) throws {
            guard let storage = externalStorage else { return }
            let columns = storage.columnNames(ofTable: table, schema: schema)
            guard !columns.isEmpty else { return }
            released += try ExternalBinaryStorage.referencedFiles(
                db, sql: "SELECT \(columns.map { "t0.\($0)" }.joined(separator: ", ")) FROM \(table) AS t0\(rows)",
                arguments: arguments)
        }
        if model.deletesAlone(fromTable: table) && initial == nil {
            // Nothing points in or out: one DELETE, as raw SQL would do it.
            let outcome = try writeRecordingHistory(updatedByNullifying) { db in
                try noteReleasedFiles(db, from: table, whereSQL, StatementArguments(filterArguments))
                guard needsIDs else {
                    try db.executeFully(sql: selection.deleteStatement(table: table, returningIDs: false), arguments: filterArguments)
                    let count = db.changesCount
                    try runFollowUps(db)
                    return (count, [], [])
                }
                var deleted: [ManagedObjectID] = []
                try db.stepRows(sql: selection.deleteStatement(table: table, returningIDs: true),
                                arguments: filterArguments) { handle in
                    deleted.append(ManagedObjectID(entity: model.entity(number: Int(sqlite3_column_int64(handle, 0))) ?? entity,
                                                   primaryKey: sqlite3_column_int64(handle, 1), store: identity))
                }
                try runFollowUps(db)
                return (deleted.count, deleted, [])
            }
            committed = true
            return outcome
        }
        let outcome = try writeRecordingHistory(updatedByNullifying) { db in
            let session = SQLiteSession(db: db)
            let cascade = try BatchDeleteCascade(model: model, identity: identity, session: session)
                .run(initial: initial, entity: entity, selection: selection) { table, list, keys in
                    try noteReleasedFiles(db, from: table, " WHERE t0.Z_PK IN \(list)", StatementArguments(keys))
                    try session.execute("DELETE FROM \(table) WHERE Z_PK IN \(list)", keys)
                }
            try runFollowUps(db)
            return (cascade.deleted.count, cascade.deleted, cascade.nullified)
        }
        committed = true
        return outcome
    }

    /// Inserts full rows (Z_PK..., table column order) after reserving their keys, in one transaction.
    func batchInsert(entity: EntityDescription, rows: [RowValues]) throws -> [ManagedObjectID] {
        try batchInsert(entity: entity, count: rows.count, returningIDs: true) { $1 = rows[$0] }.ids
    }

    /// Inserts `count` rows made one at a time by `fillRow` (which may throw: the transaction then rolls
    /// back and nothing is inserted), after reserving their keys in one block. `fillRow` gets the row index
    /// and one buffer of the table's width, reused from row to row (its first column is overwritten with
    /// the reserved key).
    package func batchInsert(entity: EntityDescription, count: Int, returningIDs: Bool,
                     fillRow: (Int, inout RowValues) throws -> Void) throws -> (count: Int, ids: [ManagedObjectID]) {
        let width = schema.table(named: entity.tableName)?.columns.count ?? 0
        var row = RowValues(repeating: .null, count: width)
        // Values kept in external binary storage form are written inline (the row has no save's files).
        let external = externalStorage?.columns(forTable: entity.tableName)?.columns ?? []
        return try batchInsert(entity: entity, count: count, returningIDs: returningIDs) { offset, key, insert in
            try fillRow(offset, &row)
            for column in external { row[column.index] = ExternalBinaryStorage.inlineForm(row[column.index]) }
            row[0] = key.storeValue
            try insert.bind(row)
        }
    }

    /// Inserts `count` rows whose values `bindRow` binds straight to the table's INSERT (parameters in
    /// table column order, `Z_PK` first), after reserving their keys in one block, in one transaction.
    /// `bindRow` gets the row index and its reserved key; it must bind every parameter it ever binds on
    /// every row (bindings outlive a row). When it throws, the transaction rolls back and nothing is
    /// inserted.
    ///
    /// For an entity with uniqueness constraints (its own or a super-entity's) the insert is an upsert, as
    /// Core Data's batch insert is: a row whose constraint values a stored row (or an earlier row of the
    /// batch) has updates that row's attributes instead, which keeps its key; the IDs returned and the
    /// history name that row.
    package func batchInsert(entity: EntityDescription, count: Int, returningIDs: Bool,
                     bindRow: (_ index: Int, _ key: Int64, _ insert: BoundWrite) throws -> Void)
        throws -> (count: Int, ids: [ManagedObjectID]) {
        guard let table = schema.table(named: entity.tableName), count > 0 else { return (0, []) }
        let identity = self.identity
        let upsert = upsertClause(for: entity)
        var firstKey: Int64 = 0
        // Under an upsert, each row's key as written and whether it was new.
        var written: [(key: Int64, inserted: Bool)] = []
        let attributeSlots = entity.storage.indices.filter {
            if case .attribute = entity.storage[$0] { return true } else { return false }
        }
        // An upsert replaces stored values: the files of those in external storage go after the commit.
        let replacedColumns = upsert == nil ? [] : externalStorage?.columnNames(ofTable: table.name, schema: schema) ?? []
        var released: [String] = []
        let result: (count: Int, ids: [ManagedObjectID]) = try writeRecordingHistory({ _ in
            guard upsert != nil else {
                return (0..<count).map { HistoryEntry.Change(type: .insert, entityNumber: entity.entityNumber,
                                                             primaryKey: firstKey + Int64($0)) }
            }
            return written.map {
                HistoryEntry.Change(type: $0.inserted ? .insert : .update, entityNumber: entity.entityNumber,
                                    primaryKey: $0.key, updatedSlots: $0.inserted ? [] : attributeSlots)
            }
        }) { db in
            let first = try reservePrimaryKeys(root: entity.rootEntity, count: count, in: db)
            firstKey = first
            if !replacedColumns.isEmpty {
                try ExternalBinaryStorage.noteUpsertReplacements(db, table: table.name, columns: replacedColumns)
            }
            let insert = try BoundWrite(db, sql: insertSQL(table: table.name) + (upsert ?? ""))
            var ids: [ManagedObjectID] = []
            if returningIDs { ids.reserveCapacity(count) }
            if upsert != nil { written.reserveCapacity(count) }
            for offset in 0..<count {
                var key = first + Int64(offset)
                try bindRow(offset, key, insert)
                if upsert != nil {
                    let reserved = key
                    key = try insert.stepReturningInteger() ?? reserved
                    written.append((key, key == reserved))
                } else {
                    try insert.step()
                }
                if returningIDs { ids.append(ManagedObjectID(entity: entity, primaryKey: key, store: identity)) }
            }
            if !replacedColumns.isEmpty { released = try ExternalBinaryStorage.filesReplacedByUpserts(db, table: table.name) }
            return (count, ids)
        }
        externalStorage?.remove(released)
        return result
    }

    /// The `ON CONFLICT … DO UPDATE` clauses (one per uniqueness constraint that covers the entity, each
    /// naming its unique index's columns and partial WHERE) that make a batch insert an upsert, with a
    /// `RETURNING Z_PK` for the row written; nil for an entity without constraints. The update writes the
    /// entity's attribute columns and moves `Z_OPT` on; the stored row's key and entity stay.
    private func upsertClause(for entity: EntityDescription) -> String? {
        guard let plan = BatchUpsertPlan(entity: entity, schema: schema) else { return nil }
        // Names come from the schema (checked plain names).
        let clauses = plan.constraints.map { constraint in
            " ON CONFLICT (" + constraint.columns.joined(separator: ", ") + ")"
                + (constraint.whereClause.map { " WHERE " + $0 } ?? "")
        }
        let assignments = plan.updatedColumns.map { "\($0) = excluded.\($0)" } + ["Z_OPT = Z_OPT + 1"]
        let update = " DO UPDATE SET " + assignments.joined(separator: ", ")
        return clauses.map { $0 + update }.joined() + " RETURNING Z_PK"
    }
}
