import Foundation
import GRDB
import OpenCoreData

/// Fetching by predicate: the query language compiled to PostgreSQL (docs/POSTGRESQL.md, "Queries"), values
/// only as bound parameters.
extension PostgreSQLStore {
    /// The rows of `entity` that satisfy `predicate`, in the order of `sortDescriptors`, each in the table's
    /// column order (Z_PK, Z_ENT, Z_OPT first), as the SQLite store gives them.
    ///
    /// - Parameters:
    ///   - includesSubentities: whether rows of sub-entities sharing the table are included (Core Data's default).
    ///   - limit: at most this many rows; 0 for no limit (as `fetchLimit`).
    ///   - offset: rows skipped first.
    /// - Throws: ``QueryDialectRefusal`` for a construct PostgreSQL cannot answer as memory does;
    ///   `QueryLanguageError` for a predicate or sort key the model cannot answer;
    ///   `ObjectGraphError.invalidRequest` for a negative limit or offset; ``PostgreSQLStoreError`` when the
    ///   server refuses the query or the connection drops.
    package func fetchRows(entity: EntityDescription, predicate: QueryPredicate?,
                           sortDescriptors: [QuerySortDescriptor] = [], includesSubentities: Bool = true,
                           limit: Int = 0, offset: Int = 0) throws -> [RowValues] {
        guard limit >= 0, offset >= 0 else {
            throw ObjectGraphError.invalidRequest("a fetch of '\(entity.name)' has a negative limit (\(limit)) or offset (\(offset))")
        }
        let compiled = try compiledQuery(entity: entity, predicate: predicate, sortDescriptors: sortDescriptors,
                                         includesSubentities: includesSubentities)
        guard let table = model.schema.table(named: entity.tableName) else { return [] }
        var sql = compiled.selectStatement(columns: table.columns.map { "t0.\($0.name)" }.joined(separator: ", "))
        var arguments = compiled.arguments
        if limit > 0 {
            sql += " LIMIT ?"
            arguments.append(Int64(limit).databaseValue)
        }
        if offset > 0 {
            sql += " OFFSET ?"
            arguments.append(Int64(offset).databaseValue)
        }
        return try pool.withSession { try $0.rows(sql, arguments).map(RowValues.init(values:)) }
    }

    /// How many rows of `entity` satisfy `predicate`.
    ///
    /// - Throws: as ``fetchRows(entity:predicate:sortDescriptors:includesSubentities:limit:offset:)``.
    package func count(entity: EntityDescription, predicate: QueryPredicate?, includesSubentities: Bool = true) throws -> Int {
        let compiled = try compiledQuery(entity: entity, predicate: predicate, sortDescriptors: [],
                                         includesSubentities: includesSubentities)
        let rows = try pool.withSession { try $0.rows(compiled.selectStatement(columns: "COUNT(*)"), compiled.arguments) }
        return rows.first.flatMap { $0.first }.flatMap(Int.fromDatabaseValue) ?? 0
    }

    private func compiledQuery(entity: EntityDescription, predicate: QueryPredicate?, sortDescriptors: [QuerySortDescriptor],
                               includesSubentities: Bool) throws -> PredicateSQLCompiler.CompiledQuery {
        let compiler = PredicateSQLCompiler(model: model, entity: entity, dialect: .postgreSQL)
        var compiled = try compiler.compile(predicate: predicate, sortDescriptors: sortDescriptors,
                                            includesEntityFilter: includesSubentities)
        if !includesSubentities {
            // The entity's own rows only; the number is the model's, not a value from outside.
            let own = "t0.Z_ENT = \(entity.entityNumber)"
            compiled.whereClause = compiled.whereClause.map { "\(own) AND \($0)" } ?? own
        }
        return compiled
    }
}
