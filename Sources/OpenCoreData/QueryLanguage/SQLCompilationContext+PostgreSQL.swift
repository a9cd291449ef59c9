import Foundation
import GRDB

/// The PostgreSQL dialect's own SQL forms (docs/POSTGRESQL.md, "Queries").
///
/// On SQLite the compiler calls Swift functions registered on the connection wherever SQL's own meaning
/// differs from memory's. On PostgreSQL it uses built-ins only where they provably give memory's answer on
/// the store's layout (text columns in the `"C"` collation, so `<` and MIN/MAX are code point order, and `=`
/// is exact), and refuses the rest with a ``QueryDialectRefusal`` naming the comparison.
extension CompilationContext {
    var dialect: SQLDialect { compiler.dialect }

    /// The refusal of `construct`, naming the comparison being compiled (or the whole query's entity).
    func refusal(_ construct: QueryDialectRefusal.Construct, subject: String? = nil) -> QueryDialectRefusal {
        let described = subject ?? currentComparison.map { QueryFormatter.format($0) } ?? "a query on \(compiler.entity.name)"
        return QueryDialectRefusal(construct, in: dialect, expression: described)
    }

    /// A constant as a bound parameter; on PostgreSQL, text holding U+0000 is refused (the server cannot
    /// take it, and memory compares it as any other character).
    func parameter(_ constant: QueryValue) throws -> SQLFragment {
        let bound = try QuerySQLFunctions.bind(constant)
        if dialect == .postgreSQL, case .string(let text) = bound.storage, text.utf8.contains(0) {
            throw refusal(.nulCharacter)
        }
        return SQLFragment.parameter(bound)
    }

    /// Refuses on PostgreSQL unless every operand is known to be a number (or nil): arithmetic and
    /// aggregates there fail on text, where SQLite would read it as a number.
    func requireNumbers(_ operands: [QueryExpression]) throws {
        for operand in operands where ![.number, .null].contains(try operandKind(operand)) {
            throw refusal(.operandKind)
        }
    }

    /// The kind of the attribute a plain key path from `entity` reaches (`.unknown` past anything else).
    func attributeKind(_ entity: EntityDescription, _ path: [String]) -> OperandKind {
        var current = entity
        for (position, key) in path.enumerated() {
            if let attribute = current.attributesByName[key] {
                return position == path.count - 1 ? OperandKind(attribute.attributeType) : .unknown
            }
            guard let relationship = current.propertiesByName[key] as? RelationshipDescription, !relationship.isToMany,
                  let destination = relationship.destinationEntity else { return .unknown }
            current = destination
        }
        return .unknown
    }

    /// `+`, `-`, `*`, `/` on numbers; `/` in double precision with NULL for a zero divisor, as memory divides.
    /// Powers are refused (PostgreSQL fails where memory gives nil).
    func postgreSQLArithmetic(_ op: QueryExpression.ArithmeticOperator, _ lhs: QueryExpression, _ rhs: QueryExpression,
                              in scope: SQLScope) throws -> SQLFragment {
        try requireNumbers([lhs, rhs])
        let left = try value(lhs, in: scope), right = try value(rhs, in: scope)
        switch op {
        case .add: return "(" + left + " + " + right + ")"
        case .subtract: return "(" + left + " - " + right + ")"
        case .multiply: return "(" + left + " * " + right + ")"
        case .divide:
            return "(CAST(" + left + " AS DOUBLE PRECISION) / NULLIF(CAST(" + right + " AS DOUBLE PRECISION), 0))"
        case .power: throw refusal(.function)
        }
    }

    /// A comparison SQLite hands to `ocd_compare`: the string operators without `[c]`/`[d]` on two text
    /// operands, with functions that work on code points as memory does; the rest refused.
    func postgreSQLComparison(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                              _ lhs: SQLFragment, _ rhs: SQLFragment,
                              operands: (QueryExpression, QueryExpression)?) throws -> SQLFragment {
        guard options.isEmpty else { throw refusal(.foldingOptions) }
        switch op {
        case .matches: throw refusal(.regularExpression)
        case .beginsWith, .endsWith, .contains, .in, .like: break
        // What remains reaches here only when the operands' kinds differ, or cannot be told, for each row.
        default:
            let unknown = try operands.map { try operandKind($0.0) == .unknown || operandKind($0.1) == .unknown } ?? true
            throw refusal(unknown ? .operandKind : .numberComparedWithText)
        }
        guard let (left, right) = operands else { throw refusal(.operandKind) }
        let kinds = (try operandKind(left), try operandKind(right))
        // A string operator with nil on either side is false in memory.
        if kinds.0 == .null || kinds.1 == .null { return SQLFragment(dialect.boolean(false)) }
        guard kinds.0 == .text, kinds.1 == .text else { throw refusal(.operandKind) }
        switch op {
        case .beginsWith: return "starts_with(" + lhs + ", " + rhs + ")"
        // right(s, 0) is '', so an empty suffix matches, as in memory.
        case .endsWith: return "(right(" + lhs + ", length(" + rhs + ")) = " + rhs + ")"
        // strpos finds the empty string at 1, as memory finds it in any string.
        case .contains: return "(strpos(" + lhs + ", " + rhs + ") > 0)"
        case .in: return "(strpos(" + rhs + ", " + lhs + ") > 0)"
        default:
            guard let constant = try foldedConstant(right), let pattern = QueryValueSemantics.text(constant) else {
                throw refusal(.computedLikePattern)
            }
            return "(" + lhs + " LIKE " + (try parameter(.string(CompilationContext.postgreSQLLikePattern(pattern)))) + ")"
        }
    }

    /// Memory's LIKE pattern (`*` any run, `?` one character, `\` escapes the next) as PostgreSQL's
    /// (`%`, `_`, `\`), with PostgreSQL's own wildcards taken literally. A trailing `\` is a literal
    /// backslash in memory, escaped here.
    static func postgreSQLLikePattern(_ pattern: String) -> String {
        var result = ""
        var escaping = false
        func literal(_ scalar: Unicode.Scalar) {
            if scalar == "%" || scalar == "_" || scalar == "\\" { result += "\\" }
            result.unicodeScalars.append(scalar)
        }
        for scalar in pattern.unicodeScalars {
            if escaping {
                literal(scalar)
                escaping = false
                continue
            }
            switch scalar {
            case "\\": escaping = true
            case "*": result += "%"
            case "?": result += "_"
            default: literal(scalar)
            }
        }
        if escaping { literal("\\") }
        return result
    }

    /// One ORDER BY term. nil sorts first ascending (and last descending), as in memory; text sorts in code
    /// point order (`compare:`), the only string order PostgreSQL has alike, so other comparison selectors
    /// are refused on text.
    func ordering(_ value: SQLFragment, by descriptor: QuerySortDescriptor) throws -> SQLFragment {
        switch dialect {
        case .sqlite:
            var ordering = value
            if let collation = descriptor.comparator.collationName { ordering = ordering + " COLLATE \(collation)" }
            return descriptor.ascending ? ordering : ordering + " DESC"
        case .postgreSQL:
            let path = descriptor.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let kind = try operandKind(.keyPath(base: .evaluatedObject, components: path))
            if descriptor.comparator != .compare, kind != .number, kind != .other {
                throw refusal(.sortComparator, subject: "the sort on '\(descriptor.key)' by \(descriptor.comparator.rawValue):")
            }
            return value + (descriptor.ascending ? " NULLS FIRST" : " DESC NULLS LAST")
        }
    }
}
