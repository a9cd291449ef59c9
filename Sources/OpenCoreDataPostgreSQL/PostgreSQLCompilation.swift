import Foundation
import OpenCoreData

/// The PostgreSQL dialect's own SQL forms (docs/POSTGRESQL.md, "Queries").
///
/// On SQLite the compiler calls Swift functions registered on the connection wherever SQL's own meaning
/// differs from memory's. On PostgreSQL it uses built-ins only where they provably give memory's answer on
/// the store's layout (text columns in the `"C"` collation, so `<` and MIN/MAX are code point order, and `=`
/// is exact), and refuses the rest with a ``QueryDialectRefusal`` naming the comparison.
extension CompilationContext {
    /// Refuses on PostgreSQL unless every operand is known to be a number (or nil): arithmetic and
    /// aggregates there fail on text, where SQLite would read it as a number.
    func requireNumbers(_ operands: [QueryExpression]) throws {
        for operand in operands where ![.number, .null].contains(try operandKind(operand)) {
            throw refusal(.operandKind)
        }
    }

    /// Refuses bytes (a UUID, data) compared with text or a number, and an object with text: PostgreSQL has
    /// no such comparison, where memory answers "not equal". Objects compare with numbers as primary keys.
    func requireComparableKinds(_ left: QueryExpression, _ right: QueryExpression) throws {
        let kinds = (try operandKind(left), try operandKind(right))
        func clashes(_ kind: OperandKind, _ expression: QueryExpression, _ other: OperandKind) -> Bool {
            kind == .other && (other == .text || (other == .number && !isObject(expression)))
        }
        if clashes(kinds.0, left, kinds.1) || clashes(kinds.1, right, kinds.0) { throw refusal(.operandKind) }
    }

    /// Whether memory computes the expression as a whole number (Int64): integer and boolean attributes,
    /// integer constants, counts, and `+`, `-`, `*` of those. PostgreSQL keeps such values in BIGINT.
    func isInteger(_ expression: QueryExpression) throws -> Bool {
        if isConstant(expression) {
            switch try foldedConstant(expression) {
            case .int?, .bool?: return true
            default: return false
            }
        }
        switch expression {
        case .keyPath(let base, let components):
            if components.last == "@count" { return true }
            let entity: EntityDescription
            switch base {
            case .evaluatedObject: entity = rootScope.entity
            case .variable(let name):
                guard let row = boundRows[name] else { return false }
                entity = row.entity
            default: return false
            }
            switch attributeType(entity, components) {
            case .integer16?, .integer32?, .integer64?, .boolean?: return true
            default: return false
            }
        case .arithmetic(let op, let lhs, let rhs):
            guard [.add, .subtract, .multiply].contains(op) else { return false }
            return try isInteger(lhs) && isInteger(rhs)
        case .negate(let operand): return try isInteger(operand)
        case .index(_, .size): return true
        default: return false
        }
    }

    /// The functions SQLite hands to `ocd_function`, where PostgreSQL can compute memory's answer.
    func postgreSQLFunction(_ function: QueryFunction, _ arguments: [QueryExpression], in scope: SQLScope) throws -> SQLFragment {
        switch function {
        case .sqrt, .log, .ln, .exp, .ceiling, .floor, .trunc, .modulus:
            return try postgreSQLMathFunction(function, arguments, in: scope)
        case .length:
            return try postgreSQLLength(arguments[0], in: scope)
        case .uppercase, .lowercase:
            // Memory maps text only; anything else gives nil.
            switch try operandKind(arguments[0]) {
            case .text, .null:
                let table = function == .uppercase ? CaseMappingTable.uppercase : CaseMappingTable.lowercase
                return table.functionName + "(" + (try value(arguments[0], in: scope)) + ")"
            case .unknown: throw refusal(.operandKind)
            default: return SQLFragment("CAST(NULL AS TEXT)")
            }
        default:
            throw refusal(.function)
        }
    }

