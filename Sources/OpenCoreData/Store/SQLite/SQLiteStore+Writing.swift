import Foundation
import GRDB

extension SQLiteStore {
    /// Writes a change set in one transaction and returns what it wrote (``ChangeSetWriter`` does the
    /// writing, with the rules it states).
    ///
    /// The transaction holds the write lock, so no other writer can move a row again between a conflict's
    /// resolution and its write, and a merging policy cannot lose to a busy store. Values kept in
    /// `_EXTERNAL_DATA`: new files are written before the commit, the files of replaced and deleted values
    /// removed only after it; a failed save removes its new files instead.
    ///
    /// With history tracking on, `history` lists the save's inserts and updates for the store's history,
    /// recorded in the same transaction (deletes are captured as they happen).
    ///
    /// - Throws: ``StoreConflicts`` when rows moved on and `resolve` is nil or cannot settle them;
    ///   ``StoreError`` when SQLite refuses a statement (nothing is written).
    @discardableResult
    package func apply(_ changes: StoreChangeSet, history: [HistoryEntry.Change] = [],
               resolvingConflicts resolve: (([StoreConflict]) throws -> StoreChangeSet)? = nil) throws -> StoreChangeSet {
        let files = externalStorage.map { ExternalBinaryStorage.SaveFiles(storage: $0) }
        let written: StoreChangeSet
        do {
            written = try writeRecordingHistory({ _ in history }) { db in
                let writer = ChangeSetWriter(schema: schema, session: SQLiteSession(db: db), files: files, readsTombstones: false)
                return try writer.apply(changes, resolvingConflicts: resolve) { id in try currentRow(id, in: db) }.changes
            }
        } catch {
            files?.rollBack()
            throw error
        }
        files?.commit()
        return written
    }

    /// `INSERT INTO table (every column) VALUES (?, …)`: one row in table-column order.
    func insertSQL(table name: String) -> String {
        let table = schema.table(named: name)!
        return SQLiteRowInserter.insertSQL(table: name, columns: table.columns.map(\.name))
    }

    /// The row as the store holds it now, its `_EXTERNAL_DATA` values left as references; nil when it was deleted.
    private func currentRow(_ id: ManagedObjectID, in db: Database) throws -> RowValues? {
        guard let table = schema.table(named: id.entity.tableName) else { return nil }
        var found: RowValues?
        try db.fetchRowValues(sql: "SELECT \(selectList(for: table)) FROM \(table.name) t0 WHERE t0.Z_PK = ?",
                              arguments: [id.primaryKey.storeValue], columnCount: table.columns.count,
                              external: externalStorage?.columns(forTable: table.name)) { found = $0 }
        return found
    }
}
