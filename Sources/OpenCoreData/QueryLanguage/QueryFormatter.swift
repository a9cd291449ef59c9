import Foundation

/// Prints predicates and expressions as format strings that parse back to equal values.
///
/// Parentheses are added exactly where the parser's precedence would otherwise regroup the tree. A tree built
/// in code far deeper than ``QueryLanguageLimits/maximumNestingDepth`` (the parser builds none) prints its
/// parts beyond ``printingDepth`` as `…`, rather than recursing without bound: such a tree parses back to
/// nothing anyway.
package enum QueryFormatter {
    /// What stands for the parts of a tree beyond the nesting limit.
    static let elided = "…"

    /// How deep printing goes before it elides. The printer counts a level for each predicate, comparison and
    /// expression it enters, where the parser counts fewer (one for `-x`, none for a comparison), so the bound is
    /// a multiple of the parser's: every tree the parser accepts prints whole and parses back.
    static let printingDepth = QueryLanguageLimits.maximumNestingDepth * 4

    /// Words the parser treats as keywords; keys spelled like them are printed with a `#` escape.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "BETWEEN",
        "ANY", "SOME", "ALL", "NONE", "NIL", "NULL", "YES", "NO", "TRUE", "FALSE", "SELF",
        "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY", "CAST", "FUNCTION", "FIRST", "LAST", "SIZE", "TERNARY",
    ]

    static func isReserved(_ word: String) -> Bool { reservedWords.contains(word.uppercased()) }

    package static func format(_ predicate: QueryPredicate, depth: Int = 0) -> String {
        guard depth < printingDepth else { return elided }
        func part(_ predicate: QueryPredicate) -> String { QueryFormatter.format(predicate, depth: depth + 1) }
        func comparisonText(_ comparison: QueryComparison) -> String { QueryFormatter.format(comparison, depth: depth + 1) }
        switch predicate {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let parts):
            if parts.isEmpty { return "TRUEPREDICATE" }
            return parts.map { member in
                switch member {
                case .and, .or: return "(" + part(member) + ")"
                default: return part(member)
                }
            }.joined(separator: " AND ")
        case .or(let parts):
            if parts.isEmpty { return "FALSEPREDICATE" }
            return parts.map { member in
                switch member {
                case .or: return "(" + part(member) + ")"
                case .and(let inner) where inner.count <= 1: return "(" + part(member) + ")"
                default: return part(member)
                }
            }.joined(separator: " OR ")
        case .not(let inner):
            switch inner {
            case .and, .or: return "NOT (" + part(inner) + ")"
            default: return "NOT " + part(inner)
            }
        case .comparison(let comparison): return comparisonText(comparison)
        }
    }

    package static func format(_ comparison: QueryComparison, depth: Int = 0) -> String {
        guard depth < printingDepth else { return elided }
        func part(_ expression: QueryExpression) -> String { QueryFormatter.format(expression, depth: depth + 1) }
        var text = comparison.modifier == .direct ? "" : comparison.modifier.rawValue + " "
        text += part(comparison.lhs) + " " + comparison.op.rawValue
        var flags = ""
        if comparison.options.contains(.caseInsensitive) { flags += "c" }
        if comparison.options.contains(.diacriticInsensitive) { flags += "d" }
        if comparison.options.contains(.normalized) { flags += "n" }
        if comparison.options.contains(.localeSensitive) { flags += "l" }
        if !flags.isEmpty { text += "[" + flags + "]" }
        return text + " " + part(comparison.rhs)
    }

    // Expression precedence levels: 1 additive, 2 multiplicative, 3 power, 4 unary, 5 postfix/primary.
    package static func format(_ expression: QueryExpression, level: Int = 0, depth: Int = 0) -> String {
        guard depth < printingDepth else { return elided }
        func part(_ expression: QueryExpression, level: Int = 0) -> String {
            QueryFormatter.format(expression, level: level, depth: depth + 1)
        }
        func predicateText(_ predicate: QueryPredicate) -> String { QueryFormatter.format(predicate, depth: depth + 1) }
        func wrap(_ text: String, _ own: Int) -> String { own < level ? "(" + text + ")" : text }
        switch expression {
        case .constant(let value):
            let text = value.formatText
            return text.hasPrefix("-") ? wrap(text, 4) : text
        case .evaluatedObject: return "SELF"
        case .keyPath(let base, let components):
            let path = components.map(formatKey).joined(separator: ".")
            switch base {
            case .evaluatedObject: return components.isEmpty ? "SELF" : path
            default:
                let baseText = part(base, level: 5)
                return components.isEmpty ? baseText : baseText + "." + path
            }
        case .variable(let name): return "$" + name
        case .aggregate(let members): return "{" + members.map { part($0) }.joined(separator: ", ") + "}"
        case .arithmetic(let op, let lhs, let rhs):
            let own: Int
            switch op {
            case .add, .subtract: own = 1
            case .multiply, .divide: own = 2
            case .power: own = 3
            }
            return wrap(part(lhs, level: own) + " " + op.rawValue + " " + part(rhs, level: own + 1), own)
        case .negate(let operand): return wrap("-" + part(operand, level: 4), 4)
        case .function(let function, let arguments):
            if function.arity == 0 && arguments.isEmpty { return function.rawValue + "()" }
            return function.rawValue + "(" + arguments.map { part($0) }.joined(separator: ", ") + ")"
        case .index(let base, let index):
            let position: String
            switch index {
            case .first: position = "FIRST"
            case .last: position = "LAST"
            case .size: position = "SIZE"
            case .at(let value): position = part(value)
            }
            return part(base, level: 5) + "[" + position + "]"
        case .ternary(let predicate, let whenTrue, let whenFalse):
            return "TERNARY(" + predicateText(predicate) + ", " + part(whenTrue) + ", " + part(whenFalse) + ")"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(" + part(collection) + ", $" + variable + ", " + predicateText(predicate) + ")"
        case .cast(let value, let type):
            return "CAST(" + part(value) + ", \"" + type.rawValue + "\")"
        }
    }

    static func formatKey(_ key: String) -> String {
        if key.hasPrefix("@") { return key }
        return isReserved(key) ? "#" + key : key
    }
}
