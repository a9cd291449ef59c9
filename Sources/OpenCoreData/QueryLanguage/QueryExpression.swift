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
    /// Components may be collection operators: `@count`, `@sum`, `@avg`, `@min`, `@max`, and the union
    /// operators `@unionOfObjects`, `@distinctUnionOfObjects`, `@unionOfArrays`, `@distinctUnionOfArrays`,
    /// `@distinctUnionOfSets` (see ``QueryCollectionOperator``).
    case keyPath(base: QueryExpression, components: [String])
    /// `$name`
    case variable(String)
    /// `{a, b, c}` with non-constant members (all-constant literals become an array constant).
    case aggregate([QueryExpression])
    /// `a + b`, `a - b`, `a * b`, `a / b`, `a ** b`.
    case arithmetic(ArithmeticOperator, QueryExpression, QueryExpression)
    /// `-a`
    case negate(QueryExpression)
    /// A function: `sum:(…)`, `sqrt:(…)`, `add:to:(a, b)`, `now()`… (see ``QueryFunction``). The format
    /// `FUNCTION(receiver, 'selector:', args…)` parses to the same case, with the receiver as first argument.
    case function(QueryFunction, [QueryExpression])
    /// `collection[FIRST]`, `collection[LAST]`, `collection[SIZE]`, `collection[n]` (Apple's index operators).
    case index(QueryExpression, QueryIndex)
    /// `TERNARY(predicate, trueExpression, falseExpression)`.
    case ternary(QueryPredicate, QueryExpression, QueryExpression)
    /// `SUBQUERY(collection, $variable, predicate)`: the members of the collection that match.
    case subquery(collection: QueryExpression, variable: String, predicate: QueryPredicate)
    /// `CAST(value, 'NSDate')` on a non-constant value (constant casts are folded when parsed).
    case cast(QueryExpression, QueryCastType)

    /// An arithmetic operator, spelled as in the format string (its raw value).
    public enum ArithmeticOperator: String, Sendable, Hashable {
        /// Addition, subtraction, multiplication, division and raising to a power.
        case add = "+", subtract = "-", multiply = "*", divide = "/", power = "**"
    }

    /// A key path from the evaluated object: `.key("details.city")`.
    public static func key(_ path: String) -> QueryExpression {
        .keyPath(base: .evaluatedObject, components: path.split(separator: ".").map(String.init))
    }

    /// Parses an expression format string, with `%@`/`%K`/`%d` arguments.
    ///
    /// - Throws: ``QueryLanguageError`` with the position of the problem when the format does not parse, an
    ///   argument is missing or of a type the query language cannot hold, or the input goes beyond a
    ///   ``QueryLanguageLimits`` limit.
    public init(format: String, _ arguments: Any...) throws {
        self = try QueryParser.parseExpression(format, arguments: arguments)
    }

    /// Parses an expression format string, with an array of arguments.
    ///
    /// - Throws: what ``init(format:_:)`` throws.
    public init(format: String, argumentArray: [Any]) throws {
        self = try QueryParser.parseExpression(format, arguments: argumentArray)
    }

    /// The expression as a format string that parses back to an equal expression.
    public var expressionFormat: String { QueryFormatter.format(self) }
    /// The ``expressionFormat``.
    public var description: String { expressionFormat }

    /// Evaluates the expression against an object (a managed object, a dictionary, or nil) with
    /// values for its `$variables`.
    ///
    /// - Throws: ``QueryLanguageError`` when the expression cannot be evaluated (an unbound variable, arguments
    ///   a function or operator does not take, a nesting or regular-expression limit of
    ///   ``QueryLanguageLimits``); what the object's ``KeyValueCoding/value(forKey:)`` throws, for a managed
    ///   object ``ObjectGraphError/unknownKey(entity:key:)`` when a key is not a property of its entity,
    ///   ``ObjectGraphError/objectNotFound(_:)`` or ``StoreError`` when a fault cannot be filled.
    public func evaluate(with object: Any?, context variables: [String: Any] = [:]) throws -> Any? {
        var evaluator = try QueryEvaluator(variables: variables)
        return try evaluator.evaluate(self, object: object)
    }

    /// Replaces `$variables` with constants; variables bound by a SUBQUERY are left alone.
    ///
    /// - Throws: ``QueryLanguageError`` when a variable's value is of a type the query language cannot hold, or
    ///   the expression nests deeper than ``QueryLanguageLimits/maximumNestingDepth``.
    public func withSubstitutionVariables(_ variables: [String: Any]) throws -> QueryExpression {
        try QuerySubstitution(variables: variables).substitute(self, bound: [])
    }
}

