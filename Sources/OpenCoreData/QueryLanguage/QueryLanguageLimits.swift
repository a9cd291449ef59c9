import Foundation

/// The documented limits of the query language: what hostile or runaway input is refused with, instead of
/// exhausting the stack or the clock. Going beyond one throws a ``QueryLanguageError`` whose
/// ``QueryLanguageError/exceededLimit`` names it.
///
/// ```swift
/// do { _ = try QueryPredicate(format: "a == " + String(repeating: "1 + ", count: 1_000) + "1") }
/// catch let error as QueryLanguageError { print(error.exceededLimit == .nestingDepth) }   // true
/// ```
public enum QueryLanguageLimits {
    /// The one limit every recursive walk of a predicate or expression checks before it recurses: the parser,
    /// the printer (`predicateFormat`), substitution, in-memory evaluation and the SQL compiler.
    ///
    /// A level is a parenthesis, `NOT`, unary minus, function call, literal collection, SUBQUERY, CAST,
    /// TERNARY, index operator, each operator of an arithmetic chain (`a + b + c` is two levels, as the tree
    /// it builds is two deep), and each to-many step of a key path the SQL compiler turns into a subquery.
    /// Well under what the smallest thread stack the library runs on holds.
    public static let maximumNestingDepth = 500

    /// How long the `MATCHES` comparisons of one query (a fetch, or one in-memory evaluation) may spend in
    /// the regular-expression engine, all rows together. A catastrophically backtracking pattern fails with
    /// an error naming this limit instead of running for minutes.
    public static let regularExpressionTimeLimit: Duration = .seconds(2)

    /// How much work one `MATCHES` comparison may do, in the engine's progress reports (each a fixed number
    /// of backtracking steps). ICU, under Foundation on Linux, abandons a match after about 3,900 reports
    /// and says "no match" without an error, even where the subject matches; stopping earlier, with this
    /// limit's error, keeps such a give-up from ever reading as an answer.
    public static let regularExpressionWorkLimit = 2_000

    /// The limits a ``QueryLanguageError`` can name.
    public enum Limit: String, Sendable, Hashable {
        /// ``QueryLanguageLimits/maximumNestingDepth``.
        case nestingDepth
        /// ``QueryLanguageLimits/regularExpressionTimeLimit``.
        case regularExpressionTime
        /// ``QueryLanguageLimits/regularExpressionWorkLimit``.
        case regularExpressionWork
    }
}

extension QueryLanguageError {
    /// Nesting beyond ``QueryLanguageLimits/maximumNestingDepth`` (at `position` in a format string, or -1).
    static func nestingTooDeep(at position: Int = -1, while what: String) -> QueryLanguageError {
        var error = QueryLanguageError(
            position: position,
            message: "\(what): nesting deeper than \(QueryLanguageLimits.maximumNestingDepth) levels "
                + "(QueryLanguageLimits.maximumNestingDepth)")
        error.exceededLimit = .nestingDepth
        return error
    }

    /// `MATCHES` work beyond ``QueryLanguageLimits/regularExpressionTimeLimit``.
    static func regularExpressionTimeExceeded(pattern: String) -> QueryLanguageError {
        var error = QueryLanguageError.semantic(
            "MATCHES '\(pattern.prefix(100))': the regular expression ran longer than "
                + "\(QueryLanguageLimits.regularExpressionTimeLimit) for this query "
                + "(QueryLanguageLimits.regularExpressionTimeLimit)")
        error.exceededLimit = .regularExpressionTime
        return error
    }

    /// One `MATCHES` comparison beyond ``QueryLanguageLimits/regularExpressionWorkLimit``.
    static func regularExpressionWorkExceeded(pattern: String, subjectLength: Int) -> QueryLanguageError {
        var error = QueryLanguageError.semantic(
            "MATCHES '\(pattern.prefix(100))': matching a subject of \(subjectLength) UTF-16 units took more than "
                + "\(QueryLanguageLimits.regularExpressionWorkLimit) progress reports of backtracking "
                + "(QueryLanguageLimits.regularExpressionWorkLimit)")
        error.exceededLimit = .regularExpressionWork
        return error
    }
}
