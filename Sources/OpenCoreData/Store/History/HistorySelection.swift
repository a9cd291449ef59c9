import Foundation

/// The transactions a ``PersistentHistoryChangeRequest``'s scope selects, as a condition on `ATRANSACTION`
/// (aliased `t`) with its values bound: the same statement text on every store (SQLite writes `?`, the
/// PostgreSQL store numbers them), so both stores read and prune the same transactions.
package struct HistorySelection: Sendable, Equatable {
    /// The condition, on `ATRANSACTION t`.
    package let condition: String
    /// The values of its placeholders, in order.
    package let arguments: [StoreValue]

    /// At most this many transaction numbers are bound in one condition, well under either store's limit on
    /// a statement's values; a longer list is read in several runs.
    static let numbersPerCondition = 500

    /// For a fetch: the transactions after the scope's point (after a token, committed after a date, or the
    /// listed numbers). Several selections when the list of numbers is long, in ascending order of numbers
    /// (read one after the other, they give the transactions oldest first); none for an empty list.
    package static func fetching(_ scope: PersistentHistoryChangeRequest.Scope) -> [HistorySelection] {
        switch scope {
        case .afterToken(let token):
            [HistorySelection(condition: "t.Z_PK > ?", arguments: [(token?.transactionNumber ?? 0).storeValue])]
        case .afterDate(let date):
            [HistorySelection(condition: "t.ZTIMESTAMP > ?", arguments: [date.timeIntervalSinceReferenceDate.storeValue])]
        case .transactions(let numbers):
            numbered(numbers)
        }
    }

    /// For a delete: the transactions up to the scope's point, which is inclusive ("before a token" deletes
    /// the token's transaction too; no token: every transaction), committed before a date, or the listed
    /// numbers.
    package static func deleting(_ scope: PersistentHistoryChangeRequest.Scope) -> [HistorySelection] {
        switch scope {
        case .afterToken(let token):
            [HistorySelection(condition: "t.Z_PK <= ?", arguments: [(token?.transactionNumber ?? Int64.max).storeValue])]
        case .afterDate(let date):
            [HistorySelection(condition: "t.ZTIMESTAMP < ?", arguments: [date.timeIntervalSinceReferenceDate.storeValue])]
        case .transactions(let numbers):
            numbered(numbers)
        }
    }

    private static func numbered(_ numbers: Set<Int64>) -> [HistorySelection] {
        let sorted = numbers.sorted()
        return stride(from: 0, to: sorted.count, by: numbersPerCondition).map { start in
            let part = sorted[start..<min(start + numbersPerCondition, sorted.count)]
            return HistorySelection(condition: "t.Z_PK IN (" + Array(repeating: "?", count: part.count).joined(separator: ", ") + ")",
                                    arguments: part.map(\.storeValue))
        }
    }

    /// This selection, without the transactions after `number`.
    package func through(_ number: Int64) -> HistorySelection {
        HistorySelection(condition: "(\(condition)) AND t.Z_PK <= ?", arguments: arguments + [number.storeValue])
    }

    /// The newest transaction it selects (one row, NULL when none).
    package var newestTransactionSQL: String { "SELECT MAX(t.Z_PK) FROM ATRANSACTION t WHERE \(condition)" }
    /// Deletes the changes of the transactions it selects (run before ``deleteTransactionsSQL``).
    package var deleteChangesSQL: String {
        "DELETE FROM ACHANGE WHERE ZTRANSACTIONID IN (SELECT t.Z_PK FROM ATRANSACTION t WHERE \(condition))"
    }
    /// Deletes the transactions it selects.
    package var deleteTransactionsSQL: String { "DELETE FROM ATRANSACTION AS t WHERE \(condition)" }
}
