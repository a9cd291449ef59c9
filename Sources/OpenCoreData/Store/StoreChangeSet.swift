import Foundation
import GRDB

/// Everything one save writes, in store terms: rows to insert, update and delete, join rows, and
/// foreign keys on other tables. Built by the context, written by the store in one transaction.
package struct StoreChangeSet {
    package struct Insert {
        package var id: ManagedObjectID
        package var table: String
        package var row: RowValues
    }

    package struct Update {
        package var id: ManagedObjectID
        package var table: String
        package var expectedVersion: Int64
        /// Column index in the table → new value.
        package var values: [(column: Int, value: StoreValue)]
        /// Skip the version check (the overwrite merge policy).
        package var force = false
    }

    package struct Delete {
        package var id: ManagedObjectID
        package var table: String
        package var expectedVersion: Int64
    }

    package struct JoinRow: Hashable {
        package var table: String
        package var sourceColumn: String
        package var destinationColumn: String
        package var source: Int64
        package var destination: Int64
    }

    /// The position of a destination in an ordered many-to-many relationship, kept in its join row.
    package struct JoinOrderUpdate {
        package var table: String
        package var orderColumn: String
        package var sourceColumn: String
        package var destinationColumn: String
        package var source: Int64
        package var destination: Int64
        package var position: Int64
    }

    /// A foreign key or order column on another object's row (hidden to-many keys, ordered positions).
    package struct ForeignKeyUpdate {
        package var table: String
        package var column: String
        package var primaryKey: Int64
        package var value: StoreValue
    }

    package var inserts: [Insert] = []
    package var updates: [Update] = []
    package var deletes: [Delete] = []
    package var joinInserts: Set<JoinRow> = []
    package var joinDeletes: Set<JoinRow> = []
    /// Written after the join rows are inserted.
    package var joinOrderUpdates: [JoinOrderUpdate] = []
    /// Join tables to clear for a deleted object: (table, column, key).
    package var joinClears: [(table: String, column: String, key: Int64)] = []
    package var foreignKeyUpdates: [ForeignKeyUpdate] = []
    /// Hidden foreign keys to clear when their owner is deleted: (table, column, owner key).
    package var foreignKeyClears: [(table: String, column: String, key: Int64)] = []
}

/// A row whose version moved on in the store since the context read it.
package struct StoreConflict: Error {
    package var id: ManagedObjectID
    package var expectedVersion: Int64
    /// The row in the store now; nil when it was deleted.
    package var currentRow: RowValues?

    package init(id: ManagedObjectID, expectedVersion: Int64, currentRow: RowValues?) {
        self.id = id
        self.expectedVersion = expectedVersion
        self.currentRow = currentRow
    }
}

package struct StoreConflicts: Error {
    package var conflicts: [StoreConflict]

    package init(conflicts: [StoreConflict]) { self.conflicts = conflicts }
}

extension SQLiteStore {
    /// Writes a change set in one transaction and returns what it wrote.
    ///
    /// Rows whose version moved on since they were read are conflicts. Without `resolve`, everything is rolled
    /// back and they are thrown together as `StoreConflicts`. With it, the conflicting rows as the store holds
    /// them now go to `resolve` (the merge policy), whose change set is written instead, all inside this
    /// transaction: it holds the write lock, so no other writer can move a row again between the resolution
    /// and the write, and a merging policy cannot lose to a busy store.
    ///
    /// With history tracking on, `history` lists the save's inserts and updates for the store's history,
    /// recorded in the same transaction.
    @discardableResult
    package func apply(_ changes: StoreChangeSet, history: [HistoryEntry.Change] = [],
               resolvingConflicts resolve: (([StoreConflict]) throws -> StoreChangeSet)? = nil) throws -> StoreChangeSet {
        // Values kept outside their rows: new files are written before the commit, the files of replaced
        // and deleted values removed only after it; a failed save removes its new files instead.
        let files = externalStorage.map { ExternalBinaryStorage.SaveFiles(storage: $0) }
        let written: StoreChangeSet
        do {
            written = try writeRecordingHistory({ _ in history }) { db in
                var attempt = changes
                var conflicts: [StoreConflict] = []
                // Under the lock, one resolution normally settles it; the bound only guards against a resolver
                // that keeps producing conflicts.
                for round in 0..<4 {
                    let mark = files?.mark
                    try db.inSavepoint {
                        conflicts = try write(attempt, in: db, files: files)
                        return conflicts.isEmpty ? .commit : .rollback
                    }
                    if conflicts.isEmpty { return attempt }
                    if let files, let mark { files.rollBack(to: mark) }
                    guard let resolve, round < 3 else { break }
                    attempt = try resolve(conflicts)
                }
                throw StoreConflicts(conflicts: conflicts)
            }
        } catch {
            files?.rollBack()
            throw error
        }
        files?.commit()
        return written
    }