    /// The math functions, as memory computes them: NULL where memory's result is not a number, never a
    /// server error where memory has an answer (PostgreSQL refuses the logarithm of 0, memory gives -∞).
    func postgreSQLMathFunction(_ function: QueryFunction, _ arguments: [QueryExpression], in scope: SQLScope) throws -> SQLFragment {
        try requireNumbers(arguments)
        let values = try arguments.map { try value($0, in: scope) }
        func double(_ fragment: SQLFragment) -> SQLFragment { "CAST(" + fragment + " AS DOUBLE PRECISION)" }
        switch function {
        case .sqrt: return "(CASE WHEN " + values[0] + " >= 0 THEN sqrt(" + double(values[0]) + ") END)"
        case .log, .ln:
            let name = function == .log ? "log" : "ln"
            return "(CASE WHEN " + values[0] + " > 0 THEN \(name)(" + double(values[0]) + ") WHEN " + values[0]
                + " = 0 THEN CAST('-Infinity' AS DOUBLE PRECISION) END)"
        case .exp: return "exp(" + double(values[0]) + ")"
        case .ceiling, .floor, .trunc:
            // Whole numbers are their own ceiling, floor and truncation, and keep their precision.
            if try isInteger(arguments[0]) { return values[0] }
            let name = function == .ceiling ? "ceil" : function == .floor ? "floor" : "trunc"
            return "\(name)(" + double(values[0]) + ")"
        case .modulus:
            // C's remainder on whole numbers (the dividend's sign); fmod on doubles has no exact equal.
            guard try isInteger(arguments[0]), try isInteger(arguments[1]) else { throw refusal(.function) }
            return "(CASE WHEN " + values[1] + " <> 0 THEN mod(" + values[0] + ", " + values[1] + ") END)"
        default:
            throw refusal(.function)
        }
    }

    /// `CAST(x, 'NSNumber' | 'NSDate' | 'NSString')` where ``QueryCast`` gives a value PostgreSQL computes alike:
    /// numbers (and dates, as seconds) to numbers and dates, whole numbers and text to text.
    func postgreSQLCast(_ operand: QueryExpression, to type: QueryCastType, in scope: SQLScope) throws -> SQLFragment {
        let kind = try operandKind(operand)
        let operandValue = try value(operand, in: scope)
        let numeric = kind == .number || kind == .null
        switch type {
        case .number, .date:
            guard numeric else { throw refusal(.function) }
            // Whole numbers stay whole; decimals and dates become doubles, as in memory.
            if try isInteger(operand) { return operandValue }
            return "CAST(" + operandValue + " AS DOUBLE PRECISION)"
        case .string:
            if kind == .text || kind == .null { return operandValue }
            // The digits, as Swift's String(Int64) writes them; doubles print differently in the two.
            guard try isInteger(operand) else { throw refusal(.function) }
            return "CAST(" + operandValue + " AS TEXT)"
        default:
            throw refusal(.function)
        }
    }

    /// `length:` of text: UTF-16 code units, as NSString counts them (memory's answer): the code points, plus
    /// one for each beyond U+FFFF, which UTF-16 writes as two.
    func postgreSQLLength(_ operand: QueryExpression, in scope: SQLScope) throws -> SQLFragment {
        guard [.text, .null].contains(try operandKind(operand)) else { throw refusal(.operandKind) }
        let text = try value(operand, in: scope)
        // The pattern holds the characters themselves, so no escape syntax is involved.
        let outsideBMP = "[^\u{10000}-\u{10FFFF}]"
        return "(length(" + text + ") + length(regexp_replace(" + text + ", "
            + SQLFragment.parameter(outsideBMP.storeValue) + ", '', 'g')))"
    }

    /// The median of the numbers `values` selects (one column `v`, NULLs left out): the middle one, or the
    /// mean of the middle two in double precision, as memory computes it.
    static func postgreSQLMedian(of values: SQLFragment) -> SQLFragment {
        "(SELECT AVG(v) FROM (SELECT v, row_number() OVER (ORDER BY v) AS r, count(*) OVER () AS n FROM ("
            + values + ") AS ocd_members) AS ocd_ranked WHERE r IN ((n + 1) / 2, (n + 2) / 2))"
    }