/// The position an index operator asks for: `[FIRST]`, `[LAST]`, `[SIZE]` (the member count) or `[n]`.
///
/// `[n]` counts from 0. An index past the end, a negative or non-integral one, and FIRST/LAST of an empty
/// collection give nil (Core Data raises an exception instead). A string index looks a key up in a dictionary.
public indirect enum QueryIndex: Sendable, Hashable {
    /// `[FIRST]`, `[LAST]`: the first or last member; `[SIZE]`: the member count.
    case first, last, size
    /// `[n]`: the member at a position (from 0), or a dictionary's value for a string key.
    case at(QueryExpression)
}

/// The functions the expression language knows: NSExpression's predefined function names.
///
/// Write them as `name:(arguments)` (`sqrt:(x)`, `add:to:(a, b)`, `now()`, `random()`) or as
/// `FUNCTION(receiver, 'name:', more…)`, where the receiver is the first argument.
public enum QueryFunction: String, Sendable, Hashable, CaseIterable {
    /// Aggregates over a collection (or over several arguments).
    case sum = "sum:", count = "count:", min = "min:", max = "max:", average = "average:", median = "median:"
    /// Arithmetic on two numbers: the same as `+ - * / **`; `modulus:by:` is the remainder.
    case add = "add:to:", subtract = "from:subtract:", multiply = "multiply:by:", divide = "divide:by:"
    /// The remainder of a division, and raising to a power (`**`).
    case modulus = "modulus:by:", power = "raise:toPower:"
    /// One number: absolute value, square root, base-10 and natural logarithms, e to the power.
    case abs = "abs:", sqrt = "sqrt:", log = "log:", ln = "ln:", exp = "exp:"
    /// One number, rounded up, down, or toward zero.
    case ceiling = "ceiling:", floor = "floor:", trunc = "trunc:"
    /// One string: in capitals, in small letters, its length.
    case uppercase = "uppercase:", lowercase = "lowercase:", length = "length:"
    /// One string with case and diacritics folded away (`canonical:(name)`, as Core Data's derived attributes
    /// use it: "Émile" and "emile" give the same value).
    case canonical = "canonical:"
    /// The value itself (Core Data's hint not to use an index).
    case noindex = "noindex:"
    /// No argument: the current date, a random number between 0 and 1.
    case now = "now", random = "random"

    /// How many arguments the function takes; nil for the aggregates, which take one collection or several values.
    public var arity: Int? {
        switch self {
        case .sum, .count, .min, .max, .average, .median: return nil
        case .now, .random: return 0
        case .add, .subtract, .multiply, .divide, .modulus, .power: return 2
        default: return 1
        }
    }

    /// Whether the function aggregates a collection.
    public var isAggregate: Bool { arity == nil }

    /// The arithmetic operator the function is another spelling of.
    var arithmeticOperator: QueryExpression.ArithmeticOperator? {
        switch self {
        case .add: return .add
        case .subtract: return .subtract
        case .multiply: return .multiply
        case .divide: return .divide
        case .power: return .power
        default: return nil
        }
    }

    /// The function a `FUNCTION(receiver, 'selector', …)` selector names: a function name, or one of the
    /// NSString/NSArray methods with the same meaning (`length`, `uppercaseString`, `lowercaseString`, `count`).
    static func named(selector: String) -> QueryFunction? {
        if let function = QueryFunction(rawValue: selector) { return function }
        switch selector {
        case "length": return .length
        case "uppercaseString": return .uppercase
        case "lowercaseString": return .lowercase
        case "count": return .count
        default: return nil
        }
    }
}

/// The KVC union operators, as key path components.
enum QueryCollectionOperator {
    static let unions: Set<String> = [
        "@unionOfObjects", "@distinctUnionOfObjects", "@unionOfArrays", "@distinctUnionOfArrays", "@distinctUnionOfSets",
    ]
    static func isUnion(_ component: String) -> Bool { unions.contains(component) }
    static func isDistinct(_ component: String) -> Bool { component.hasPrefix("@distinct") }
}

/// The target types of `CAST(value, 'type')`.
public enum QueryCastType: String, Sendable, Hashable, CaseIterable {
    /// A date, a number, a string or a decimal number, named as in Core Data (the raw value).
    case date = "NSDate", number = "NSNumber", string = "NSString", decimal = "NSDecimalNumber"
    /// A UUID, data, or a URL.
    case uuid = "NSUUID", data = "NSData", url = "NSURL"
}
