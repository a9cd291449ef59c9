import Foundation

/// A prune of history (a delete ``PersistentHistoryChangeRequest``) and what it did, the same on every
/// store: the transactions the scope selects go with their changes, but none after the oldest mark in the
/// reader registry (``HistoryReaderRegistry``), so a registered reader keeps every transaction it has not
/// seen. The store runs it inside one write transaction that also holds the registry still, so no reader
/// can move its mark between the check and the delete.
package struct HistoryPruning: Sendable, Equatable {
    /// How many transactions went.
    package var deleted = 0
    /// The registered readers that kept some of the transactions it was asked to delete (they had not seen
    /// them), by name.
    package var heldBackBy: [String] = []

    /// A prune that deleted nothing (a store without history tables).
    package init() {}

    /// The request's result: the count deleted and the readers that held some back.
    package var result: PersistentHistoryResult {
        PersistentHistoryResult(resultType: .count, count: deleted, heldBackByReaders: heldBackBy)
    }

    /// Prunes what `scope` selects for a delete, on `session` inside the store's write transaction.
    /// `readers` are the registered readers' marks (``HistoryReaderRegistry/all(in:)``).
    ///
    /// - Throws: what the session throws.
    package static func run(_ scope: PersistentHistoryChangeRequest.Scope, readers: [(name: String, seen: Int64)],
                            in session: some SQLSession) throws -> HistoryPruning {
        var selections = HistorySelection.deleting(scope)
        var pruning = HistoryPruning()
        func newest(_ selection: HistorySelection) throws -> Int64? {
            try session.rows(selection.newestTransactionSQL, selection.arguments).first.flatMap { Int64.fromStoreValue($0[0]) }
        }
        if let oldest = readers.map(\.seen).min(),
           let newestSelected = try selections.compactMap(newest).max(),
           oldest < newestSelected {
            pruning.heldBackBy = readers.filter { $0.seen < newestSelected }.map(\.name)
            selections = selections.map { $0.through(oldest) }
        }
        for selection in selections {
            try session.execute(selection.deleteChangesSQL, selection.arguments)
            pruning.deleted += try session.execute(selection.deleteTransactionsSQL, selection.arguments)
        }
        return pruning
    }
}
