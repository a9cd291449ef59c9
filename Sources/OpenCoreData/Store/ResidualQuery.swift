import Foundation

/// The part of a fetch a store's SQL cannot answer with the meaning it has in memory, answered in the app
/// behind the store: the one boundary for it (docs/POSTGRESQL.md, "Queries").
///
/// When the PostgreSQL dialect refuses a fetch (``QueryDialectRefusal``), its predicate is split at the top-level
/// `AND`: the conjuncts that compile narrow the rows on the server, the others (the residual) are evaluated by
/// the in-memory evaluator on each narrowed row, seen as a ``StoredRowObject``. A sort the server cannot order
/// alike (a localized selector) is done in memory with the descriptors' own comparison. Offset and limit are
/// applied after both. SQLite answers everything itself and never has one.
package struct ResidualQuery: Sendable {
    /// The conjuncts the server could not compile; nil when the whole predicate runs there.
    let predicate: QueryPredicate?
    /// The sort descriptors, when the server cannot order alike (it orders by the same keys compared plainly).
    let sortDescriptors: [QuerySortDescriptor]?
    /// Rows skipped and kept (0: no limit) after filtering and sorting.
    var offset = 0
    var limit = 0

    /// A fetch compiled for `dialect`, with what its SQL leaves to the app.
    ///
    /// - Returns: the compiled query (the narrowing predicate and the order the server can give) and the
    ///   residual, nil when the dialect answers the whole fetch (always on SQLite).
    /// - Throws: ``QueryLanguageError`` for a predicate or key the model cannot answer; ``QueryDialectRefusal``
    ///   on SQLite (comparisons with external binary storage), which is never split, and on PostgreSQL for a sort
    ///   key refused for another reason than its comparison selector.
    static func compile(model: ManagedObjectModel, entity: EntityDescription, predicate: QueryPredicate?,
                        sortDescriptors: [QuerySortDescriptor], dialect: any SQLDialect)
        throws -> (compiled: PredicateSQLCompiler.CompiledQuery, residual: ResidualQuery?) {
        func compile(_ predicate: QueryPredicate?, _ sort: [QuerySortDescriptor]) throws -> PredicateSQLCompiler.CompiledQuery {
            try PredicateSQLCompiler.compile(model: model, entity: entity, predicate: predicate, sortDescriptors: sort,
                                             dialect: dialect)
        }
        do {
            return (try compile(predicate, sortDescriptors), nil)
        } catch is QueryDialectRefusal where dialect.mayRefuseConstructs {
            // Split below.
        }
        var narrowing: [QueryPredicate] = []
        var residual: [QueryPredicate] = []
        for conjunct in conjuncts(of: predicate) {
            do {
                _ = try compile(conjunct, [])
                narrowing.append(conjunct)
            } catch is QueryDialectRefusal {
                residual.append(conjunct)
            }
        }
        let serverPredicate = conjunction(narrowing)
        do {
            let compiled = try compile(serverPredicate, sortDescriptors)
            return (compiled, ResidualQuery(predicate: conjunction(residual), sortDescriptors: nil))
        } catch let refusal as QueryDialectRefusal where refusal.construct == .sortComparator {
            // The server orders by the same keys compared plainly, so a results controller still reads its
            // sort keys from the ORDER BY; the rows are then ordered in memory with the real comparison.
            let plain = sortDescriptors.map { QuerySortDescriptor(key: $0.key, ascending: $0.ascending, comparator: .compare) }
            return (try compile(serverPredicate, plain),
                    ResidualQuery(predicate: conjunction(residual), sortDescriptors: sortDescriptors))
        }
    }

    /// The query selecting the rows `predicate` selects among `entity`'s (its sub-entities' too with
    /// `includesSubentities`) when the PostgreSQL dialect cannot compile it, to be read through the residual path
    /// (``StoreQuery/readIDs(cancellation:progressInterval:progress:)``, ``ResidualKeySelection/init(reading:)``);
    /// nil when the store's SQL says the predicate alone (always on SQLite). A batch request or dictionary fetch
    /// reads it and runs its own statement on what it selected inside ``StoreBackend/inOneSnapshot(writing:request:_:)``.
    ///
    /// - Throws: as ``compile(model:entity:predicate:sortDescriptors:dialect:)``.
    static func selectionQuery(store: any StoreBackend, model: ManagedObjectModel, entity: EntityDescription,
                               predicate: QueryPredicate?, includesSubentities: Bool) throws -> StoreQuery? {
        guard store.dialect.mayRefuseConstructs else { return nil }
        let query = try StoreQuery.fetch(store: store, model: model, entity: entity, predicate: predicate, sortDescriptors: [],
                                         includesSubentities: includesSubentities, limit: 0, offset: 0)
        return query.residual != nil ? query : nil
    }

    /// The top-level `AND`-ed parts of `predicate` (nested `AND`s flattened).
    private static func conjuncts(of predicate: QueryPredicate?) -> [QueryPredicate] {
        guard let predicate else { return [] }
        if case .and(let parts) = predicate { return parts.flatMap { conjuncts(of: $0) } }
        return [predicate]
    }

    private static func conjunction(_ parts: [QueryPredicate]) -> QueryPredicate? {
        parts.isEmpty ? nil : parts.count == 1 ? parts[0] : .and(parts)
    }

    /// The rows `query` reads from the store (narrowed, in the server's order) that satisfy the residual
    /// predicate, sorted in memory when needed, then offset and limited.
    ///
    /// - Throws: what ``StoreQuery/readRows(cancellation:_:)`` throws; what evaluating the residual predicate or
    ///   the sort throws (``QueryLanguageError``, ``ObjectGraphError``, the store's read errors for related rows).
    func rows(of query: StoreQuery, cancellation: CancellationFlag?) throws -> [RowValues] {
        var narrowed: [RowValues] = []
        try query.store.readRows(of: query, cancellation: cancellation) { row in narrowed.append(row) }
        // Evaluated once the statement is done, so related rows can be read on a connection of the pool
        // (a store with one connection holds it while a statement streams), in one read transaction so a
        // to-many's members are read for many owners at once.
        let kept = try query.store.readInOneTransaction { transaction -> [StoredRowObject] in
            let related = RelatedStoredRows(store: query.store, model: query.model, snapshot: transaction.reads)
            var kept: [StoredRowObject] = []
            for object in related.batchObjects(narrowed, entity: query.entity) {
                if try predicate?.evaluate(with: object) ?? true { kept.append(object) }
            }
            // Sorted inside the transaction too: a key path may reach related rows.
            return try sorted(kept)
        }
        var rows = kept.dropFirst(offset)
        if limit > 0 { rows = rows.prefix(limit) }
        return rows.map(\.row)
    }

    /// `objects` by ``sortDescriptors`` (as they are when there are none): a stable sort over the server's order
    /// (the keys compared plainly), so equal rows keep it.
    private func sorted(_ objects: [StoredRowObject]) throws -> [StoredRowObject] {
        guard let sortDescriptors, !sortDescriptors.isEmpty else { return objects }
        var failure: Error?
        let result = objects.enumerated().sorted { lhs, rhs in
            guard failure == nil else { return false }
            do {
                for descriptor in sortDescriptors {
                    let order = try descriptor.compare(lhs.element, rhs.element)
                    if order != .orderedSame { return order == .orderedAscending }
                }
            } catch { failure = error }
            return lhs.offset < rhs.offset
        }.map(\.element)
        if let failure { throw failure }
        return result
    }
}
