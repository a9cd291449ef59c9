import Foundation
import Synchronization

/// Rows recently read or written, shared by every context of a coordinator, so one context's fetch
/// fills another context's faults without SQL (a background fetch handing IDs to the main context).
///
/// Bounded: past its capacity the oldest half is dropped.
final class RowCache: Sendable {
    private struct State {
        var rows: [ManagedObjectID: RowValues] = [:]
        var order: [ManagedObjectID] = []
    }
    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func row(for id: ManagedObjectID) -> RowValues? {
        state.withLock { $0.rows[id] }
    }

    func store(_ entries: [(ManagedObjectID, RowValues)]) {
        guard capacity > 0, !entries.isEmpty else { return }
        let entries = entries.count > capacity ? Array(entries.suffix(capacity)) : entries
        state.withLock { state in
            if state.rows.count + entries.count > capacity {
                let drop = max(state.order.count / 2, state.rows.count + entries.count - capacity)
                for id in state.order.prefix(drop) { state.rows.removeValue(forKey: id) }
                state.order.removeFirst(min(drop, state.order.count))
            }
            for (id, row) in entries {
                if state.rows.updateValue(row, forKey: id) == nil { state.order.append(id) }
            }
        }
    }

    func remove(_ id: ManagedObjectID) {
        _ = state.withLock { $0.rows.removeValue(forKey: id) }
    }

    func remove<S: Sequence>(_ ids: S) where S.Element == ManagedObjectID {
        state.withLock { state in for id in ids { state.rows.removeValue(forKey: id) } }
    }

    func removeAll() {
        state.withLock { $0 = State() }
    }
}
