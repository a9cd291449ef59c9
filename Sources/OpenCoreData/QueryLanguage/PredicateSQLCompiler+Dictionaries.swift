import Foundation

/// Compiling a dictionary fetch: computed columns, grouping and order share one set of joins.
extension PredicateSQLCompiler {
    package struct CompiledDictionaryQuery {
        package var sql: String
        package var arguments: [StoreValue]
    }

    /// `columns` are per-row values or aggregates; `groupBy` per-row values. Rows are those of
    /// `entityNumbers` (fetches decide them from `includesSubentities`) when the entity shares its table, and
    /// only `keys` when given (the rows a residual predicate kept, in place of `predicate`).
    func compileDictionaryQuery(columns: [QueryExpression], groupBy: [QueryExpression], predicate: QueryPredicate?,
                                keys: ResidualKeySelection? = nil,
                                entityNumbers: [Int], sortDescriptors: [QuerySortDescriptor], distinct: Bool,
                                limit: Int, offset: Int) throws -> CompiledDictionaryQuery {
        let context = CompilationContext(compiler: self)
        let root = context.rootScope
        var selected: [SQLFragment] = []
        for column in columns {
            if case .function(let function, let arguments) = column, QueryFunction.rowAggregates.contains(function),
               arguments.count == 1 {
                let argument = try context.value(arguments[0], in: root)
                selected.append(try dialect.rowAggregate(function, of: arguments[0], argument, expression: column,
                                                         sumInDoublePrecision: true, in: context))
            } else {
                selected.append(try context.value(column, in: root))
            }
        }
        var conditions: [SQLFragment] = []
        if model.schema.mapping(for: entity).sharesTable {
            conditions.append(SQLFragment("t0.Z_ENT IN (\(entityNumbers.map(String.init).joined(separator: ", ")))"))
        }
        if let predicate, predicate != .truePredicate { conditions.append(try context.compile(predicate, in: root)) }
        if let keys { conditions.append(SQLFragment(keys.condition.sql, keys.condition.arguments)) }
        let groups = try groupBy.map { try context.value($0, in: root) }
        var orderings: [SQLFragment] = []
        for descriptor in sortDescriptors {
            let path = descriptor.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let ordering = try context.value(.keyPath(base: .evaluatedObject, components: path), in: root)
            orderings.append(try context.ordering(ordering, by: descriptor))
        }
        var query = SQLFragment("SELECT " + (distinct ? "DISTINCT " : "")) + SQLFragment.joined(selected, separator: ", ")
        query = query + " FROM \(root.fromClause)"
        if !conditions.isEmpty { query = query + " WHERE " + SQLFragment.joined(conditions, separator: " AND ") }
        if !groups.isEmpty { query = query + " GROUP BY " + SQLFragment.joined(groups, separator: ", ") }
        if !orderings.isEmpty { query = query + " ORDER BY " + SQLFragment.joined(orderings, separator: ", ") }
        if limit > 0 { query = query + " LIMIT \(limit)" }
        if offset > 0 { query = query + dialect.limitBeforeOffset(limit: limit) + " OFFSET \(offset)" }
        return CompiledDictionaryQuery(sql: query.sql, arguments: query.arguments)
    }
}
