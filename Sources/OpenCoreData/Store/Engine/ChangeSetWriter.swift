import Foundation

/// A save's change set written into a store's tables, once for every backend: updates and deletes checked
/// against each row's version (`Z_OPT`), then the new rows, then the relationship rows
/// (``RelationshipRowWriter``). Runs inside the transaction the store opened on `session`.
///
/// Rows whose version moved on since the context read them are conflicts. Each attempt runs in a savepoint:
/// an attempt that finds conflicts is undone, the rows as the store holds them now go to the merge policy,
/// and its change set is written instead, all in the same transaction.
package struct ChangeSetWriter<Session: SQLSession> {
    /// What was written: the change set that went in (the merge policy's, after conflicts) and, when
    /// ``readsTombstones``, the preserved values of each deleted row.
    package struct Written {
        package var changes: StoreChangeSet
        package var tombstones: [ManagedObjectID: [StoreValue]]
    }

    let schema: StoreSchema
    let session: Session
    /// The save's `_EXTERNAL_DATA` files, for a store that keeps large values outside its rows.
    let files: ExternalBinaryStorage.SaveFiles?
    /// Whether a delete reads the row's preserved attributes as it deletes it (`RETURNING`), for a store that
    /// records history rows itself rather than through delete triggers.
    let readsTombstones: Bool

    /// A writer for a store that keeps every value in its rows.
    package init(schema: StoreSchema, session: Session, readsTombstones: Bool) {
        self.init(schema: schema, session: session, files: nil, readsTombstones: readsTombstones)
    }

    init(schema: StoreSchema, session: Session, files: ExternalBinaryStorage.SaveFiles?, readsTombstones: Bool) {
        self.schema = schema
        self.session = session
        self.files = files
        self.readsTombstones = readsTombstones
    }

    /// Writes `changes`. Without `resolve`, conflicts undo the attempt and are thrown together; with it, the
    /// conflicting rows (read by `currentRow` after the attempt is undone, so a store can lock them) go to
    /// `resolve`, whose change set is tried next. The bound of four attempts only guards against a resolver
    /// that keeps producing conflicts.
    ///
    /// - Throws: ``StoreConflicts`` as above; what the session, `currentRow` or `resolve` throw.
    package func apply(_ changes: StoreChangeSet,
                       resolvingConflicts resolve: (([StoreConflict]) throws -> StoreChangeSet)?,
                       currentRow: (ManagedObjectID) throws -> RowValues?) throws -> Written {
        var attempt = changes
        var conflicts: [StoreConflict] = []
        for round in 0..<4 {
            let mark = files?.mark
            do {
                let tombstones = try session.savepoint {
                    var tombstones: [ManagedObjectID: [StoreValue]] = [:]
                    let found = try write(attempt, tombstones: &tombstones)
                    if !found.isEmpty { throw AttemptConflicts(found: found) }
                    return tombstones
                }
                return Written(changes: attempt, tombstones: tombstones)
            } catch let undone as AttemptConflicts {
                if let files, let mark { files.rollBack(to: mark) }
                conflicts = try undone.found.map { id, expectedVersion in
                    StoreConflict(id: id, expectedVersion: expectedVersion, currentRow: try currentRow(id))
                }
            }
            guard let resolve, round < 3 else { break }
            attempt = try resolve(conflicts)
        }
        throw StoreConflicts(conflicts: conflicts)
    }

    /// Writes one attempt. Returns the rows whose version moved on (before writing any insert) instead of
    /// finishing when there are some; the caller undoes the attempt.
    private func write(_ changes: StoreChangeSet,
                       tombstones: inout [ManagedObjectID: [StoreValue]]) throws -> [(ManagedObjectID, Int64)] {
        var conflicts: [(ManagedObjectID, Int64)] = []
        var external = ExternalColumnsByTable(files: files)
        // Updates come in key order, mostly of one shape (table, columns, version check): the statement is
        // prepared when the shape changes, not per row.
        var updateWrite: Session.PreparedWrite?
        var updateShape: (table: String, columns: [Int], force: Bool)?
        for update in changes.updates {
            if updateShape == nil || updateShape!.table != update.table || updateShape!.force != update.force
                || !update.values.lazy.map(\.column).elementsEqual(updateShape!.columns) {
                let columns = update.values.map(\.column)
                let table = schema.table(named: update.table)!
                var assignments = columns.map { "\(table.columns[$0].name) = ?" }
                assignments.append("Z_OPT = Z_OPT + 1")
                let sql = "UPDATE \(update.table) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ?"
                    + (update.force ? "" : " AND Z_OPT = ?")
                updateWrite = try session.prepareWrite(sql)
                updateShape = (update.table, columns, update.force)
            }
            let write = updateWrite!
            var values = update.values
            var replaced: [StoreValue] = []
            if let files, let columns = external.columns(of: update.table) {
                (values, replaced) = try encodeExternal(values, of: update, columns, files)
            }
            var index: Int32 = 1
            for (_, value) in values {
                try write.bind(value, at: index)
                index += 1
            }
            try write.bind(update.id.primaryKey.storeValue, at: index)
            if !update.force { try write.bind(update.expectedVersion.storeValue, at: index + 1) }
            if try write.step() == 0 {
                conflicts.append((update.id, update.expectedVersion))
            } else {
                for value in replaced { files?.release(value) }
            }
        }
        for delete in changes.deletes {
            if try !self.delete(delete, external: &external, tombstones: &tombstones) {
                conflicts.append((delete.id, delete.expectedVersion))
            }
        }
        if !conflicts.isEmpty { return conflicts }
        try insert(changes.inserts, external: &external)
        try RelationshipRowWriter.write(changes, in: session)
        return []
    }

    /// Deletes one row if its version is the expected one; false when it is not (or the row is gone).
    private func delete(_ delete: StoreChangeSet.Delete, external: inout ExternalColumnsByTable,
                        tombstones: inout [ManagedObjectID: [StoreValue]]) throws -> Bool {
        var stored: [StoreValue] = []
        if let columns = external.columns(of: delete.table) {
            stored = try storedValues(of: columns, primaryKey: delete.id.primaryKey)
        }
        let arguments = [delete.id.primaryKey.storeValue, delete.expectedVersion.storeValue]
        let sql = "DELETE FROM \(delete.table) WHERE Z_PK = ? AND Z_OPT = ?"
        let preserved = readsTombstones ? HistoryTables.preservedColumns(of: delete.id.entity) : []
        if !preserved.isEmpty {
            guard let values = try session.rows(sql + " RETURNING " + preserved.joined(separator: ", "), arguments).first else {
                return false
            }
            tombstones[delete.id] = values
        } else {
            let write = try session.prepareWrite(sql)
            for (index, value) in arguments.enumerated() { try write.bind(value, at: Int32(index + 1)) }
            if try write.step() == 0 { return false }
        }
        for value in stored { files?.release(value) }
        return true
    }

    /// Hands the new rows to one inserter per table, looked up only when the table differs from the previous
    /// row's, and finishes the inserters in the order their tables first came.
    private func insert(_ inserts: [StoreChangeSet.Insert], external: inout ExternalColumnsByTable) throws {
        var inserters: [String: Session.RowInserter] = [:]
        var order: [Session.RowInserter] = []
        var current: Session.RowInserter?
        var currentTable: String?
        for insert in inserts {
            if insert.table != currentTable {
                if let known = inserters[insert.table] {
                    current = known
                } else {
                    let table = schema.table(named: insert.table)!
                    let made = try session.rowInserter(table: insert.table, columns: table.columns.map(\.name))
                    inserters[insert.table] = made
                    order.append(made)
                    current = made
                }
                currentTable = insert.table
            }
            if let files, let columns = external.columns(of: insert.table) {
                var row = insert.row
                for column in columns.columns {
                    row[column.index] = try files.encode(row[column.index], entity: insert.id.entity.name, key: column.key)
                }
                try current!.insert(row)
            } else {
                try current!.insert(insert.row)
            }
        }
        for inserter in order { try inserter.finish() }
    }

    /// An update's values with those of flagged columns encoded (new files written for large ones), and
    /// the values those columns hold now, whose files the update lets go of once it is committed.
    private func encodeExternal(_ values: [(column: Int, value: StoreValue)], of update: StoreChangeSet.Update,
                                _ external: ExternalBinaryStorage.TableColumns, _ files: ExternalBinaryStorage.SaveFiles)
        throws -> ([(column: Int, value: StoreValue)], [StoreValue]) {
        let touched = external.columns.filter { column in values.contains { $0.column == column.index } }
        guard !touched.isEmpty else { return (values, []) }
        let replaced = try storedValues(of: ExternalBinaryStorage.TableColumns(storage: external.storage, table: external.table,
                                                                              columns: touched),
                                        primaryKey: update.id.primaryKey)
        var encoded = values
        for position in encoded.indices {
            guard let column = touched.first(where: { $0.index == encoded[position].column }) else { continue }
            encoded[position].value = try files.encode(encoded[position].value, entity: update.id.entity.name, key: column.key)
        }
        return (encoded, replaced)
    }

    /// The stored (still encoded) values of `external`'s columns in one row; empty when the row is gone.
    private func storedValues(of external: ExternalBinaryStorage.TableColumns, primaryKey: Int64) throws -> [StoreValue] {
        guard let table = schema.table(named: external.table) else { return [] }
        let columns = external.columns.map { table.columns[$0.index].name }.joined(separator: ", ")
        return try session.rows("SELECT \(columns) FROM \(table.name) WHERE Z_PK = ?", [primaryKey.storeValue]).first ?? []
    }
}

/// The columns each table keeps in `_EXTERNAL_DATA` form, looked up once per table and save.
private struct ExternalColumnsByTable {
    let files: ExternalBinaryStorage.SaveFiles?
    private var known: [String: ExternalBinaryStorage.TableColumns?] = [:]

    init(files: ExternalBinaryStorage.SaveFiles?) { self.files = files }

    mutating func columns(of table: String) -> ExternalBinaryStorage.TableColumns? {
        guard let files else { return nil }
        if let found = known[table] { return found }
        let found = files.storage.columns(forTable: table)
        known[table] = found
        return found
    }
}

/// Conflicts found by one attempt, thrown to undo its savepoint.
private struct AttemptConflicts: Error {
    var found: [(ManagedObjectID, Int64)]
}
