import Foundation

/// What each ``QueryFunction`` computes. In-memory evaluation calls this directly; compiled SQL calls it
/// through the `ocd_function` SQL function, so both give the same answer for the same values.
///
/// nil (or a value of the wrong kind: a string for `sqrt:`, a number for `uppercase:`) gives nil, as NULL does
/// in SQL; so does a result that is not a number (`sqrt:(-1)`) and a zero divisor (`divide:by:`, `modulus:by:`).
enum QueryFunctions {
    static func apply(_ function: QueryFunction, _ values: [Any?]) throws -> Any? {
        if let arity = function.arity, values.count != arity {
            throw QueryLanguageError.semantic("\(function.rawValue) takes \(arity) argument(s), not \(values.count)")
        }
        if function.isAggregate {
            guard !values.isEmpty else { throw QueryLanguageError.semantic("\(function.rawValue) needs an argument") }
            // One argument is the collection to aggregate (nil is an empty one); several are the values themselves.
            let input: [Any?]
            if values.count == 1 {
                input = values[0] == nil ? [] : (QueryEvaluator.collection(values[0]) ?? values)
            } else {
                input = values
            }
            if function == .count { return input.count }
            return try QueryArithmetic.aggregate(function, input)
        }
        if let op = function.arithmeticOperator { return QueryArithmetic.apply(op, values[0], values[1]) }
        switch function {
        case .now: return Date()
        case .random: return Double.random(in: 0..<1)
        case .noindex: return values[0]
        case .modulus: return QueryArithmetic.modulus(values[0], values[1])
        case .abs:
            guard let number = QueryArithmetic.number(values[0]) else { return nil }
            return QueryArithmetic.absolute(number)
        case .sqrt, .log, .ln, .exp:
            guard let number = QueryArithmetic.number(values[0]) else { return nil }
            let x = number.doubleValue
            let result: Double
            switch function {
            case .sqrt: result = x.squareRoot()
            case .log: result = Foundation.log10(x)
            case .ln: result = Foundation.log(x)
            default: result = Foundation.exp(x)
            }
            return result.isNaN ? nil : result
        case .ceiling, .floor, .trunc:
            guard let number = QueryArithmetic.number(values[0]) else { return nil }
            // Whole numbers are their own ceiling, floor and truncation (and keep their precision).
            if case .int = number { return QueryArithmetic.swiftValue(number) }
            let rule: FloatingPointRoundingRule = function == .ceiling ? .up : function == .floor ? .down : .towardZero
            let result = number.doubleValue.rounded(rule)
            return result.isNaN ? nil : result
        case .uppercase, .lowercase, .length, .canonical:
            guard let text = QueryValue.convert(values[0]).flatMap(QueryValueSemantics.text) else { return nil }
            switch function {
            case .uppercase: return text.uppercased()
            case .lowercase: return text.lowercased()
            case .canonical: return text.folding(options: .diacriticInsensitive, locale: nil).lowercased()
            default: return text.utf16.count  // NSString's length: UTF-16 code units
            }
        default:
            throw QueryLanguageError.semantic("\(function.rawValue) is not implemented")
        }
    }
}
