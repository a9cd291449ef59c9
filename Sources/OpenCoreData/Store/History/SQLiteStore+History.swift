import Foundation
import GRDB

/// Who is committing: the context's author and name, set around a save or a batch request so the store's
/// history can say who made each transaction without every write path passing them along.
package struct HistoryAuthorship: Sendable {
    package var author: String?
    package var contextName: String?

    @TaskLocal package static var current = HistoryAuthorship()
}

extension PersistentHistoryChangeRequest {
    /// Whether the result type shows changes, so a fetch must read them.
    package var needsChanges: Bool { resultType == .transactionsAndChanges || resultType == .changesOnly }

    /// Refuses a scope whose token belongs to another store than `store`'s history: its number would name
    /// unrelated transactions there. Checked for every store before the request runs.
    ///
    /// - Throws: ``PersistentHistoryError/tokenOfAnotherStore(token:store:)``.
    package func checkTokens(of store: any StoreBackend) throws {
        if case .afterToken(let token?) = scope, token.storeIdentifier != store.identifier {
            throw PersistentHistoryError.tokenOfAnotherStore(token: token.description, store: store.displayPath)
        }
    }

    /// This fetch's result from the transactions its scope selects (with their changes when the result type
    /// needs them): the predicates applied, then shaped by ``resultType``. Shared by every store.
    ///
    /// - Throws: what evaluating ``predicate`` or ``changePredicate`` throws.
    package func result(from transactions: [PersistentHistoryTransaction]) throws -> PersistentHistoryResult {
        var transactions = transactions
        if let predicate {
            transactions = try transactions.filter { try predicate.evaluate(with: $0) }
        }
        if let changePredicate, needsChanges {
            transactions = try transactions.map { transaction in
                try transaction.keepingChanges { try changePredicate.evaluate(with: $0) }
            }
        }
        switch resultType {
        case .transactionsAndChanges, .transactionsOnly:
            return PersistentHistoryResult(resultType: resultType, transactions: transactions, count: transactions.count)
        case .changesOnly:
            let changes = transactions.flatMap { $0.changes ?? [] }
            return PersistentHistoryResult(resultType: .changesOnly, changes: changes, count: changes.count)
        case .count:
            return PersistentHistoryResult(resultType: .count, count: transactions.count)
        case .transactionIDs:
            return PersistentHistoryResult(resultType: .transactionIDs, count: transactions.count,
                                           transactionNumbers: transactions.map(\.transactionNumber))
        case .statusOnly:
            return PersistentHistoryResult(resultType: .statusOnly, count: transactions.count)
        }
    }
}

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
