import Foundation
import GRDB

extension SQLiteStore {
    /// Runs a commit and, when the store tracks history, records it in the same transaction: the commit and
    /// its history rows are written together or not at all. `entry` describes the inserts and updates from
    /// the commit's result; deletes are captured as they happen.
    func writeRecordingHistory<T>(_ entry: (T) -> [HistoryEntry.Change], _ body: (Database) throws -> T) throws -> T {
        guard let history else { return try write(body) }
        let authorship = HistoryAuthorship.current
        return try write { db in
            try history.prepare(db)
            let result = try body(db)
            try history.record(HistoryEntry(author: authorship.author, contextName: authorship.contextName,
                                            changes: entry(result)), in: db)
            return result
        }
    }

    /// Runs a fetch or a delete of history. A token of another store is refused by the context
    /// (``PersistentHistoryChangeRequest/checkTokens(of:)``); a store without history tables has none to
    /// read or delete.
    /// - Throws: `StoreError` when the store cannot be read or written.
    package func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        let reader = HistoryReader(model: model, identity: identity)
        if request.operation == .delete {
            return try write { db in try reader.delete(db, scope: request.scope) }.result
        }
        let transactions = try read { db in
            var transactions: [PersistentHistoryTransaction] = []
            for selection in HistorySelection.fetching(request.scope) {
                let remaining = request.fetchLimit > 0 ? request.fetchLimit - transactions.count : 0
                if request.fetchLimit > 0 && remaining <= 0 { break }
                transactions += try reader.transactions(db, selection: selection, withChanges: request.needsChanges, limit: remaining)
            }
            return transactions
        }
        return try request.result(from: transactions)
    }

    /// The token of the newest transaction in the store's history (transaction 0 when there is none).
    /// - Throws: `StoreError` when the store cannot be read.
    package func currentHistoryToken() throws -> PersistentHistoryToken {
        let reader = HistoryReader(model: model, identity: identity)
        return PersistentHistoryToken(storeIdentifier: identifier,
                                      transactionNumber: try read { try reader.lastTransactionNumber($0) })
    }
    /// Whether the store file at `url` has persistent-history tables (written by this library or by Core
    /// Data), read without changing the file. Tools use it to keep tracking history on stores that have it.
    /// - Throws: `StoreError` when the file exists but cannot be read as SQLite.
    public static func hasPersistentHistory(at url: URL) throws -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { try HistoryTables.exist(in: $0) }
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: url.path)
        }
    }
}
