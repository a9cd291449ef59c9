import Foundation

/// The rows every persistent-history transaction starts with, written once for every store: its
/// `ATRANSACTION` row, the names it refers to in `ATRANSACTIONSTRING`, and the keys both take from
/// `Z_PRIMARYKEY` (docs/HISTORY.md). The changes themselves are each store's to write: SQLite reads deletes
/// from its triggers' table, PostgreSQL sends many change rows a statement.
package enum HistoryTransactionWriter {
    /// Inserts a transaction row by `author` under `contextName`, in this program and process, now, and
    /// returns its number. The history tables must exist.
    ///
    /// Keys are taken in the same order by every writer (the transaction's number first, held to commit on a
    /// server, then the names'), so two writers never wait on each other in a cycle.
    ///
    /// - Throws: what the session throws; ``StoreError/corrupt(path:reason:)`` when `Z_PRIMARYKEY` has no
    ///   row for the history's entities.
    package static func insertTransaction(author: String?, contextName: String?, in session: some SQLSession) throws -> Int64 {
        let transaction = try reserveKeys(entity: HistoryTables.transactionEntity, count: 1, in: session)
        let names = try [author, HistoryEntry.processName, contextName, HistoryEntry.processID]
            .map { try intern($0, in: session) }
        try session.execute("""
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
            VALUES (?, ?, 1, ?, ?, ?, ?, ?)
            """, [transaction.storeValue, HistoryTables.transactionEntity.storeValue]
                + names.map { $0?.storeValue ?? .null } + [Date().timeIntervalSinceReferenceDate.storeValue])
        return transaction
    }

    /// The key of `name` in `ATRANSACTIONSTRING`, adding it the first time; nil for no name.
    ///
    /// - Throws: as ``insertTransaction(author:contextName:in:)``.
    package static func intern(_ name: String?, in session: some SQLSession) throws -> Int64? {
        guard let name else { return nil }
        if let row = try session.rows("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ? LIMIT 1", [name.storeValue]).first {
            return Int64.fromStoreValue(row[0])
        }
        let key = try reserveKeys(entity: HistoryTables.stringEntity, count: 1, in: session)
        try session.execute("INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)",
                            [key.storeValue, HistoryTables.stringEntity.storeValue, name.storeValue])
        return key
    }

    /// Reserves `count` keys for the history entity numbered `entity` in `Z_PRIMARYKEY`; returns the first.
    ///
    /// - Throws: as ``insertTransaction(author:contextName:in:)``.
    package static func reserveKeys(entity: Int, count: Int, in session: some SQLSession) throws -> Int64 {
        let rows = try session.rows("UPDATE Z_PRIMARYKEY SET Z_MAX = COALESCE(Z_MAX, 0) + ? WHERE Z_ENT = ? RETURNING Z_MAX",
                                    [count.storeValue, entity.storeValue])
        guard let last = rows.first.flatMap({ Int64.fromStoreValue($0[0]) }) else {
            throw StoreError.corrupt(path: session.location, reason: "Z_PRIMARYKEY has no row for history entity \(entity)")
        }
        return last - Int64(count) + 1
    }
}
