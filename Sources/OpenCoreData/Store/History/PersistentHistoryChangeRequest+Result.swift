import Foundation

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
