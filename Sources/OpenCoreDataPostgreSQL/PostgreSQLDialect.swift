import OpenCoreData

/// PostgreSQL's SQL, on the PostgreSQL store's layout (text columns in the `"C"` collation: code point order).
///
/// It uses built-ins only where they provably give memory's answer and refuses the rest with a
/// ``QueryDialectRefusal`` naming the comparison (docs/POSTGRESQL.md, "Queries"); the store answers what is
/// refused in the app (``ResidualQuery``).
package struct PostgreSQLDialect: SQLDialect {
    /// The dialect (it has no settings).
    package init() {}

    package var name: String { "PostgreSQL" }
    package var mayRefuseConstructs: Bool { true }

    package func boolean(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }

    package func nullSafeEquality(negated: Bool) -> String {
        negated ? " IS DISTINCT FROM " : " IS NOT DISTINCT FROM "
    }

    /// Against a non-null value, `=` differs from the null-safe form only for a NULL column: NULL instead of
    /// false, which every consumer reads as false (negations go through COALESCE), as memory reads
    /// nil == value. `IS NOT DISTINCT FROM` costs more per row and uses no index.
    package func equality(_ lhs: SQLFragment, _ rhs: SQLFragment) -> SQLFragment {
        if lhs.isBoundValue || rhs.isBoundValue { return "(" + lhs + " = " + rhs + ")" }
        return "(" + lhs + nullSafeEquality(negated: false) + rhs + ")"
    }

    /// PostgreSQL takes an OFFSET alone.
    package func limitBeforeOffset(limit: Int) -> String { "" }

    /// PostgreSQL wants CROSS for a join without ON.
    package var joinWithoutCondition: String { "CROSS JOIN " }

    package var randomNumber: String { "random()" }

    /// The server cannot take U+0000 in text, where memory compares it as any other character.
    package func checkBoundText(_ text: String, in context: CompilationContext) throws {
        if text.utf8.contains(0) { throw context.refusal(.nulCharacter) }
    }

    /// Arithmetic and aggregates fail on text here, where SQLite would read it as a number.
    package func requireNumbers(_ operands: [QueryExpression], in context: CompilationContext) throws {
        try context.requireNumbers(operands)
    }

    package func requireComparableKinds(_ left: QueryExpression, _ right: QueryExpression,
                                        in context: CompilationContext) throws {
        try context.requireComparableKinds(left, right)
    }

    /// CASE needs branches of one type.
    package func requireSingleKind(_ expression: QueryExpression, in context: CompilationContext) throws {
        if try context.operandKind(expression) == .unknown { throw context.refusal(.operandKind) }
    }

    package func comparison(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                            _ lhs: SQLFragment, _ rhs: SQLFragment, operands: (QueryExpression, QueryExpression)?,
                            in context: CompilationContext) throws -> SQLFragment {
        try context.postgreSQLComparison(op, options, lhs, rhs, operands: operands)
    }

    package func arithmetic(_ op: QueryExpression.ArithmeticOperator, _ lhs: QueryExpression, _ rhs: QueryExpression,
                            in scope: SQLScope, context: CompilationContext) throws -> SQLFragment {
        try context.postgreSQLArithmetic(op, lhs, rhs, in: scope)
    }

    package func cast(_ operand: QueryExpression, to type: QueryCastType, in scope: SQLScope,
                      context: CompilationContext) throws -> SQLFragment {
        try context.postgreSQLCast(operand, to: type, in: scope)
    }

    package func absoluteValue(_ operand: QueryExpression, in scope: SQLScope,
                               context: CompilationContext) throws -> SQLFragment {
        try requireNumbers([operand], in: context)
        return "abs(" + (try context.value(operand, in: scope)) + ")"
    }

    package func function(_ function: QueryFunction, _ arguments: [QueryExpression], in scope: SQLScope,
                          context: CompilationContext) throws -> SQLFragment {
        try context.postgreSQLFunction(function, arguments, in: scope)
    }

    /// In double precision, as SQLite and memory compute it (PostgreSQL's AVG of integers is NUMERIC).
    package func average(of value: SQLFragment, distinct: Bool) -> SQLFragment {
        "AVG(" + (distinct ? "DISTINCT " : "") + "CAST(" + value + " AS DOUBLE PRECISION))"
    }

    package func median(ofValuesIn values: SQLFragment) -> SQLFragment {
        CompilationContext.postgreSQLMedian(of: "SELECT CAST(v AS DOUBLE PRECISION) AS v FROM " + values + " WHERE v IS NOT NULL")
    }

    package func median(of member: SQLFragment, distinct: Bool, from: String, where condition: String) -> SQLFragment {
        CompilationContext.postgreSQLMedian(of: "SELECT " + (distinct ? "DISTINCT " : "") + "CAST(" + member
            + " AS DOUBLE PRECISION) AS v FROM \(from) WHERE \(condition) AND " + member + " IS NOT NULL")
    }

    /// Sums and averages of text differ between the databases (and memory); MIN and MAX of text follow the
    /// columns' "C" collation, which is memory's order.
    package func requireAggregatable(_ collectionOperator: String, of kind: OperandKind,
                                     in context: CompilationContext) throws {
        if ["@sum", "@avg", "@median"].contains(collectionOperator), kind != .number { throw context.refusal(.operandKind) }
    }

    package func literalIndex(_ members: [QueryExpression], _ position: QueryExpression, whole: QueryExpression,
                              in scope: SQLScope, context: CompilationContext) throws -> SQLFragment {
        try context.postgreSQLLiteralIndex(members, position, whole: whole, in: scope)
    }

    /// With SQLite's answers: a sum is 0 over no rows (a double with `sumInDoublePrecision`, as `TOTAL`), an
    /// average is taken in double precision, a median is the middle number or the mean of the middle two.
    package func rowAggregate(_ function: QueryFunction, of operand: QueryExpression, _ argument: SQLFragment,
                              expression: QueryExpression, sumInDoublePrecision: Bool,
                              in context: CompilationContext) throws -> SQLFragment {
        switch function {
        case .sum where sumInDoublePrecision: "COALESCE(SUM(CAST(" + argument + " AS DOUBLE PRECISION)), 0.0)"
        case .sum: "COALESCE(SUM(" + argument + "), 0)"
        case .average: average(of: argument, distinct: false)
        case .median: try context.postgreSQLMedianAggregate(of: operand, argument, expression: expression)
        case .count: "COUNT(" + argument + ")"
        case .min: "MIN(" + argument + ")"
        default: "MAX(" + argument + ")"
        }
    }

    package func ordering(_ value: SQLFragment, by descriptor: QuerySortDescriptor,
                          in context: CompilationContext) throws -> SQLFragment {
        try context.postgreSQLOrdering(value, by: descriptor)
    }

    // MARK: Migration statements

    /// In lower case: the layout writes names unquoted, so the server folds them.
    package func quotedName(_ name: String) -> String {
        "\"" + name.lowercased().replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
    package var temporarySchema: String { "pg_temp" }
    /// An index goes beside its table; a schema in the index's name is refused.
    package var qualifiesTemporaryIndexes: Bool { false }
    package var greatest: String { "GREATEST" }
    package var doubleType: String { "DOUBLE PRECISION" }
    /// A bare NULL in a subquery is typed as text.
    package var nullNumber: String { "CAST(NULL AS BIGINT)" }
    /// Before version 16, a subquery in FROM needs an alias.
    package var aliasesSubqueries: Bool { true }
    package func columnDefinition(forSQLiteType type: String) -> String { PostgreSQLLayout.columnDefinition(forSQLiteType: type) }
    /// Entity names in the server's collation, where entity tables' text is in `"C"`.
    package func bookkeepingColumnDefinition(forSQLiteType type: String) -> String {
        PostgreSQLLayout.columnType(forSQLiteType: type)
    }
}
