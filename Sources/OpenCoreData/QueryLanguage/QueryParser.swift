import Foundation

/// Recursive-descent parser for Apple's predicate format-string grammar.
///
/// Precedence, loosest first: `OR`, `AND`, `NOT`, comparison, `+ -`, `* /`, `**`, unary `-`, key paths.
/// Nesting is capped at ``QueryLanguageLimits/maximumNestingDepth`` so hostile input cannot exhaust the
/// stack, here or in any later walk of the tree (printing, evaluating, compiling, tearing it down).
struct QueryParser {

    private let tokens: [QueryToken]
    private var index = 0
    private let arguments: [Any]
    private var argumentIndex = 0
    private var depth = 0
    /// For each `(` token, the index of its matching `)` (absent when unbalanced).
    private let matchingParenthesis: [Int: Int]

    private init(format: String, arguments: [Any]) throws {
        tokens = try QueryLexer.tokenize(format)
        self.arguments = arguments
        var matches: [Int: Int] = [:]
        var open: [Int] = []
        for (position, token) in tokens.enumerated() {
            if token.kind == .symbol("(") { open.append(position) }
            if token.kind == .symbol(")"), let start = open.popLast() { matches[start] = position }
        }
        matchingParenthesis = matches
    }

    static func parsePredicate(_ format: String, arguments: [Any]) throws -> QueryPredicate {
        var parser = try QueryParser(format: format, arguments: arguments)
        let predicate = try parser.parseOr()
        try parser.expectEnd()
        return predicate
    }

    static func parseExpression(_ format: String, arguments: [Any]) throws -> QueryExpression {
        var parser = try QueryParser(format: format, arguments: arguments)
        let expression = try parser.parseExpression()
        try parser.expectEnd()
        return expression
    }

    // MARK: Tokens

    private var current: QueryToken { tokens[min(index, tokens.count - 1)] }

    private func token(at offset: Int) -> QueryToken { tokens[min(index + offset, tokens.count - 1)] }

    private func error(_ message: String, at token: QueryToken? = nil) -> QueryLanguageError {
        QueryLanguageError(position: (token ?? current).position, message: message)
    }

    private func describe(_ token: QueryToken) -> String {
        switch token.kind {
        case .word(let word, let escaped): return escaped ? "'#\(word)'" : "'\(word)'"
        case .atWord(let word): return "'@\(word)'"
        case .variable(let name): return "'$\(name)'"
        case .integer(let value): return "number \(value)"
        case .double(let value): return "number \(value)"
        case .string: return "a string"
        case .argument: return "a format argument"
        case .percent: return "'%%'"
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "the end of the format"
        }
    }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func isSymbol(_ symbol: String, _ token: QueryToken? = nil) -> Bool {
        (token ?? current).kind == .symbol(symbol)
    }

    /// An unescaped word, upper-cased, when the token is one.
    private func keyword(_ token: QueryToken? = nil) -> String? {
        if case .word(let word, false) = (token ?? current).kind { return word.uppercased() }
        return nil
    }

    private mutating func expectSymbol(_ symbol: String, _ context: String) throws {
        guard isSymbol(symbol) else { throw error("expected '\(symbol)' \(context), found \(describe(current))") }
        advance()
    }

    private func expectEnd() throws {
        guard current.kind == .end else { throw error("expected the end of the format, found \(describe(current))") }
    }

    private mutating func enter() throws {
        depth += 1
        if depth > QueryLanguageLimits.maximumNestingDepth {
            throw QueryLanguageError.nestingTooDeep(at: current.position, while: "parsing")
        }
    }

    // MARK: Predicates

