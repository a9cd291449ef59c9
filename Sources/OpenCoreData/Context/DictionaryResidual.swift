import Foundation

/// What a dictionary fetch (``FetchPlan/fetchDictionaries()``) leaves to the app on a store whose SQL cannot say
/// its predicate or sort with the in-memory meaning (PostgreSQL, ``QueryDialectRefusal``): the predicate is
/// answered through ``ResidualQuery`` first and the dictionary query runs on the keys that survive
/// (``ResidualKeySelection``), both in one snapshot (``StoreBackend/inOneSnapshot(writing:request:_:)``), so
/// aggregates, grouping and distinct keep their SQL meaning; a localized sort is done here on the sort keys read
/// beside the fetched columns, offset and limit after it.
struct DictionaryResidual {
    /// The query selecting the rows the predicate keeps, read before the dictionary query, whose predicate is
    /// then the keys read; nil when the dictionary query filters with the request's own predicate.
    let selection: StoreQuery?
    /// The order the server gives: the request's, or its keys compared plainly when ``memorySort`` is set.
    let serverSort: [QuerySortDescriptor]
    /// The request's sort, done in memory when the server cannot order alike; nil otherwise.
    let memorySort: [QuerySortDescriptor]?
    /// The store's dialect, which a refusal names.
    let dialect: any SQLDialect

    /// The plan for `request` on `store`: as the request is on SQLite or when the store's SQL says it all.
    /// Nothing is read yet.
    ///
    /// - Throws: ``QueryLanguageError`` for a predicate or sort key the model cannot answer;
    ///   ``QueryDialectRefusal`` for a sort key refused for another reason than its comparison selector.
    init<T>(request: FetchRequest<T>, entity: EntityDescription, model: ManagedObjectModel, store: any StoreBackend) throws {
        dialect = store.dialect
        let residual = !store.dialect.mayRefuseConstructs ? nil
            : try ResidualQuery.compile(model: model, entity: entity, predicate: request.predicate,
                                        sortDescriptors: request.sortDescriptors, dialect: store.dialect).residual
        if residual?.predicate != nil {
            selection = try ResidualQuery.selectionQuery(store: store, model: model, entity: entity, predicate: request.predicate,
                                                         includesSubentities: request.includesSubentities)
        } else {
            selection = nil
        }
        if residual?.sortDescriptors != nil {
            // Ordered plainly first, so rows equal under the real comparison keep a stable order.
            serverSort = request.sortDescriptors.map { QuerySortDescriptor(key: $0.key, ascending: $0.ascending, comparator: .compare) }
            memorySort = request.sortDescriptors
        } else {
            serverSort = request.sortDescriptors
            memorySort = nil
        }
    }

    /// The keys ``selection`` selects (nil without one), read through the residual path.
    ///
    /// - Throws: what reading the narrowed rows and evaluating the residual predicate throw.
    func selectedKeys() throws -> ResidualKeySelection? {
        try selection.map { try ResidualKeySelection(reading: $0) }
    }

    /// The result column each in-memory sort key of a dictionary fetch of `entity` is read from: a fetched column of the same key when there is
    /// one, else a column added to `expressions` (after the `fetchedCount` fetched ones). Empty without an
    /// in-memory sort.
    ///
    /// - Throws: ``QueryDialectRefusal`` (`sortComparator`) naming the key when the rows are grouped or distinct
    ///   and the key is not fetched: a column added for it would change what is grouped or distinct.
    func sortColumns(of entity: EntityDescription, adding expressions: inout [QueryExpression], fetchedCount: Int,
                     groupedOrDistinct: Bool) throws -> [Int] {
        guard let memorySort else { return [] }
        return try memorySort.map { descriptor in
            if let index = expressions[..<fetchedCount].firstIndex(of: .key(descriptor.key)) { return index }
            guard !groupedOrDistinct else {
                throw QueryDialectRefusal(.sortComparator, in: dialect, expression: descriptor.key,
                                          detail: "a grouped or distinct dictionary fetch of '\(entity.name)' is sorted in the app on its fetched columns; fetch '\(descriptor.key)' to sort by it")
            }
            expressions.append(.key(descriptor.key))
            return expressions.count - 1
        }
    }

    /// `rows` in ``memorySort`` order (a stable sort over the server's), `sortValues[i]` holding row i's values
    /// at the sort keys; as they are without an in-memory sort.
    ///
    /// - Throws: what comparing the values throws (nothing in practice, ``QuerySortDescriptor/compareValues(_:_:)``).
    func sorted(_ rows: [[String: Any]], sortValues: [[Any?]]) throws -> [[String: Any]] {
        guard let memorySort, !memorySort.isEmpty else { return rows }
        var failure: Error?
        let order = rows.indices.sorted { lhs, rhs in
            guard failure == nil else { return false }
            do {
                for (position, descriptor) in memorySort.enumerated() {
                    let result = try descriptor.compareValues(sortValues[lhs][position], sortValues[rhs][position])
                    if result != .orderedSame { return result == .orderedAscending }
                }
            } catch { failure = error }
            return lhs < rhs
        }
        if let failure { throw failure }
        return order.map { rows[$0] }
    }
}
