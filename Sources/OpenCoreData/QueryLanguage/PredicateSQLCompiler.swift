import Foundation

/// Compiles predicates, expressions and sort descriptors into SQL over the store's Core Data layout.
///
/// The entity's table is `t0`; each to-one step a key path takes adds one shared
/// `LEFT OUTER JOIN <table> tN ON tM.<FK> = tN.Z_PK`; to-many steps become correlated subqueries.
/// Values only ever reach SQL as `?` parameters, and identifiers only come from the model's schema.
/// ``dialect`` picks SQLite's SQL (the default) or PostgreSQL's, where the PostgreSQL store's functions stand in
/// for the Swift functions SQLite calls, and constructs without an exact PostgreSQL equal are refused
/// (``QueryDialectRefusal``).
///
/// ```swift
/// let compiler = PredicateSQLCompiler(model: model, entity: bankInfo)
/// let sql = try compiler.compile(predicate: try QueryPredicate(format: "details.closeDate > %@", date),
///                                sortDescriptors: [QuerySortDescriptor(key: "details.closeDate", ascending: false)])
/// let ids = try Int64.fetchAll(db, sql: "SELECT t0.Z_PK FROM \(sql.fromClause)"
///     + (sql.whereClause.map { " WHERE \($0)" } ?? "") + (sql.orderByClause.map { " ORDER BY \($0)" } ?? ""),
///     arguments: StatementArguments(sql.arguments))
/// ```
package struct PredicateSQLCompiler {
    /// The SQL pieces of one fetch. Arguments belong to the placeholders of `fromClause`, `whereClause` and
    /// `orderByClause`, in that order (the FROM clause has none today).
    package struct CompiledQuery: Sendable {
        /// `ZTABLE t0 LEFT OUTER JOIN …`
        package var fromClause: String
        /// The predicate, including the `t0.Z_ENT IN (…)` filter when the table holds other entities too;
        /// nil when there is nothing to filter.
        package var whereClause: String?
        /// `t1.ZCLOSEDATE DESC, t0.ZNAME COLLATE OCD_LOCALIZED`; nil without sort descriptors.
        package var orderByClause: String?
        package var arguments: [StoreValue]

        /// `SELECT <columns> FROM … WHERE … ORDER BY …`, for callers that need nothing else.
        package func selectStatement(columns: String) -> String {
            var sql = "SELECT \(columns) FROM \(fromClause)"
            if let whereClause { sql += " WHERE \(whereClause)" }
            if let orderByClause { sql += " ORDER BY \(orderByClause)" }
            return sql
        }
    }

    /// A compiled expression (for batch updates `SET ZCOUNT = <sql>` and aggregate fetches).
    struct CompiledExpression: Sendable {
        var fromClause: String
        var sql: String
        var arguments: [StoreValue]
    }

    let model: ManagedObjectModel
    let entity: EntityDescription
    /// The SQL written: SQLite's unless a PostgreSQL store asks for its own.
    let dialect: any SQLDialect
    /// Values for `$variables` that were not substituted before compiling.
    var substitutionVariables: [String: QueryValue] = [:]

    package init(model: ManagedObjectModel, entity: EntityDescription, dialect: any SQLDialect = SQLiteDialect()) {
        self.model = model
        self.entity = entity
        self.dialect = dialect
    }

    /// `t0.Z_ENT IN (…)` when the entity shares its table with other entities, else nil.
    var entityFilter: String? {
        let mapping = model.schema.mapping(for: entity)
        guard mapping.sharesTable else { return nil }
        return "t0.Z_ENT IN (" + mapping.entityNumbers.map(String.init).joined(separator: ", ") + ")"
    }

    /// Compiles a fetch: FROM with joins, WHERE (with the entity filter), ORDER BY, arguments.
    ///
    /// - Throws: ``QueryLanguageError`` for a predicate or key the model cannot answer in SQL;
    ///   ``QueryDialectRefusal`` for a construct the dialect cannot answer as memory does.
    package func compile(predicate: QueryPredicate?, sortDescriptors: [QuerySortDescriptor] = [],
                 includesEntityFilter: Bool = true) throws -> CompiledQuery {
        let context = CompilationContext(compiler: self)
        let root = context.rootScope
        var conditions: [SQLFragment] = []
        if includesEntityFilter, let entityFilter { conditions.append(SQLFragment(entityFilter)) }
        if let predicate, predicate != .truePredicate {
            conditions.append(try context.compile(predicate, in: root))
        }
        var orderings: [SQLFragment] = []
        for descriptor in sortDescriptors {
            let path = descriptor.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let ordering = try context.value(.keyPath(base: .evaluatedObject, components: path), in: root)
            orderings.append(try context.ordering(ordering, by: descriptor))
        }
        let whereFragment = conditions.isEmpty ? nil : SQLFragment.joined(conditions, separator: " AND ")
        let orderFragment = orderings.isEmpty ? nil : SQLFragment.joined(orderings, separator: ", ")
        return CompiledQuery(fromClause: root.fromClause, whereClause: whereFragment?.sql,
                             orderByClause: orderFragment?.sql,
                             arguments: (whereFragment?.arguments ?? []) + (orderFragment?.arguments ?? []))
    }

    /// Compiles an expression on the entity's rows, such as `count + 1` for a batch update.
    func compile(expression: QueryExpression) throws -> CompiledExpression {
        let context = CompilationContext(compiler: self)
        let fragment = try context.value(expression, in: context.rootScope)
        return CompiledExpression(fromClause: context.rootScope.fromClause, sql: fragment.sql,
                                  arguments: fragment.arguments)
    }

    /// Compiles a value for a dictionary-result fetch: `sum:(price)`, `count:(name)`, `min:`, `max:`,
    /// `average:`, `median:` of a key path aggregate over all fetched rows (`SUM(t0.ZPRICE)`, `ocd_median(…)`); any other expression is
    /// compiled per row, as ``compile(expression:)`` does (for GROUP BY keys and plain columns).
    func compile(fetchedValue expression: QueryExpression) throws -> CompiledExpression {
        guard case .function(let function, let arguments) = expression, QueryFunction.rowAggregates.contains(function),
              arguments.count == 1, case .keyPath = arguments[0] else {
            return try compile(expression: expression)
        }
        let context = CompilationContext(compiler: self)
        let argument = try context.value(arguments[0], in: context.rootScope)
        let aggregate = try dialect.rowAggregate(function, of: arguments[0], argument, expression: expression,
                                                 sumInDoublePrecision: false, in: context)
        return CompiledExpression(fromClause: context.rootScope.fromClause, sql: aggregate.sql,
                                  arguments: aggregate.arguments)
    }
}
