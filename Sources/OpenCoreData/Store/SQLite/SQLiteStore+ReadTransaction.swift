import Foundation
import GRDB
import GRDBSQLite

/// SQLite's reads in one transaction, on one GRDB connection.
private struct SQLiteSnapshotReads: StoreSnapshotReads {
    let db: Database
    let storeIdentifier: String

    func dataToken(tables: [String]) throws -> String {
        try StoreBookkeeping.dataToken(storeIdentifier: storeIdentifier, tables: tables, in: SQLiteSession(db: db))
    }

    func stepRows(of query: SortKeyQuery, cancellation: CancellationFlag?, _ body: (SteppedRow) throws -> Void) throws {
        try db.forEachRow(sql: query.sql, arguments: query.arguments, cancellation: cancellation, body)
    }
}

extension SQLiteStore {
    /// Runs `body` in one read transaction (joining the one under way, if any), so everything it reads
    /// comes from one snapshot of the store.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read; what `body` throws.
    package func readInOneTransaction<T>(_ body: (StoreReadTransaction) throws -> T) throws -> T {
        let identifier = self.identifier
        return try read { db in
            let transaction = StoreReadTransaction(SQLiteSnapshotReads(db: db, storeIdentifier: identifier))
            if db.isInsideTransaction { return try body(transaction) }
            var result: T?
            try db.inTransaction(.deferred) {
                result = try body(transaction)
                return .commit
            }
            // `inTransaction` runs the closure or throws; never silently skip a read.
            guard let result else {
                throw StoreError.sqlite(code: SQLITE_ERROR, message: "the read transaction did not run", sql: nil)
            }
            return result
        }
    }
}
