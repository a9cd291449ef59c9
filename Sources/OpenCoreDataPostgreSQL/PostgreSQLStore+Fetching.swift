import Foundation
import OpenCoreData

/// Fetching by predicate: the query language compiled to PostgreSQL (docs/POSTGRESQL.md, "Queries"), values
/// only as bound parameters, through the same ``StoreQuery`` a fetch request runs.
extension PostgreSQLStore {
    /// The rows of `entity` that satisfy `predicate`, in the order of `sortDescriptors`, each in the table's
    /// column order (Z_PK, Z_ENT, Z_OPT first), as the SQLite store gives them.
    ///
    /// - Parameters:
    ///   - includesSubentities: whether rows of sub-entities sharing the table are included (Core Data's default).
    ///   - limit: at most this many rows; 0 for no limit (as `fetchLimit`).
    ///   - offset: rows skipped first.
    /// What PostgreSQL cannot answer as memory does (``QueryDialectRefusal``) is answered in the app on the rows
    /// the rest of the predicate narrows (`ResidualQuery`).
    ///
    /// - Throws: `QueryLanguageError` for a predicate or sort key the model cannot answer (or that memory
    ///   evaluation refuses);
    ///   `ObjectGraphError.negativeFetchBound` for a negative limit or offset; ``StoreError`` when the
    ///   server refuses the query or the connection drops.
    package func fetchRows(entity: EntityDescription, predicate: QueryPredicate?,
                           sortDescriptors: [QuerySortDescriptor] = [], includesSubentities: Bool = true,
                           limit: Int = 0, offset: Int = 0) throws -> [RowValues] {
        guard limit >= 0 else { throw ObjectGraphError.negativeFetchBound(entity: entity.name, bound: "limit", value: limit) }
        guard offset >= 0 else { throw ObjectGraphError.negativeFetchBound(entity: entity.name, bound: "offset", value: offset) }
        return try StoreQuery.fetch(store: self, model: model, entity: entity, predicate: predicate,
                                    sortDescriptors: sortDescriptors, includesSubentities: includesSubentities,
                                    limit: limit, offset: offset).readRows()
    }

    /// How many rows of `entity` satisfy `predicate`.
    ///
    /// - Throws: as ``fetchRows(entity:predicate:sortDescriptors:includesSubentities:limit:offset:)``.
    package func count(entity: EntityDescription, predicate: QueryPredicate?, includesSubentities: Bool = true) throws -> Int {
        try StoreQuery.fetch(store: self, model: model, entity: entity, predicate: predicate, sortDescriptors: [],
                             includesSubentities: includesSubentities, limit: 0, offset: 0).count()
    }
}
