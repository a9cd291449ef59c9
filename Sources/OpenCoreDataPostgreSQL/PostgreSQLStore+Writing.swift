import Foundation
import OpenCoreData

extension PostgreSQLStore {
    /// Writes a change set in one transaction and returns what it wrote: the PostgreSQL counterpart of the
    /// SQLite store's `apply`, with the same rules.
    ///
    /// Updates and deletes check the row's version (`Z_OPT`). Under PostgreSQL's READ COMMITTED isolation an
    /// update that meets a row another transaction is changing waits for it and then re-checks the version, so
    /// a concurrent edit is always a conflict, never a lost update. Conflicting rows are read `FOR UPDATE`:
    /// locked until this transaction ends, so the resolution written for them cannot lose to a third writer.
    /// Without `resolve`, everything is rolled back and the conflicts are thrown together (`StoreConflicts`);
    /// with it, the merge policy's change set is written instead, in the same transaction.
    ///
    /// With ``recordsHistory`` on and a `history` entry (the save's inserts and updates; deletes are taken from
    /// the change set), the transaction is recorded in the same database transaction and announced to
    /// listeners when it commits.
    ///
    /// - Throws: `StoreConflicts` as above; ``StoreError/uniqueConstraintFailed(path:columns:message:)`` when a uniqueness constraint's index refuses
    ///   a write (another instance saved the same values meanwhile); ``StoreError`` when the server
    ///   refuses a statement or the connection drops (nothing is written: the transaction did not commit).
    @discardableResult
    package func apply(_ changes: StoreChangeSet, history: HistoryEntry? = nil,
               resolvingConflicts resolve: (([StoreConflict]) throws -> StoreChangeSet)? = nil) throws -> StoreChangeSet {
        do {
            return try write(changes, history: history, resolvingConflicts: resolve)
        } catch let violation as PostgreSQLUniqueViolation {
            throw violation.storeError(schema: model.schema, server: displayPath)
        }
    }

    private func write(_ changes: StoreChangeSet, history: HistoryEntry?,
                       resolvingConflicts resolve: (([StoreConflict]) throws -> StoreChangeSet)?) throws -> StoreChangeSet {
        try pool.withSession { session in
            session.reportsUniqueViolations = true
            return try session.transaction {
                var attempt = changes
                var conflicts: [StoreConflict] = []
                // Under the row locks, one resolution normally settles it; the bound only guards against a
                // resolver that keeps producing conflicts.
                for round in 0..<4 {
                    do {
                        // An inner transaction is a savepoint: throwing undoes this attempt only.
                        let tombstones = try session.transaction {
                            var tombstones: [ManagedObjectID: [StoreValue]] = [:]
                            let found = try write(attempt, readingTombstones: recordsHistory && history != nil,
                                                  into: &tombstones, in: session)
                            if !found.isEmpty { throw AttemptConflicts(found: found) }
                            return tombstones
                        }
                        if recordsHistory, var history {
                            // Deletes after the inserts and updates, as the SQLite recorder lists them.
                            history.changes += attempt.deletes.map { delete in
                                HistoryEntry.Change(type: .delete, entityNumber: delete.id.entity.entityNumber,
                                                    primaryKey: delete.id.primaryKey, tombstone: tombstones[delete.id] ?? [])
                            }
                            guard let number = try PostgreSQLHistory.record(history, storeIdentifier: identifier,
                                                                            channel: historyChannel, in: session) else { return attempt }
                            // Kept even if the commit then fails: a number never committed is never reported.
                            ownTransactions.withLock { _ = $0.insert(number) }
                        }
                        return attempt
                    } catch let rolledBack as AttemptConflicts {
                        // Read after the rollback: locks taken inside a savepoint go with it.
                        conflicts = try rolledBack.found.map { id, expectedVersion in
                            StoreConflict(id: id, expectedVersion: expectedVersion,
                                          currentRow: try currentRow(id, in: session))
                        }
                    }
                    guard let resolve, round < 3 else { break }
                    attempt = try resolve(conflicts)
                }
                throw StoreConflicts(conflicts: conflicts)
            }
        }
    }