    /// Writes a change set inside the current transaction. Returns the conflicts (before writing any insert)
    /// instead of finishing when there are some; the caller rolls back.
    private func write(_ changes: StoreChangeSet, in db: Database,
                       files: ExternalBinaryStorage.SaveFiles?) throws -> [StoreConflict] {
        var conflicts: [StoreConflict] = []
        // Tables with columns in external binary storage form, looked up once per table.
        var externalByTable: [String: ExternalBinaryStorage.TableColumns?] = [:]
        func external(_ table: String) -> ExternalBinaryStorage.TableColumns? {
            guard let files else { return nil }
            if let known = externalByTable[table] { return known }
            let found = files.storage.columns(forTable: table)
            externalByTable[table] = found
            return found
        }
        // Updates come in key order, mostly of one shape (table, columns, version check): the statement
        // is looked up when the shape changes, not per row.
        var updateWrite: BoundWrite?
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
                updateWrite = try BoundWrite(db, sql: sql)
                updateShape = (update.table, columns, update.force)
            }
            let write = updateWrite!
            var values = update.values
            var replaced: [StoreValue] = []
            if let files, let external = external(update.table) {
                (values, replaced) = try encodeExternal(values, of: update, external, files, in: db)
            }
            var index: Int32 = 1
            for (_, value) in values {
                try write.bind(value, at: index)
                index += 1
            }
            try write.bind(update.id.primaryKey.storeValue, at: index)
            if !update.force { try write.bind(update.expectedVersion.storeValue, at: index + 1) }
            if try write.step() == 0 {
                conflicts.append(StoreConflict(id: update.id, expectedVersion: update.expectedVersion,
                                               currentRow: try currentRow(update.id, in: db)))
            } else {
                for value in replaced { files?.release(value) }
            }
        }
        for delete in changes.deletes {
            var stored: [StoreValue] = []
            if let external = external(delete.table) {
                stored = try storedValues(of: external, primaryKey: delete.id.primaryKey, in: db)
            }
            let changed = try db.executeBound(sql: "DELETE FROM \(delete.table) WHERE Z_PK = ? AND Z_OPT = ?",
                                              [delete.id.primaryKey.storeValue, delete.expectedVersion.storeValue])
            if changed == 0 {
                conflicts.append(StoreConflict(id: delete.id, expectedVersion: delete.expectedVersion,
                                               currentRow: try currentRow(delete.id, in: db)))
            } else {
                for value in stored { files?.release(value) }
            }
        }
        if !conflicts.isEmpty { return conflicts }
        // One statement per table, looked up only when the table differs from the previous row's.
        var insertWrites: [String: BoundWrite] = [:]
        var insertWrite: BoundWrite?
        var insertTable: String?
        for insert in changes.inserts {
            if insert.table != insertTable {
                if let known = insertWrites[insert.table] {
                    insertWrite = known
                } else {
                    let made = try BoundWrite(db, sql: insertSQL(table: insert.table))
                    insertWrites[insert.table] = made
                    insertWrite = made
                }
                insertTable = insert.table
            }
            if let files, let external = external(insert.table) {
                var row = insert.row
                for column in external.columns {
                    row[column.index] = try files.encode(row[column.index], entity: insert.id.entity.name, key: column.key)
                }
                try insertWrite!.bind(row)
            } else {
                try insertWrite!.bind(insert.row)
            }
            try insertWrite!.step()
        }
        try RelationshipRowWriter.write(changes, in: SQLiteSession(db: db))
        return []
    }

    /// An update's values with those of flagged columns encoded (new files written for large ones), and
    /// the values those columns hold now, whose files the update lets go of once it is committed.
    private func encodeExternal(_ values: [(column: Int, value: StoreValue)], of update: StoreChangeSet.Update,
                                _ external: ExternalBinaryStorage.TableColumns, _ files: ExternalBinaryStorage.SaveFiles,
                                in db: Database) throws -> ([(column: Int, value: StoreValue)], [StoreValue]) {
        let touched = external.columns.filter { column in values.contains { $0.column == column.index } }
        guard !touched.isEmpty else { return (values, []) }
        let replaced = try storedValues(of: ExternalBinaryStorage.TableColumns(storage: external.storage, table: external.table,
                                                                              columns: touched),
                                        primaryKey: update.id.primaryKey, in: db)
        var encoded = values
        for position in encoded.indices {
            guard let column = touched.first(where: { $0.index == encoded[position].column }) else { continue }
            encoded[position].value = try files.encode(encoded[position].value, entity: update.id.entity.name, key: column.key)
        }
        return (encoded, replaced)
    }

    /// The stored (still encoded) values of `external`'s columns in one row; empty when the row is gone.
    private func storedValues(of external: ExternalBinaryStorage.TableColumns, primaryKey: Int64,
                              in db: Database) throws -> [StoreValue] {
        guard let table = schema.table(named: external.table) else { return [] }
        let columns = external.columns.map { table.columns[$0.index].name }.joined(separator: ", ")
        guard let row = try Row.fetchOne(db, sql: "SELECT \(columns) FROM \(table.name) WHERE Z_PK = ?",
                                         arguments: [primaryKey]) else { return [] }
        return (0..<row.count).map { row[$0] as StoreValue }
    }

    /// `INSERT INTO table (every column) VALUES (?, …)`: one row in table-column order.
    func insertSQL(table name: String) -> String {
        let table = schema.table(named: name)!
        let columns = table.columns.map(\.name).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
        return "INSERT INTO \(name) (\(columns)) VALUES (\(placeholders))"
    }

    private func currentRow(_ id: ManagedObjectID, in db: Database) throws -> RowValues? {
        guard let table = schema.table(named: id.entity.tableName) else { return nil }
        var found: RowValues?
        try db.fetchRowValues(sql: "SELECT \(selectList(for: table)) FROM \(table.name) t0 WHERE t0.Z_PK = ?",
                              arguments: [id.primaryKey.storeValue], columnCount: table.columns.count,
                              external: externalStorage?.columns(forTable: table.name)) { found = $0 }
        return found
    }
}