    /// `median:(operand)` as a fetched value, over the rows of a dictionary fetch or of each group: the middle
    /// number, or the mean of the middle two in double precision, as SQLite's `ocd_median` and memory compute
    /// it. Ordered by value, the first value reaching half the rows and the first reaching half of them from the
    /// top are the same row for an odd count and the middle two for an even one.
    ///
    /// Text, bytes and nil are no numbers, so their median is nil, as SQLite's.
    ///
    /// - Throws: ``QueryDialectRefusal`` (`operandKind`) naming `expression` when the kind of `operand` depends
    ///   on the row.
    func postgreSQLMedianAggregate(of operand: QueryExpression, _ argument: SQLFragment,
                                   expression: QueryExpression) throws -> SQLFragment {
        switch try operandKind(operand) {
        case .number: break
        case .text, .other, .null: return SQLFragment("CAST(NULL AS DOUBLE PRECISION)")
        case .unknown: throw refusal(.operandKind, subject: QueryFormatter.format(expression))
        }
        let number = "CAST(" + argument + " AS DOUBLE PRECISION)"
        let low = "percentile_disc(0.5) WITHIN GROUP (ORDER BY " + number + ")"
        let high = "percentile_disc(0.5) WITHIN GROUP (ORDER BY " + number + " DESC)"
        // Equal middles are returned as they are: their sum could overflow where the value itself does not.
        return "(CASE WHEN " + low + " = " + high + " THEN " + low + " ELSE (" + low + " + " + high + ") / 2 END)"
    }

    /// `{a, b, c}[position]` for a position read from the row: memory takes whole, non-negative numbers only.
    func postgreSQLLiteralIndex(_ members: [QueryExpression], _ position: QueryExpression, whole: QueryExpression,
                                in scope: SQLScope) throws -> SQLFragment {
        try requireNumbers([position])
        // CASE needs members of one kind.
        if try operandKind(whole) == .unknown { throw refusal(.operandKind) }
        var cases = "CASE " + (try value(position, in: scope))
        for (offset, member) in members.enumerated() {
            cases = cases + " WHEN \(offset) THEN " + (try value(member, in: scope))
        }
        return cases + " END"
    }