    /// Writes a change set inside the session's transaction. Returns the rows whose version moved on (before
    /// writing any insert) instead of finishing when there are some; the caller rolls back. With
    /// `readingTombstones`, each delete of an entity with preserved attributes reads their values into
    /// `tombstones` as it deletes (the history's tombstone, ``HistoryTables/preservedColumns(of:)``).
    private func write(_ changes: StoreChangeSet, readingTombstones: Bool, into tombstones: inout [ManagedObjectID: [StoreValue]],
                       in session: PostgreSQLSession) throws -> [(ManagedObjectID, Int64)] {
        var conflicts: [(ManagedObjectID, Int64)] = []
        let schema = model.schema
        for update in changes.updates {
            let table = schema.table(named: update.table)!
            var assignments = update.values.map { "\(table.columns[$0.column].name) = ?" }
            assignments.append("Z_OPT = Z_OPT + 1")
            var arguments = update.values.map(\.value)
            arguments.append(update.id.primaryKey.storeValue)
            if !update.force { arguments.append(update.expectedVersion.storeValue) }
            let sql = "UPDATE \(update.table) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = ?"
                + (update.force ? "" : " AND Z_OPT = ?")
            if try session.execute(sql, arguments) == 0 {
                conflicts.append((update.id, update.expectedVersion))
            }
        }
        for delete in changes.deletes {
            let arguments = [delete.id.primaryKey.storeValue, delete.expectedVersion.storeValue]
            let preserved = readingTombstones ? HistoryTables.preservedColumns(of: delete.id.entity) : []
            if !preserved.isEmpty {
                let returned = try session.rows("DELETE FROM \(delete.table) WHERE Z_PK = ? AND Z_OPT = ? RETURNING "
                                                + preserved.joined(separator: ", "), arguments)
                if let values = returned.first {
                    tombstones[delete.id] = values
                } else {
                    conflicts.append((delete.id, delete.expectedVersion))
                }
            } else if try session.execute("DELETE FROM \(delete.table) WHERE Z_PK = ? AND Z_OPT = ?", arguments) == 0 {
                conflicts.append((delete.id, delete.expectedVersion))
            }
        }
        if !conflicts.isEmpty { return conflicts }
        try insertRows(changes.inserts, schema: schema, in: session)
        try RelationshipRowWriter.write(changes, in: session)
        return []
    }

    /// The row as the store holds it now, locked until the transaction ends; nil when it was deleted.
    private func currentRow(_ id: ManagedObjectID, in session: PostgreSQLSession) throws -> RowValues? {
        guard let table = model.schema.table(named: id.entity.tableName) else { return nil }
        let columns = table.columns.map(\.name).joined(separator: ", ")
        return try session.rows("SELECT \(columns) FROM \(table.name) WHERE Z_PK = ? FOR UPDATE", [id.primaryKey.storeValue])
            .first.map(RowValues.init(values:))
    }
}

/// Conflicts found by one attempt, thrown to roll its savepoint back.
private struct AttemptConflicts: Error {
    var found: [(ManagedObjectID, Int64)]
}

extension PostgreSQLStore {
    /// The most rows one multi-row INSERT carries (within PostgreSQL's 65,535 parameters a statement).
    static let rowsPerInsert = 500

    /// Inserts a save's new rows, table by table (tables in the order they first come, rows in their order),
    /// many rows a statement: one round trip per ``rowsPerInsert`` rows instead of one per object (100,000
    /// objects took 24.7 s on loopback one INSERT at a time). The tables have no foreign-key constraints, so
    /// the grouping cannot change what is accepted.
    ///
    /// - Throws: ``StoreError`` when the server refuses a statement (a uniqueness violation among them).
    func insertRows(_ inserts: [StoreChangeSet.Insert], schema: StoreSchema, in session: PostgreSQLSession) throws {
        var order: [String] = []
        var byTable: [String: [StoreChangeSet.Insert]] = [:]
        for insert in inserts {
            if byTable[insert.table] == nil { order.append(insert.table) }
            byTable[insert.table, default: []].append(insert)
        }
        for tableName in order {
            let rows = byTable[tableName]!
            let table = schema.table(named: tableName)!
            let width = table.columns.count
            let columns = table.columns.map(\.name).joined(separator: ", ")
            let rowPlaceholders = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
            let perStatement = max(1, min(Self.rowsPerInsert, 60_000 / max(width, 1)))
            for start in stride(from: 0, to: rows.count, by: perStatement) {
                let part = rows[start..<min(start + perStatement, rows.count)]
                var arguments: [StoreValue] = []
                arguments.reserveCapacity(part.count * width)
                for insert in part { arguments += Array(insert.row) }
                try session.execute("INSERT INTO \(tableName) (\(columns)) VALUES "
                                    + Array(repeating: rowPlaceholders, count: part.count).joined(separator: ", "), arguments)
            }
        }
    }
}
