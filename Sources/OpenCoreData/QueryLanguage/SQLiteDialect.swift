/// SQLite's SQL, with the functions and collations ``QuerySQLFunctions`` registers on each connection.
///
/// Where SQL's own meaning differs from memory's, SQLite calls Swift functions running memory's code
/// (`ocd_compare`, `ocd_function`, `ocd_cast`, …), so it compiles every construct and refuses none.
package struct SQLiteDialect: SQLDialect {
    /// The dialect (it has no settings).
    package init() {}

    package var name: String { "SQLite" }
    package var mayRefuseConstructs: Bool { false }

    package func boolean(_ value: Bool) -> String { value ? "1" : "0" }

    package func nullSafeEquality(negated: Bool) -> String { negated ? " IS NOT " : " IS " }

    package func equality(_ lhs: SQLFragment, _ rhs: SQLFragment) -> SQLFragment { "(" + lhs + " IS " + rhs + ")" }

    /// SQLite needs a LIMIT before an OFFSET (-1: none).
    package func limitBeforeOffset(limit: Int) -> String { limit > 0 ? "" : " LIMIT -1" }

    package var joinWithoutCondition: String { "JOIN " }

    package var randomNumber: String { "ocd_random()" }

    package func checkBoundText(_ text: String, in context: CompilationContext) throws {}

    package func requireNumbers(_ operands: [QueryExpression], in context: CompilationContext) throws {}

    package func requireComparableKinds(_ left: QueryExpression, _ right: QueryExpression,
                                        in context: CompilationContext) throws {}

    package func requireSingleKind(_ expression: QueryExpression, in context: CompilationContext) throws {}

    /// Run by `ocd_compare`, memory's own code.
    package func comparison(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                            _ lhs: SQLFragment, _ rhs: SQLFragment, operands: (QueryExpression, QueryExpression)?,
                            in context: CompilationContext) throws -> SQLFragment {
        let flags = options.intersection(CompilationContext.foldingOptions).rawValue
        return "ocd_compare('\(op.rawValue)', \(flags), " + lhs + ", " + rhs + ")"
    }

    package func arithmetic(_ op: QueryExpression.ArithmeticOperator, _ lhs: QueryExpression, _ rhs: QueryExpression,
                            in scope: SQLScope, context: CompilationContext) throws -> SQLFragment {
        let left = try context.value(lhs, in: scope), right = try context.value(rhs, in: scope)
        switch op {
        case .add: return "(" + left + " + " + right + ")"
        case .subtract: return "(" + left + " - " + right + ")"
        case .multiply: return "(" + left + " * " + right + ")"
        case .divide: return "ocd_divide(" + left + ", " + right + ")"
        case .power: return "ocd_power(" + left + ", " + right + ")"
        }
    }

    package func cast(_ operand: QueryExpression, to type: QueryCastType, in scope: SQLScope,
                      context: CompilationContext) throws -> SQLFragment {
        "ocd_cast(" + (try context.value(operand, in: scope)) + ", '\(type.rawValue)')"
    }

    package func absoluteValue(_ operand: QueryExpression, in scope: SQLScope,
                               context: CompilationContext) throws -> SQLFragment {
        "ocd_abs(" + (try context.value(operand, in: scope)) + ")"
    }

    /// The same Swift code as memory runs (SQLite's own upper() and % differ).
    package func function(_ function: QueryFunction, _ arguments: [QueryExpression], in scope: SQLScope,
                          context: CompilationContext) throws -> SQLFragment {
        let values = try arguments.map { try context.value($0, in: scope) }
        return "ocd_function('\(function.rawValue)', " + SQLFragment.joined(values, separator: ", ") + ")"
    }

    package func average(of value: SQLFragment, distinct: Bool) -> SQLFragment {
        "AVG(" + (distinct ? "DISTINCT " : "") + value + ")"
    }

    package func median(ofValuesIn values: SQLFragment) -> SQLFragment { "(SELECT ocd_median(v) FROM " + values + ")" }

    package func median(of member: SQLFragment, distinct: Bool, from: String, where condition: String) -> SQLFragment {
        "(SELECT ocd_median(" + (distinct ? "DISTINCT " : "") + member + ") FROM \(from) WHERE \(condition))"
    }

    package func requireAggregatable(_ collectionOperator: String, of kind: OperandKind,
                                     in context: CompilationContext) throws {}

    /// Through `ocd_function` the position has no column affinity, so text never matches a number (memory
    /// takes numbers only).
    package func literalIndex(_ members: [QueryExpression], _ position: QueryExpression, whole: QueryExpression,
                              in scope: SQLScope, context: CompilationContext) throws -> SQLFragment {
        var cases = "CASE ocd_function('noindex:', " + (try context.value(position, in: scope)) + ")"
        for (offset, member) in members.enumerated() {
            cases = cases + " WHEN \(offset) THEN " + (try context.value(member, in: scope))
        }
        return cases + " END"
    }

    /// `TOTAL` is a sum that is 0.0 over no rows; `ocd_median` runs memory's median.
    package func rowAggregate(_ function: QueryFunction, of operand: QueryExpression, _ argument: SQLFragment,
                              expression: QueryExpression, sumInDoublePrecision: Bool,
                              in context: CompilationContext) throws -> SQLFragment {
        let names: [QueryFunction: String] = [.sum: "TOTAL", .count: "COUNT", .min: "MIN", .max: "MAX", .average: "AVG",
                                              .median: "ocd_median"]
        return (names[function] ?? function.rawValue) + "(" + argument + ")"
    }

    /// Text sorts by the collation the comparison selector names, registered on the connection.
    package func ordering(_ value: SQLFragment, by descriptor: QuerySortDescriptor,
                          in context: CompilationContext) throws -> SQLFragment {
        var ordering = value
        if let collation = descriptor.comparator.collationName { ordering = ordering + " COLLATE \(collation)" }
        return descriptor.ascending ? ordering : ordering + " DESC"
    }

    // MARK: Migration statements

    package func quotedName(_ name: String) -> String { quoted(name) }
    package var temporarySchema: String { "temp" }
    package var qualifiesTemporaryIndexes: Bool { true }
    /// SQLite's two-argument `MAX` is a scalar function.
    package var greatest: String { "MAX" }
    package var doubleType: String { "REAL" }
    package var nullNumber: String { "NULL" }
    package var aliasesSubqueries: Bool { false }
    package func columnDefinition(forSQLiteType type: String) -> String { type }
    package func bookkeepingColumnDefinition(forSQLiteType type: String) -> String { type }
}
