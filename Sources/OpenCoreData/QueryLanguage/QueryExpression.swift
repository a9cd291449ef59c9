import Foundation

/// A value computed from the object a predicate is evaluated against (Core Data's NSExpression).
///
/// ```swift
/// let total = try QueryExpression(format: "items.@sum.price * 2")
/// let value = try total.evaluate(with: ["items": [["price": 3], ["price": 4]]])   // 14
/// ```
public indirect enum QueryExpression: Sendable, Hashable, CustomStringConvertible {
    /// A constant.
    case constant(QueryValue)
    /// `SELF`: the evaluated object.
    case evaluatedObject
    /// A key path applied to a base (``evaluatedObject`` for plain key paths such as `details.city`).
    /// Components may be collection operators: `@count`, `@sum`, `@avg`, `@min`, `@max`.
    case keyPath(base: QueryExpression, components: [String])
    /// `$name`
    case variable(String)
    /// `{a, b, c}` with non-constant members (all-constant literals become an array constant).
    case aggregate([QueryExpression])
    /// `a + b`, `a - b`, `a * b`, `a / b`, `a ** b`.
    case arithmetic(ArithmeticOperator, QueryExpression, QueryExpression)
    /// `-a`
    case negate(QueryExpression)
    /// A function: `sum:(…)`, `count:(…)`, `min:(…)`, `max:(…)`, `average:(…)`, `median:(…)`, `abs:(…)`, `now()`.
    case function(QueryFunction, [QueryExpression])
    /// `SUBQUERY(collection, $variable, predicate)`: the members of the collection that match.
    case subquery(collection: QueryExpression, variable: String, predicate: QueryPredicate)
    /// `CAST(value, 'NSDate')` on a non-constant value (constant casts are folded when parsed).
    case cast(QueryExpression, QueryCastType)

    public enum ArithmeticOperator: String, Sendable, Hashable {
        case add = "+", subtract = "-", multiply = "*", divide = "/", power = "**"
    }

    /// A key path from the evaluated object: `.key("details.city")`.
    public static func key(_ path: String) -> QueryExpression {
        .keyPath(base: .evaluatedObject, components: path.split(separator: ".").map(String.init))
    }

    /// Parses an expression format string, with `%@`/`%K`/`%d` arguments.
    public init(format: String, _ arguments: Any...) throws {
        self = try QueryParser.parseExpression(format, arguments: arguments)
    }

    /// Parses an expression format string, with an array of arguments.
    public init(format: String, argumentArray: [Any]) throws {
        self = try QueryParser.parseExpression(format, arguments: argumentArray)
    }

    /// The expression as a format string that parses back to an equal expression.
    public var expressionFormat: String { QueryFormatter.format(self) }
    public var description: String { expressionFormat }

    /// Evaluates the expression against an object (a managed object, a dictionary, or nil) with
    /// values for its `$variables`.
    public func evaluate(with object: Any?, context variables: [String: Any] = [:]) throws -> Any? {
        var evaluator = try QueryEvaluator(variables: variables)
        return try evaluator.evaluate(self, object: object)
    }

    /// Replaces `$variables` with constants; variables bound by a SUBQUERY are left alone.
    public func withSubstitutionVariables(_ variables: [String: Any]) throws -> QueryExpression {
        try QuerySubstitution(variables: variables).substitute(self, bound: [])
    }
}

/// The functions the expression language knows.
public enum QueryFunction: String, Sendable, Hashable, CaseIterable {
    case sum = "sum:", count = "count:", min = "min:", max = "max:", average = "average:", median = "median:"
    case abs = "abs:", now = "now"
}

/// The target types of `CAST(value, 'type')`.
public enum QueryCastType: String, Sendable, Hashable, CaseIterable {
    case date = "NSDate", number = "NSNumber", string = "NSString", decimal = "NSDecimalNumber"
    case uuid = "NSUUID", data = "NSData", url = "NSURL"
}
