import Foundation
import GRDB
import Synchronization

/// Writes a store's history, inside the commit it describes: the transaction row, one change row per
/// object, interned names. Owned by a store opened with history tracking.
package final class HistoryRecorder: Sendable {
    private let model: ManagedObjectModel
    /// The store's values kept outside rows: tombstones hold their bytes, not the stored form.
    private let externalStorage: ExternalBinaryStorage?
    /// Whether this store's writing connection has its tables and delete triggers (set once per store).
    private let prepared = Atomic<Bool>(false)
    /// The transactions this store's own commits recorded, so its coordinator can tell remote commits
    /// from its own.
    let recordedTransactions = Mutex<Set<Int64>>([])

    /// Whether `recordedTransactions` is kept (only a store watched for remote changes reads it back).
    private let remembersOwnTransactions: Bool

    init(model: ManagedObjectModel, externalStorage: ExternalBinaryStorage?, remembersOwnTransactions: Bool) {
        self.model = model
        self.externalStorage = externalStorage
        self.remembersOwnTransactions = remembersOwnTransactions
    }

    /// The transactions this store recorded up to `number`, forgotten as they are handed out (the
    /// coordinator asks once per transaction it reads back).
    func takeRecorded(through number: Int64) -> Set<Int64> {
        recordedTransactions.withLock { recorded in
            let taken = recorded.filter { $0 <= number }
            recorded.subtract(taken)
            return taken
        }
    }

    /// Before a commit's statements: the tables exist and deletes are captured.
    func prepare(_ db: Database) throws {
        if !prepared.load(ordering: .acquiring) {
            try HistoryTables.create(in: db, model: model)
            try HistoryTables.installDeleteCapture(in: db, model: model)
            prepared.store(true, ordering: .releasing)
        }
        try db.cachedStatement(sql: "DELETE FROM \(HistoryTables.deletedRowsTable)").execute()
    }

    /// After a commit's statements, before it commits: writes its transaction and changes. Returns the
    /// transaction's number, or nil when the commit changed nothing.
    @discardableResult
    func record(_ entry: HistoryEntry, in db: Database) throws -> Int64? {
        var deleted: [(entity: Int, key: Int64, tombstone: [StoreValue])] = []
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT * FROM \(HistoryTables.deletedRowsTable)"))
        while let row = try rows.next() {
            deleted.append((row[0], row[1], (2..<max(2, row.count)).map { row[$0] as StoreValue }))
        }
        try db.cachedStatement(sql: "DELETE FROM \(HistoryTables.deletedRowsTable)").execute()
        let changeCount = entry.changes.count + deleted.count
        guard changeCount > 0 else { return nil }

        let transaction = try HistoryTransactionWriter.insertTransaction(author: entry.author, contextName: entry.contextName,
                                                                        in: SQLiteSession(db: db))

        var key = try HistoryTransactionWriter.reserveKeys(entity: HistoryTables.changeEntity, count: changeCount, in: SQLiteSession(db: db))
        try HistoryChangeRows.write(entry.changes, firstKey: key, transaction: transaction, in: db)
        key += Int64(entry.changes.count)
        for row in deleted {
            let entity = model.entity(number: row.entity)
            let preserved = entity.map { HistoryTables.preservedAttributes(of: $0) } ?? []
            var tombstone = Array(row.tombstone.prefix(preserved.count))
            if let externalStorage, let entity {
                tombstone = try externalStorage.tombstone(tombstone, of: preserved, entity: entity.name, primaryKey: row.key)
            }
            let columns = tombstone.indices.map { ", " + HistoryTables.tombstoneColumn($0) }.joined()
            let placeholders = String(repeating: ", ?", count: tombstone.count)
            try db.execute(sql: """
                INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID\(columns))
                VALUES (?, \(HistoryTables.changeEntity), 1, ?, ?, ?, ?\(placeholders))
                """, arguments: StatementArguments([key.storeValue, PersistentHistoryChangeType.delete.rawValue.storeValue,
                                                     row.entity.storeValue, row.key.storeValue,
                                                     transaction.storeValue] + tombstone))
            key += 1
        }
        if remembersOwnTransactions { recordedTransactions.withLock { _ = $0.insert(transaction) } }
        return transaction
    }
}
