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
                let writer = ChangeSetWriter(schema: model.schema, session: session,
                                             readsTombstones: recordsHistory && history != nil)
                let written = try writer.apply(changes, resolvingConflicts: resolve) { id in try currentRow(id, in: session) }
                if recordsHistory, var history {
                    // Deletes after the inserts and updates, as the SQLite recorder lists them.
                    history.changes += written.changes.deletes.map { delete in
                        HistoryEntry.Change(type: .delete, entityNumber: delete.id.entity.entityNumber,
                                            primaryKey: delete.id.primaryKey, tombstone: written.tombstones[delete.id] ?? [])
                    }
                    guard let number = try PostgreSQLHistory.record(history, storeIdentifier: identifier,
                                                                    channel: historyChannel, in: session) else { return written.changes }
                    // Kept even if the commit then fails: a number never committed is never reported.
                    ownTransactions.withLock { _ = $0.insert(number) }
                }
                return written.changes
            }
        }
    }

    /// The row as the store holds it now, locked until the transaction ends (read after a conflicting attempt
    /// is undone: locks taken inside a savepoint go with it); nil when it was deleted.
    private func currentRow(_ id: ManagedObjectID, in session: PostgreSQLSession) throws -> RowValues? {
        guard let table = model.schema.table(named: id.entity.tableName) else { return nil }
        let columns = table.columns.map(\.name).joined(separator: ", ")
        return try session.rows("SELECT \(columns) FROM \(table.name) WHERE Z_PK = ? FOR UPDATE", [id.primaryKey.storeValue])
            .first.map(RowValues.init(values:))
    }
}
