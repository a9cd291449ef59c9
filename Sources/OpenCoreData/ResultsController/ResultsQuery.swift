import Foundation

/// The one SQL query a controller runs: `Z_ENT, Z_PK` (`Z_PK` alone for an entity alone in its table)
/// and the sort-key values of every matching row, in
/// order. Built on the context's queue, run anywhere (it holds no object), so the async fetch can run
/// it on a background reader.
struct ResultsQuery: @unchecked Sendable {
    // @unchecked Sendable: every stored property is an immutable value or an immutable model object (the
    // request is the controller's own copy, never edited).
    /// The request as it was when the query was made: the controller follows it until its next fetch.
    let request: FetchRequest<ManagedObject>
    let store: any StoreBackend
    /// The IDs and sort keys of every matching row, in order (the store builds its SQL).
    let keys: SortKeyQuery
    let ordering: ResultsOrdering
    let hasSections: Bool
    /// Tables whose rows the result depends on (for the cache token).
    let tables: [String]
    let cache: ResultsCache?

    init(request: FetchRequest<ManagedObject>, plan: FetchPlan<ManagedObject>, ordering: ResultsOrdering,
         hasSections: Bool, cacheName: String?, cacheable: Bool) throws {
        self.request = request
        store = plan.store
        self.ordering = ordering
        self.hasSections = hasSections
        keys = try SortKeyQuery(selecting: plan.storeQuery, keyCount: ordering.keys.count)
        var tables = [plan.entity.tableName]
        for key in ordering.keys {
            for relationship in key.relationships {
                if let destination = relationship.destinationEntity, !tables.contains(destination.tableName) {
                    tables.append(destination.tableName)
                }
            }
        }
        self.tables = tables
        if let cacheName, cacheable {
            let fingerprint = [
                "v1", request.entityName, String(request.includesSubentities),
                request.predicate?.predicateFormat ?? "", request.sortDescriptors.map(\.description).joined(separator: ";"),
                hasSections ? ordering.keys[0].descriptor.key : "",
            ].joined(separator: "\u{1}")
            cache = ResultsCache(url: ResultsCache.fileURL(forName: cacheName), fingerprint: fingerprint,
                                 keyCount: ordering.keys.count)
        } else {
            cache = nil
        }
    }

    /// Reads the store part of the result: from the cache file when it is current, else with the query
    /// (then writes the cache). Token and rows are read in one read transaction, so they agree.
    func load(cancellation: CancellationFlag? = nil) throws -> ResultsCache.Snapshot {
        let keyCount = ordering.keys.count
        let start = ContinuousClock.now
        let (token, snapshot): (String?, ResultsCache.Snapshot) = try store.readInOneTransaction { transaction in
            var token: String?
            if let cache {
                let current = try transaction.dataToken(tables: tables)
                if let cached = cache.load(token: current) { return (current, cached) }
                token = current
            }
            var snapshot = ResultsCache.Snapshot()
            let sole = keys.soleEntityNumber
            snapshot.soleEntity = sole
            let firstKey = keys.firstKeyColumn
            var columns = Array(repeating: KeyColumnBuilder(), count: keyCount)
            try transaction.stepRows(of: keys, cancellation: cancellation) { row in
                if sole == nil { snapshot.entities.append(Int32(truncatingIfNeeded: row.integer(at: 0))) }
                snapshot.handles.append(row.integer(at: firstKey - 1))
                for column in 0..<keyCount {
                    columns[column].append(from: row, index: Int32(column) + firstKey)
                }
            }
            snapshot.keys = columns.map(\.column)
            return (token, snapshot)
        }
        if snapshot.fromCache { return snapshot }
        SQLiteStore.logFetch(rows: snapshot.handles.count, since: start)
        var sorted = try ordered(snapshot)
        sorted.sectionCounts = try sectionCounts(sorted)
        if let cache, let token { cache.store(sorted, token: token) }
        return sorted
    }

    /// The snapshot in the controller's in-memory order. The SQL order is that order when every key
    /// compares the same way in SQLite and in memory and every value is of the kind its key's order
    /// covers (taken as is, after one pass over the values); otherwise it almost always is too
    /// (checked in one pass), and when the descriptors compare differently from SQLite (localized
    /// comparisons), the rows are sorted in memory.
    private func ordered(_ snapshot: ResultsCache.Snapshot) throws -> ResultsCache.Snapshot {
        if let orders = ordering.exactOrders, ResultsOrdering.sqlOrderHolds(for: snapshot.keys, orders: orders) {
            return snapshot
        }
        let count = snapshot.handles.count
        func keys(_ row: Int) -> KeyRow { KeyRow(columns: snapshot.keys, row: row) }
        var inOrder = true
        var row = 1
        while row < count {
            if try ordering.less(keys(row), snapshot.handles[row], keys(row - 1), snapshot.handles[row - 1]) {
                inOrder = false
                break
            }
            row += 1
        }
        if inOrder { return snapshot }
        var failure: Error?
        let order = (0..<count).sorted { lhs, rhs in
            guard failure == nil else { return false }
            do { return try ordering.less(keys(lhs), snapshot.handles[lhs], keys(rhs), snapshot.handles[rhs]) }
            catch { failure = error; return false }
        }
        if let failure { throw failure }
        var result = ResultsCache.Snapshot()
        result.handles = order.map { snapshot.handles[$0] }
        result.soleEntity = snapshot.soleEntity
        if snapshot.soleEntity == nil { result.entities = order.map { snapshot.entities[$0] } }
        result.keys = snapshot.keys.map { column in
            var builder = KeyColumnBuilder(capacity: count)
            for index in order { builder.append(column[index]) }
            return builder.column
        }
        return result
    }

    /// Section sizes: runs of equal first keys (one section for everything without a section key path).
    private func sectionCounts(_ snapshot: ResultsCache.Snapshot) throws -> [Int] {
        let count = snapshot.handles.count
        guard hasSections, let sectionKeys = snapshot.keys.first else { return [count] }
        var counts: [Int] = []
        var row = 0
        func sameSection(_ row: Int) throws -> Bool {
            // Distinct integers never share a section: no need to box and compare them through the descriptor.
            if case .integers(let values) = sectionKeys { return values[row] == values[row - 1] }
            return try ordering.sameSection(sectionKeys[row], sectionKeys[row - 1])
        }
        while row < count {
            if row > 0, try sameSection(row) {
                counts[counts.count - 1] += 1
            } else {
                counts.append(1)
            }
            row += 1
        }
        return counts
    }
}