    /// `+`, `-`, `*`, `/`, `**` on numbers; `/` in double precision with NULL for a zero divisor, as memory
    /// divides.
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
        case .power:
            // pow's answers where PostgreSQL's power() fails: NaN (nil) for a negative base and a fractional
            // exponent, +∞ for 0 to a negative power.
            let base = "CAST(" + left + " AS DOUBLE PRECISION)", exponent = "CAST(" + right + " AS DOUBLE PRECISION)"
            return "(CASE WHEN " + base + " < 0 AND " + exponent + " <> trunc(" + exponent + ") THEN NULL WHEN " + base
                + " = 0 AND " + exponent + " < 0 THEN CAST('Infinity' AS DOUBLE PRECISION) ELSE power(" + base + ", "
                + exponent + ") END)"
        }
    }

    /// A comparison SQLite hands to `ocd_compare`: the string operators on two text operands, with functions
    /// that work on code points as memory does, `[c]` through the store's case folding function; the rest
    /// refused.
    func postgreSQLComparison(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                              _ lhs: SQLFragment, _ rhs: SQLFragment,
                              operands: (QueryExpression, QueryExpression)?) throws -> SQLFragment {
        if !options.isEmpty { return try caseInsensitiveComparison(op, options, lhs, rhs, operands: operands) }
        switch op {
        case .matches: return try postgreSQLMatches(lhs, operands: operands, caseInsensitive: false)
        case .beginsWith, .endsWith, .contains, .in, .like: break
        // What remains reaches here only when the operands' kinds differ, or cannot be told, for each row.
        default:
            guard let (left, right) = operands else { throw refusal(.operandKind) }
            switch (try operandKind(left), try operandKind(right)) {
            case (.text, .number): return spelledNumberComparison(op, text: lhs, number: rhs, textOnLeft: true)
            case (.number, .text): return spelledNumberComparison(op, text: rhs, number: lhs, textOnLeft: false)
            default: throw refusal(.operandKind)
            }
        }
        guard let (left, right) = operands else { throw refusal(.operandKind) }
        let kinds = (try operandKind(left), try operandKind(right))
        // A string operator with nil on either side is false in memory.
        if kinds.0 == .null || kinds.1 == .null { return SQLFragment("FALSE") }
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

    /// `[c]`: memory folds both sides with Foundation's case folding when both are text, and ignores the option
    /// otherwise. The store's SQL function (``CaseMappingTable``) folds a row's text alike; a LIKE pattern is
    /// folded here, before it is translated. `[d]` and `[cd]` are refused: diacritic folding depends on the
    /// scalars around a mark (a mark after a letter goes, one at the start stays) and reorders marks, which
    /// no per-scalar table can say.
    private func caseInsensitiveComparison(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                                           _ lhs: SQLFragment, _ rhs: SQLFragment,
                                           operands: (QueryExpression, QueryExpression)?) throws -> SQLFragment {
        guard options == [.caseInsensitive] else { throw refusal(.foldingOptions) }
        if op == .matches { return try postgreSQLMatches(lhs, operands: operands, caseInsensitive: true) }
        guard let (left, right) = operands else { throw refusal(.operandKind) }
        let kinds = (try operandKind(left), try operandKind(right))
        if kinds.0 == .unknown || kinds.1 == .unknown { throw refusal(.operandKind) }
        guard kinds.0 == .text, kinds.1 == .text else { return try scalarTest(op, [], lhs, rhs, operands: operands) }
        let function = CaseMappingTable.caseFolding.functionName
        let foldedLeft = function + "(" + lhs + ")", foldedRight = function + "(" + rhs + ")"
        switch op {
        case .beginsWith, .endsWith, .contains, .in:
            return try postgreSQLComparison(op, [], foldedLeft, foldedRight, operands: operands)
        case .like:
            guard let constant = try foldedConstant(right), let pattern = QueryValueSemantics.text(constant) else {
                throw refusal(.computedLikePattern)
            }
            let folded = QueryValueSemantics.fold(pattern, options)
            return "(" + foldedLeft + " LIKE " + (try parameter(.string(CompilationContext.postgreSQLLikePattern(folded)))) + ")"
        default:
            return try scalarTest(op, [], foldedLeft, foldedRight, operands: operands)
        }
    }

    /// `MATCHES` (`[c]` when `caseInsensitive`) of text with a constant pattern: the pattern checked as memory
    /// checks it, then translated to PostgreSQL's regular expressions (``PostgreSQLRegularExpression``); nil on
    /// either side is false, as in memory.
    ///
    /// - Throws: ``QueryLanguageError`` for a pattern ICU refuses (as memory throws); ``QueryDialectRefusal``
    ///   (`regularExpression`, its `detail` naming the construct) for a pattern outside the translated subset
    ///   or read from the row, (`operandKind`) for operands not known to be text.
    private func postgreSQLMatches(_ lhs: SQLFragment, operands: (QueryExpression, QueryExpression)?,
                                   caseInsensitive: Bool) throws -> SQLFragment {
        guard let (left, right) = operands else { throw refusal(.operandKind) }
        let kinds = (try operandKind(left), try operandKind(right))
        if kinds.0 == .null || kinds.1 == .null { return SQLFragment("FALSE") }
        guard kinds.0 == .text, kinds.1 == .text else { throw refusal(.operandKind) }
        guard let constant = try foldedConstant(right), let pattern = QueryValueSemantics.text(constant) else {
            throw refusal(.regularExpression, detail: "the pattern must be a constant")
        }
        _ = try QueryStringMatching.anchoredExpression(pattern, caseInsensitive: caseInsensitive)
        let translated: String
        do {
            translated = try PostgreSQLRegularExpression.translate(pattern, caseInsensitive: caseInsensitive)
        } catch {
            throw refusal(.regularExpression, detail: error.construct)
        }
        // The "C" collation makes ranges code point ranges whatever the operand's own collation.
        return "((" + lhs + ") COLLATE \"C\" ~ " + (try parameter(.string(translated))) + ")"
    }

    /// A number compared with text read from the row, as memory compares them: the text as the number it
    /// spells (``QueryValueSemantics/spelledNumber(_:)``: ASCII digits, optional sign, fraction and exponent,
    /// spaces around), exactly when it is a whole number in 64 bits, else in double precision; text that spells
    /// no number (or nil on one side) is neither equal nor ordered, so only `!=` holds; nil equals nil.
    func spelledNumberComparison(_ op: QueryComparison.Operator, text: SQLFragment, number: SQLFragment,
                                 textOnLeft: Bool) -> SQLFragment {
        let operators: [QueryComparison.Operator: String] = [
            .equal: " = ", .notEqual: " = ", .less: " < ", .lessOrEqual: " <= ", .greater: " > ", .greaterOrEqual: " >= ",
        ]
        let sqlOperator = operators[op] ?? " = "
        func compared(_ spelled: SQLFragment) -> SQLFragment {
            textOnLeft ? "(" + spelled + sqlOperator + number + ")" : "(" + number + sqlOperator + spelled + ")"
        }
        let space = "[\u{9}-\u{D} ]*"
        let integerPattern = "^" + space + "[+-]?[0-9]+" + space + "$"
        let numberPattern = "^" + space + "[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?" + space + "$"
        let asInteger = "CAST(" + text + " AS NUMERIC)"
        let asDouble = "CAST(" + text + " AS DOUBLE PRECISION)"
        // CASE decides in order, so text is cast only once its pattern matched.
        let test = "CASE WHEN " + text + " ~ " + SQLFragment.parameter(integerPattern.storeValue) + " THEN CASE WHEN "
            + asInteger + " BETWEEN -9223372036854775808 AND 9223372036854775807 THEN " + compared(asInteger) + " ELSE "
            + compared(asDouble) + " END WHEN " + text + " ~ " + SQLFragment.parameter(numberPattern.storeValue)
            + " THEN " + compared(asDouble) + " END"
        var holds = "COALESCE(" + test + ", FALSE)"
        // nil equals nil, as in memory.
        if op == .equal || op == .notEqual { holds = "(" + holds + " OR (" + text + " IS NULL AND " + number + " IS NULL))" }
        return op == .notEqual ? "(NOT " + holds + ")" : holds
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

    /// One ORDER BY term. nil sorts first ascending (and last descending), as in memory. Text sorts in code
    /// point order (`compare:`); by `caseInsensitiveCompare:` as memory does (`StringCollation`): by the
    /// canonical decomposition folded scalar by scalar (the store's `ocd_sort_fold_<digest>` function of
    /// PostgreSQL's `normalize(…, NFD)`), then by scalars for strings that fold alike. The localized selectors
    /// are refused on text: no PostgreSQL collation orders as their Swift code does.
    func postgreSQLOrdering(_ value: SQLFragment, by descriptor: QuerySortDescriptor) throws -> SQLFragment {
        let path = descriptor.key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let kind = try operandKind(.keyPath(base: .evaluatedObject, components: path))
        let direction = descriptor.ascending ? " NULLS FIRST" : " DESC NULLS LAST"
        if descriptor.comparator == .caseInsensitiveCompare, kind == .text {
            let key = CaseMappingTable.sortFolding.functionName + "(normalize(" + value + ", NFD)) COLLATE \"C\""
            return key + direction + ", " + value + " COLLATE \"C\"" + direction
        }
        if descriptor.comparator != .compare, kind != .number, kind != .other {
            throw refusal(.sortComparator, subject: "the sort on '\(descriptor.key)' by \(descriptor.comparator.rawValue):")
        }
        return value + direction
    }
}
