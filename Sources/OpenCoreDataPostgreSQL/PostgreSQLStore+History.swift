import Foundation
import OpenCoreData

/// Persistent-history requests and history readers on a PostgreSQL store, with the SQLite store's meaning:
/// the same scopes and result types (``HistorySelection``, ``PersistentHistoryChangeRequest/result(from:)``),
/// the same pruning that waits for registered readers (``HistoryPruning``), the same registry statements
/// (``HistoryReaderRegistry``). A store opened without history tracking reads and prunes whatever history
/// its schema holds (none when it has no history tables), as SQLite does with a file.
extension PostgreSQLStore {
    /// Fetches the transactions the request's scope selects (with its predicates and result type), or
    /// deletes the ones before its point that no registered reader still needs, in one transaction.
    ///
    /// - Throws: ``StoreError/readOnly(path:)`` for a delete on a read-only store; ``StoreError``
    ///   when the server refuses a statement or the connection drops; what evaluating the request's
    ///   predicates throws.
    package func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        if request.operation == .delete {
            return try pruneHistory(request.scope).result
        }
        return try request.result(from: fetchHistory(request))
    }

    /// The transactions a fetch selects, oldest first, read in runs of at most a batch each (one run's rows
    /// are held in memory at once).
    private func fetchHistory(_ request: PersistentHistoryChangeRequest) throws -> [PersistentHistoryTransaction] {
        var transactions: [PersistentHistoryTransaction] = []
        let limit = request.fetchLimit > 0 ? request.fetchLimit : Int.max
        try pool.withSession { session in
            guard try recordsHistory || PostgreSQLHistory.presence(in: session).history else { return }
            for selection in HistorySelection.fetching(request.scope) {
                var after: Int64 = 0
                while transactions.count < limit {
                    let batch = try PostgreSQLHistory.transactions(
                        selection, after: after, limit: min(PostgreSQLChangeListener.batchSize, limit - transactions.count),
                        withChanges: request.needsChanges, model: model, storeIdentifier: identifier, identity: identity, in: session)
                    guard let last = batch.last else { break }
                    transactions += batch
                    after = last.transactionNumber
                }
            }
        }
        return transactions
    }

    /// Deletes what `scope` selects for a delete, but nothing a registered reader has not seen, in one
    /// transaction that holds the reader registry still: a registration waits until the prune commits, and
    /// one committed before it is seen.
    private func pruneHistory(_ scope: PersistentHistoryChangeRequest.Scope) throws -> HistoryPruning {
        try refuseIfReadOnly()
        return try pool.withSession { session in
            try session.transaction {
                let present = try PostgreSQLHistory.presence(in: session)
                guard present.history else { return HistoryPruning() }
                var readers: [(name: String, seen: Int64)] = []
                if present.readerRegistry {
                    try session.execute("LOCK TABLE \(HistoryReaderRegistry.table) IN SHARE MODE")
                    readers = try HistoryReaderRegistry.all(in: session).map { (name: $0.name, seen: $0.seen) }
                }
                return try HistoryPruning.run(scope, readers: readers, in: session)
            }
        }
    }

    /// The token of the newest transaction in the history (transaction 0 when there is none, or no history
    /// tables).
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops.
    package func currentHistoryToken() throws -> PersistentHistoryToken {
        let newest = try pool.withSession { session -> Int64 in
            guard try recordsHistory || PostgreSQLHistory.presence(in: session).history else { return 0 }
            return try session.rows("SELECT COALESCE(MAX(Z_PK), 0) FROM ATRANSACTION").first.flatMap { Int64.fromStoreValue($0[0]) } ?? 0
        }
        return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: newest)
    }

    /// The transactions this store object recorded up to `number`, forgotten as they are handed out.
    package func takeOwnTransactions(through number: Int64) -> Set<Int64> {
        ownTransactions.withLock { own in
            let taken = own.filter { $0 <= number }
            own.subtract(taken)
            return taken
        }
    }

    /// Registers the history reader `name`, or moves its mark to `seen`, in `Z_OCDHISTORYREADER` (made with
    /// the history tables when the store is opened with history).
    ///
    /// - Throws: ``StoreError/readOnly(path:)`` on a read-only store; ``StoreError`` when the
    ///   server refuses the statement or the connection drops.
    package func registerHistoryReader(_ name: String, seen: Int64) throws {
        try refuseIfReadOnly()
        try pool.withSession { session in try HistoryReaderRegistry.register(name, seen: seen, in: session) }
    }

    /// Removes the history reader `name`; whether it was registered.
    ///
    /// - Throws: ``StoreError/readOnly(path:)`` on a read-only store; ``StoreError`` when the
    ///   server refuses the statement or the connection drops.
    package func unregisterHistoryReader(_ name: String) throws -> Bool {
        try refuseIfReadOnly()
        return try pool.withSession { session in try HistoryReaderRegistry.unregister(name, in: session) }
    }

    /// Every registered history reader (name, last transaction seen, when it said so), by name; empty when
    /// the store has no registry.
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops;
    ///   ``StoreError/corrupt(path:reason:)`` naming the row when the registry holds a value of the wrong type.
    package func historyReaders() throws -> [(name: String, seen: Int64, timestamp: Double)] {
        try pool.withSession { session in try HistoryReaderRegistry.all(in: session) }
    }
}