    mutating func parseOr() throws -> QueryPredicate {
        try enter()
        defer { depth -= 1 }
        var parts = [try parseAnd()]
        while isSymbol("OR") || keyword() == "OR" {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws -> QueryPredicate {
        var parts = [try parseNot()]
        while isSymbol("AND") || keyword() == "AND" {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws -> QueryPredicate {
        if isSymbol("NOT") || keyword() == "NOT" {
            try enter()
            defer { depth -= 1 }
            advance()
            return .not(try parseNot())
        }
        return try parsePrimaryPredicate()
    }

    private static let operatorWords: Set<String> = ["BETWEEN", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES"]
    private static let expressionContinuations: Set<String> = ["==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "**", ".", "["]

    private mutating func parsePrimaryPredicate() throws -> QueryPredicate {
        if isSymbol("(") {
            // A parenthesised predicate, unless what follows the `)` shows it was an expression: `(a + b) > 2`.
            // An unclosed `(` is read as a predicate, so the error points at the missing `)`.
            var continuesExpression = false
            if let close = matchingParenthesis[index] {
                let after = tokens[min(close + 1, tokens.count - 1)]
                if case .symbol(let symbol) = after.kind, QueryParser.expressionContinuations.contains(symbol) {
                    continuesExpression = true
                }
                if let word = keyword(after), QueryParser.operatorWords.contains(word) { continuesExpression = true }
            }
            if !continuesExpression {
                advance()
                let inner = try parseOr()
                try expectSymbol(")", "to close '('")
                return inner
            }
        }
        switch keyword() {
        case "TRUEPREDICATE": advance(); return .constant(true)
        case "FALSEPREDICATE": advance(); return .constant(false)
        default: return .comparison(try parseComparison())
        }
    }

    private mutating func parseComparison() throws -> QueryComparison {
        var modifier = QueryComparison.Modifier.direct
        switch keyword() {
        case "ANY", "SOME": modifier = .any; advance()
        case "ALL": modifier = .all; advance()
        case "NONE": modifier = .none; advance()
        default: break
        }
        let lhs = try parseExpression()
        let operatorToken = current
        let op: QueryComparison.Operator
        switch operatorToken.kind {
        case .symbol("=="): op = .equal
        case .symbol("!="): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="): op = .greaterOrEqual
        default:
            if keyword() == "UTI", isSymbol("-", token(at: 1)) {
                throw error("UTI-CONFORMS-TO and UTI-EQUALS are not supported (there is no type-identifier database on Linux)")
            }
            guard let word = keyword(), QueryParser.operatorWords.contains(word),
                  let named = QueryComparison.Operator(rawValue: word) else {
                throw error("expected a comparison operator (==, !=, <, >, IN, CONTAINS, LIKE…), found \(describe(current))")
            }
            op = named
        }
        advance()
        var options: QueryComparison.Options = []
        if isSymbol("[") {
            advance()
            guard case .word(let flags, false) = current.kind else {
                throw error("expected comparison options such as c, d or cd")
            }
            for flag in flags.lowercased() {
                switch flag {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                case "l": options.insert(.localeSensitive)
                default: throw error("unknown comparison option '\(flag)' (expected c, d, n or l)")
                }
            }
            advance()
            try expectSymbol("]", "to close the comparison options")
        }
        let rhsToken = current
        let rhs = try parseExpression()
        if op == .between {
            let count: Int?
            switch rhs {
            case .aggregate(let members): count = members.count
            case .constant(.array(let members)): count = members.count
            case .variable: count = nil
            default: count = 0
            }
            if let count, count != 2 { throw error("BETWEEN needs two bounds: {lower, upper}", at: rhsToken) }
        }
        return QueryComparison(lhs, op, rhs, modifier: modifier, options: options)
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> QueryExpression {
        try enter()
        // Each operator of a chain nests the tree one level deeper (`a + b + c` is `(a + b) + c`), so it
        // counts towards the cap although the loop itself does not recurse.
        var chained = 1
        defer { depth -= chained }
        var lhs = try parseMultiplicative()
        while isSymbol("+") || isSymbol("-") {
            let op: QueryExpression.ArithmeticOperator = isSymbol("+") ? .add : .subtract
            try enter()
            chained += 1
            advance()
            lhs = .arithmetic(op, lhs, try parseMultiplicative())
        }
        return lhs
    }

    private mutating func parseMultiplicative() throws -> QueryExpression {
        var chained = 0
        defer { depth -= chained }
        var lhs = try parsePower()
        while isSymbol("*") || isSymbol("/") {
            let op: QueryExpression.ArithmeticOperator = isSymbol("*") ? .multiply : .divide
            try enter()
            chained += 1
            advance()
            lhs = .arithmetic(op, lhs, try parsePower())
        }
        return lhs
    }

    private mutating func parsePower() throws -> QueryExpression {
        var chained = 0
        defer { depth -= chained }
        var lhs = try parseUnary()
        while isSymbol("**") {
            try enter()
            chained += 1
            advance()
            lhs = .arithmetic(.power, lhs, try parseUnary())
        }
        return lhs
    }

    private mutating func parseUnary() throws -> QueryExpression {
        guard isSymbol("-") else { return try parsePostfix() }
        try enter()
        defer { depth -= 1 }
        advance()
        return QueryParser.negated(try parseUnary())
    }

    /// `-operand`, with negative number literals folded so `-5` is the constant -5.
    static func negated(_ operand: QueryExpression) -> QueryExpression {
        switch operand {
        case .constant(.int(let value)) where value != Int64.min: return .constant(.int(-value))
        case .constant(.double(let value)): return .constant(.double(-value))
        case .constant(.decimal(let value)): return .constant(.decimal(-value))
        default: return .negate(operand)
        }
    }

    private mutating func parsePostfix() throws -> QueryExpression {
        var expression = try parsePrimaryExpression()
        // Each index nests the tree one level deeper, so it counts towards the nesting cap.
        var indexes = 0
        defer { depth -= indexes }
        while true {
            if isSymbol(".") {
                advance()
                switch current.kind {
                case .word(let word, _):
                    advance()
                    expression = QueryParser.appending(word, to: expression)
                case .atWord(let word):
                    advance()
                    expression = QueryParser.appending("@" + word, to: expression)
                case .argument(.keyPath):
                    let start = current
                    advance()
                    guard case .keyPath(_, let components) = try argumentExpression(.keyPath, at: start) else {
                        throw error("%K after '.' needs a key path", at: start)
                    }
                    for component in components { expression = QueryParser.appending(component, to: expression) }
                default: throw error("expected a key after '.', found \(describe(current))")
                }
            } else if isSymbol("[") {
                // Comparison options follow an operator, never an expression, so `[` here is an index.
                try enter()
                indexes += 1
                advance()
                let index: QueryIndex
                switch keyword() {
                case "FIRST": advance(); index = .first
                case "LAST": advance(); index = .last
                case "SIZE": advance(); index = .size
                default:
                    if isSymbol("]") { throw error("expected an index (FIRST, LAST, SIZE or a number) inside '[]'") }
                    index = .at(try parseExpression())
                }
                try expectSymbol("]", "to close the index")
                expression = .index(expression, index)
            } else {
                return expression
            }
        }
    }

    static func appending(_ component: String, to expression: QueryExpression) -> QueryExpression {
        if case .keyPath(let base, let components) = expression { return .keyPath(base: base, components: components + [component]) }
        return .keyPath(base: expression, components: [component])
    }

    private mutating func parsePrimaryExpression() throws -> QueryExpression {
        let start = current
        switch start.kind {
        case .integer(let value): advance(); return .constant(.int(value))
        case .double(let value): advance(); return .constant(.double(value))
        case .string(let value): advance(); return .constant(.string(value))
        case .percent: advance(); return .constant(.string("%"))
        case .variable(let name): advance(); return .variable(name)
        case .atWord(let word): advance(); return .keyPath(base: .evaluatedObject, components: ["@" + word])
        case .argument(let kind): advance(); return try argumentExpression(kind, at: start)
        case .symbol("("):
            try enter()
            defer { depth -= 1 }
            advance()
            let inner = try parseExpression()
            try expectSymbol(")", "to close '('")
            return inner
        case .symbol("{"):
            try enter()
            defer { depth -= 1 }
            advance()
            var members: [QueryExpression] = []
            if !isSymbol("}") {
                members.append(try parseExpression())
                while isSymbol(",") {
                    advance()
                    members.append(try parseExpression())
                }
            }
            try expectSymbol("}", "to close '{'")
            var constants: [QueryValue] = []
            for member in members {
                guard case .constant(let value) = member else { return .aggregate(members) }
                constants.append(value)
            }
            return .constant(.array(constants))
        case .word(let word, let escaped):
            if escaped { advance(); return .keyPath(base: .evaluatedObject, components: [word]) }
            return try wordExpression(word, at: start)
        default:
            throw error("expected an expression, found \(describe(start))")
        }
    }

    private mutating func wordExpression(_ word: String, at start: QueryToken) throws -> QueryExpression {
        switch word.uppercased() {
        case "NIL", "NULL": advance(); return .constant(.null)
        case "YES", "TRUE": advance(); return .constant(.bool(true))
        case "NO", "FALSE": advance(); return .constant(.bool(false))
        case "SELF": advance(); return .evaluatedObject
        case "SUBQUERY": return try parseSubquery()
        case "CAST": return try parseCast()
        case "FUNCTION": return try parseFunctionCall()
        case "TERNARY": return try parseTernary()
        case let upper where QueryFormatter.isReserved(upper):
            throw error("expected an expression, found keyword '\(word)' (write #\(word) for a key of that name)")
        default:
            break
        }
        // `name:(…)`, `add:to:(…)`, `now()` and `random()` are function calls.
        if isSymbol(":", token(at: 1)) {
            var name = word + ":"
            var length = 2
            while case .word(let part, false) = token(at: length).kind, isSymbol(":", token(at: length + 1)) {
                name += part + ":"
                length += 2
            }
            guard let function = QueryFunction(rawValue: name) else {
                throw error("unknown function '\(name)'")
            }
            for _ in 0..<length { advance() }
            try expectSymbol("(", "after '\(name)'")
            let arguments = try parseArgumentList()
            try checkArity(function, arguments.count, name: name, at: start)
            return .function(function, arguments)
        }
        if word == "now" || word == "random", isSymbol("(", token(at: 1)), let function = QueryFunction(rawValue: word) {
            advance(); advance()
            try expectSymbol(")", "after '\(word)('")
            return .function(function, [])
        }
        advance()
        return .keyPath(base: .evaluatedObject, components: [word])
    }

    private func checkArity(_ function: QueryFunction, _ count: Int, name: String, at token: QueryToken) throws {
        if let arity = function.arity {
            guard count == arity else {
                let expected = arity == 0 ? "no argument" : arity == 1 ? "1 argument" : "\(arity) arguments"
                throw error("'\(name)' takes \(expected), found \(count)", at: token)
            }
        } else if count == 0 {
            throw error("'\(name)' needs an argument", at: token)
        }
    }

    /// `FUNCTION(receiver, 'selector', arguments…)`: the receiver becomes the function's first argument.
    private mutating func parseFunctionCall() throws -> QueryExpression {
        try enter()
        defer { depth -= 1 }
        let start = current
        advance()
        try expectSymbol("(", "after FUNCTION")
        let receiver = try parseExpression()
        try expectSymbol(",", "after the FUNCTION receiver")
        let selectorToken = current
        let selector = try nameString("a selector name such as 'sqrt:'", in: "FUNCTION")
        var rest: [QueryExpression] = []
        while isSymbol(",") {
            advance()
            rest.append(try parseExpression())
        }
        try expectSymbol(")", "to close FUNCTION")
        guard let function = QueryFunction.named(selector: selector) else {
            throw error("unknown FUNCTION selector '\(selector)' (expected one of NSExpression's functions: "
                + QueryFunction.allCases.map(\.rawValue).joined(separator: " ") + ")", at: selectorToken)
        }
        if function.arity == 0 {
            throw error("'\(selector)' takes no receiver; write \(selector)()", at: selectorToken)
        }
        let all = [receiver] + rest
        if function.isAggregate, !rest.isEmpty {
            throw error("'\(selector)' takes the receiver alone, found \(rest.count) more argument(s)", at: selectorToken)
        }
        try checkArity(function, all.count, name: selector, at: start)
        return .function(function, all)
    }

    /// `TERNARY(predicate, trueExpression, falseExpression)`.
    private mutating func parseTernary() throws -> QueryExpression {
        try enter()
        defer { depth -= 1 }
        advance()
        try expectSymbol("(", "after TERNARY")
        let condition = try parseOr()
        try expectSymbol(",", "after the TERNARY predicate")
        let whenTrue = try parseExpression()
        try expectSymbol(",", "after the TERNARY true expression")
        let whenFalse = try parseExpression()
        try expectSymbol(")", "to close TERNARY")
        return .ternary(condition, whenTrue, whenFalse)
    }

    /// Comma-separated expressions up to and including `)`.
    private mutating func parseArgumentList() throws -> [QueryExpression] {
        try enter()
        defer { depth -= 1 }
        var arguments: [QueryExpression] = []
        if !isSymbol(")") {
            arguments.append(try parseExpression())
            while isSymbol(",") {
                advance()
                arguments.append(try parseExpression())
            }
        }
        try expectSymbol(")", "to close the argument list")
        return arguments
    }

    private mutating func parseSubquery() throws -> QueryExpression {
        try enter()
        defer { depth -= 1 }
        advance()
        try expectSymbol("(", "after SUBQUERY")
        let collection = try parseExpression()
        try expectSymbol(",", "after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else {
            throw error("expected a $variable as the second SUBQUERY argument, found \(describe(current))")
        }
        advance()
        try expectSymbol(",", "after the SUBQUERY variable")
        let predicate = try parseOr()
        try expectSymbol(")", "to close SUBQUERY")
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    private mutating func parseCast() throws -> QueryExpression {
        try enter()
        defer { depth -= 1 }
        advance()
        try expectSymbol("(", "after CAST")
        let value = try parseExpression()
        try expectSymbol(",", "after the CAST value")
        let typeToken = current
        let typeName = try nameString("a type name such as 'NSDate'", in: "CAST")
        try expectSymbol(")", "to close CAST")
        let normalized = typeName.hasPrefix("NS") ? typeName : "NS" + typeName
        if normalized == "NSManagedObjectID" {
            throw error("object IDs cannot be written in a format string; pass the object or its ID as %@", at: typeToken)
        }
        guard let type = QueryCastType(rawValue: normalized) else {
            throw error("unknown CAST type '\(typeName)' (expected NSDate, NSNumber, NSString, NSDecimalNumber, NSUUID, NSData or NSURL)", at: typeToken)
        }
        if case .constant(let constant) = value {
            do {
                return .constant(try QueryCast.cast(constant, to: type))
            } catch let failure as QueryLanguageError {
                throw error(failure.message, at: typeToken)
            }
        }
        return .cast(value, type)
    }

    /// A name written as a string literal or passed as a `%@` string (CAST's type, FUNCTION's selector).
    private mutating func nameString(_ what: String, in construct: String) throws -> String {
        let name: String
        switch current.kind {
        case .string(let text): name = text
        case .argument(.object):
            guard argumentIndex < arguments.count, let text = arguments[argumentIndex] as? String else {
                throw error("expected \(what) as a string for \(construct)")
            }
            argumentIndex += 1
            name = text
        default: throw error("expected \(what) in \(construct), found \(describe(current))")
        }
        advance()
        return name
    }

    // MARK: Arguments

    private mutating func argumentExpression(_ kind: QueryToken.ArgumentKind, at token: QueryToken) throws -> QueryExpression {
        guard argumentIndex < arguments.count else {
            throw error("no argument left for the format specifier (\(arguments.count) given)", at: token)
        }
        let argument = arguments[argumentIndex]
        argumentIndex += 1
        switch kind {
        case .keyPath:
            let path: String
            switch argument {
            case let text as String: path = text
            case let text as Substring: path = String(text)
            default: throw error("%K needs a String key path, not \(type(of: argument))", at: token)
            }
            let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            for component in components {
                let body = component.hasPrefix("@") ? String(component.dropFirst()) : component
                guard let first = body.first, QueryLexer.isWordStart(first), body.allSatisfy(QueryLexer.isWordPart) else {
                    throw error("'\(path)' is not a valid key path for %K", at: token)
                }
            }
            if components.count == 1 && components[0].uppercased() == "SELF" { return .evaluatedObject }
            return .keyPath(base: .evaluatedObject, components: components)
        case .object:
            guard let value = QueryValue.convert(argument) else {
                throw error("cannot use a value of type \(type(of: argument)) as %@", at: token)
            }
            return .constant(value)
        case .integer:
            switch QueryValue.convert(argument) {
            case .int(let value)?: return .constant(.int(value))
            case .bool(let value)?: return .constant(.int(value ? 1 : 0))
            case .double(let value)? where Int64(exactly: value) != nil: return .constant(.int(Int64(value)))
            default: throw error("%d needs an integer argument, not \(type(of: argument))", at: token)
            }
        case .float:
            switch QueryValue.convert(argument) {
            case .int(let value)?: return .constant(.double(Double(value)))
            case .double(let value)?: return .constant(.double(value))
            case .decimal(let value)?: return .constant(.double(NSDecimalNumber(decimal: value).doubleValue))
            default: throw error("%f needs a number argument, not \(type(of: argument))", at: token)
            }
        }
    }
}
