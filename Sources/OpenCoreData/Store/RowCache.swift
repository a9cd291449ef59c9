import Foundation
import Synchronization

/// Rows recently read, shared by every context of a coordinator, so one context's fetch fills another
/// context's faults without SQL (seed 002: a background fetch hands IDs to the main context).
///
/// A fetch hands over its whole row array at once, which costs nothing (the array is shared, not
/// copied); the key → position index of a batch is built only the first time another context looks
/// something up in it. Saves drop the batches of the tables they touch. Bounded: the oldest batches go
/// once the total passes the capacity.
final class RowCache: Sendable {
    private final class Batch: @unchecked Sendable {
        // @unchecked Sendable: `index` is built and read only under the cache's mutex.
        let table: String
        let rows: [RowValues]
        /// The store's external-change token when the rows were read.
        let token: Int
        /// When the rows were read, for contexts that take cached rows only up to an age.
        let readAt = ContinuousClock.now
        var index: [Int64: Int]?
        init(table: String, rows: [RowValues], token: Int) {
            self.table = table
            self.rows = rows
            self.token = token
        }
    }

    private struct State {
        var batches: [Batch] = []
        var total = 0
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Whether anything is cached (so callers can skip asking the store for its token).
    var isEmpty: Bool { state.withLock { $0.batches.isEmpty } }

    /// The newest cached row of an object, if any, among rows read while the store's external-change
    /// token was `token` (rows from before another process wrote are dropped), and read at most
    /// `maximumAge` ago when one is given.
    func row(for id: ManagedObjectID, token: Int, maximumAge: Duration? = nil) -> RowValues? {
        let table = id.entity.tableName
        let oldest = maximumAge.map { ContinuousClock.now - $0 }
        return state.withLock { state in
            if state.batches.contains(where: { $0.token != token }) {
                state.batches.removeAll { $0.token != token }
                state.total = state.batches.reduce(0) { $0 + $1.rows.count }
            }
            for batch in state.batches.reversed() where batch.table == table {
                if let oldest, batch.readAt < oldest { continue }
                if batch.index == nil {
                    var index: [Int64: Int] = Dictionary(minimumCapacity: batch.rows.count)
                    for (position, row) in batch.rows.enumerated() { index[row.primaryKey] = position }
                    batch.index = index
                }
                if let position = batch.index?[id.primaryKey] { return batch.rows[position] }
            }
            return nil
        }
    }

    /// Keeps a fetch's rows (all of one table), the newest `capacity` of them at most.
    func store(rows: [RowValues], table: String, token: Int) {
        guard capacity > 0, !rows.isEmpty else { return }
        let kept = rows.count > capacity ? Array(rows.suffix(capacity)) : rows
        state.withLock { state in
            state.batches.append(Batch(table: table, rows: kept, token: token))
            state.total += kept.count
            while state.total > capacity, let oldest = state.batches.first {
                state.total -= oldest.rows.count
                state.batches.removeFirst()
            }
        }
    }

    /// Forgets what is cached for these objects' tables (after a save or batch request wrote them).
    func remove<S: Sequence>(_ ids: S) where S.Element == ManagedObjectID {
        let tables = Set(ids.map { $0.entity.tableName })
        guard !tables.isEmpty else { return }
        state.withLock { state in
            state.batches.removeAll { tables.contains($0.table) }
            state.total = state.batches.reduce(0) { $0 + $1.rows.count }
        }
    }

    func remove(_ id: ManagedObjectID) { remove(CollectionOfOne(id)) }

    func removeAll() {
        state.withLock { $0 = State() }
    }
}
