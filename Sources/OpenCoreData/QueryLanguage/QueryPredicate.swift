import Foundation

/// A logical condition on objects (Core Data's NSPredicate), parsed from Apple's format-string grammar.
///
/// Evaluate it in memory with ``evaluate(with:substitutionVariables:)`` or compile it to SQL with
/// `PredicateSQLCompiler`. Values are held as ``QueryValue`` constants, so predicates are `Sendable`.
///
/// ```swift
/// let adults = try QueryPredicate(format: "age >= %d AND name BEGINSWITH[cd] %@", 18, "e")
/// try adults.evaluate(with: ["age": 30, "name": "Émile"])   // true
/// print(adults.predicateFormat)                             // age >= 18 AND name BEGINSWITH[cd] "e"
/// ```
public indirect enum QueryPredicate: Sendable, Hashable, CustomStringConvertible {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// All subpredicates hold (an empty list holds).
    case and([QueryPredicate])
    /// Some subpredicate holds (an empty list does not).
    case or([QueryPredicate])
    /// The subpredicate does not hold.
    case not(QueryPredicate)
    /// `lhs op rhs`, possibly with `ANY`/`ALL`/`NONE` and `[cd]`.
    case comparison(QueryComparison)

    /// Always true.
    public static let truePredicate = QueryPredicate.constant(true)
    /// Always false.
    public static let falsePredicate = QueryPredicate.constant(false)

    /// Parses a format string; `%@`, `%K`, `%d`… take their values from `arguments` in order.
    ///
    /// - Throws: ``QueryLanguageError`` with the position of the problem when the format does not parse, an
    ///   argument is missing or of a type the query language cannot hold, or the input goes beyond a
    ///   ``QueryLanguageLimits`` limit (``QueryLanguageError/exceededLimit`` says which).
    public init(format: String, _ arguments: Any...) throws {
        self = try QueryParser.parsePredicate(format, arguments: arguments)
    }

    /// Parses a format string with an array of arguments.
    ///
    /// - Throws: what ``init(format:_:)`` throws.
    public init(format: String, argumentArray: [Any]) throws {
        self = try QueryParser.parsePredicate(format, arguments: argumentArray)
    }

    /// The predicate as a format string that parses back to an equal predicate (object-ID constants excepted:
    /// they need a model to come back).
    public var predicateFormat: String { QueryFormatter.format(self) }
    /// The ``predicateFormat``.
    public var description: String { predicateFormat }

    /// Replaces `$variables` with constants (variables bound by a SUBQUERY are left alone).
    ///
    /// - Throws: ``QueryLanguageError`` when a variable's value is of a type the query language cannot hold, or
    ///   the predicate nests deeper than ``QueryLanguageLimits/maximumNestingDepth``.
    public func withSubstitutionVariables(_ variables: [String: Any]) throws -> QueryPredicate {
        try QuerySubstitution(variables: variables).substitute(self, bound: [])
    }

    /// Whether the predicate holds for an object (a managed object, a `[String: Any]`, or any value for
    /// predicates on `SELF`).
    ///
    /// - Throws: ``QueryLanguageError`` when the predicate cannot be evaluated (an unbound `$variable`, values
    ///   an operator does not take, an unknown collection operator, an invalid `MATCHES` pattern, a
    ///   regular-expression or nesting limit of ``QueryLanguageLimits``); what the object's
    ///   ``KeyValueCoding/value(forKey:)`` throws, for a managed object
    ///   ``ObjectGraphError/unknownKey(entity:key:)`` when a key is not a property of its entity,
    ///   ``ObjectGraphError/objectNotFound(_:)`` or ``StoreError`` when a fault cannot be filled.
    public func evaluate(with object: Any?, substitutionVariables: [String: Any] = [:]) throws -> Bool {
        var evaluator = try QueryEvaluator(variables: substitutionVariables)
        return try evaluator.evaluate(self, object: object)
    }
}

/// One comparison: `[modifier] lhs operator[options] rhs`.
public struct QueryComparison: Sendable, Hashable {
    /// The comparison operator, spelled as in the format string (its raw value).
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// Equality and order: `==`, `!=`, `<`, `<=`, `>`, `>=`.
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        /// String matching: a whole-string regular expression, a `*`/`?` wildcard pattern, a prefix, a suffix.
        case matches = "MATCHES", like = "LIKE", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
        /// Membership (`x IN collection`, `collection CONTAINS x`, or a substring for strings) and a range
        /// (`x BETWEEN {lower, upper}`, bounds included).
        case `in` = "IN", contains = "CONTAINS", between = "BETWEEN"
    }

    /// How a collection on the left is quantified.
    public enum Modifier: String, Sendable, Hashable {
        /// No quantifier (`direct`); some member (`ANY`), every member (`ALL`), no member (`NONE`) holds.
        case direct = "", any = "ANY", all = "ALL", none = "NONE"
    }

    /// `[c]`, `[d]`, `[cd]` (and `[n]`, `[l]`, accepted for compatibility and without effect).
    public struct Options: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: Int
        /// Options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `[c]`: letters compare without case.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: letters compare without diacritics (`é` matches `e`).
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: accepted for compatibility, without effect.
        public static let normalized = Options(rawValue: 4)
        /// `[l]`: accepted for compatibility, without effect.
        public static let localeSensitive = Options(rawValue: 8)
    }

    /// How a collection on the left is quantified.
    public var modifier: Modifier
    /// The left operand.
    public var lhs: QueryExpression
    /// The operator.
    public var op: Operator
    /// The string options (`[cd]`).
    public var options: Options
    /// The right operand.
    public var rhs: QueryExpression

    /// The comparison `[modifier] lhs op[options] rhs`.
    public init(_ lhs: QueryExpression, _ op: Operator, _ rhs: QueryExpression, modifier: Modifier = .direct,
                options: Options = []) {
        self.modifier = modifier
        self.lhs = lhs
        self.op = op
        self.options = options
        self.rhs = rhs
    }
}
