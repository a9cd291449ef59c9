/// A predicate, expression or sort a store's SQL cannot answer with exactly the meaning it has in memory,
/// refused before any statement runs rather than answered differently.
///
/// SQLite answers every construct the query language has (the library registers its Swift code there) but
/// comparisons with values kept in external binary storage form (``Construct/externalBinaryStorage``). The
/// PostgreSQL dialect's compiler refuses the short list in ``Construct``; a fetch of objects, IDs, a count or
/// dictionaries (aggregates and grouping included), a batch update and a batch delete then evaluate a refused
/// predicate or sort in the app, on the rows the rest of the predicate narrows, so it is still thrown there only
/// for a refused fetched or grouped expression, a grouped or distinct dictionary fetch sorted in the app by a
/// key it does not fetch, and a sort key refused for another reason (docs/POSTGRESQL.md, "Queries").
///
/// ```swift
/// let request = FetchRequest<[String: Any]>(dictionariesOf: "Person")
/// request.propertiesToFetch = [ExpressionDescription(name: "tidy", expression: try QueryExpression(format: "FUNCTION(name, 'stringByTrimmingCharactersInSet:', ' ')"))]
/// do { _ = try context.fetch(request) }   // on a PostgreSQL store
/// catch let refusal as QueryDialectRefusal { print(refusal) }
/// // PostgreSQL cannot compile …: the function runs Swift code on SQLite and has no exact PostgreSQL equal
/// ```
public struct QueryDialectRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was refused, one case per reason.
    public enum Construct: String, Sendable, Hashable, CaseIterable {
        /// `[d]`, `[cd]`: Foundation's diacritic folding depends on the scalars around each mark and reorders
        /// marks, which no per-scalar table (the way `[c]` is answered) can say; PostgreSQL's `unaccent`
        /// folds otherwise.
        case foldingOptions = "[d] folds diacritics by the scalars around each mark, which no PostgreSQL function does alike"
        /// `MATCHES` with a pattern PostgreSQL's regular expressions would read differently from ICU's (``detail``
        /// names the construct, such as `\d`), or with a pattern read from a row; `[d]`/`[cd]` are
        /// ``foldingOptions``.
        case regularExpression = "the MATCHES pattern uses ICU syntax PostgreSQL's regular expressions read differently"
        /// `LIKE` whose pattern is read from a row: only a constant pattern is translated.
        case computedLikePattern = "a LIKE pattern must be a constant (it is translated to PostgreSQL's before the query runs)"
        /// A string operator, arithmetic, a sum, a CASE (`TERNARY`, `{…}[i]`) on operands not known to be text
        /// or numbers, or of kinds PostgreSQL cannot mix.
        case operandKind = "an operand whose kind (text, number) is not known before the query runs"
        /// Functions that run Swift code on SQLite and have no exact PostgreSQL equal: the string functions,
        /// `CAST` of text to numbers, of doubles to text and to the other types, `modulus:by:` of numbers that
        /// are not whole.
        case function = "the function runs Swift code on SQLite and has no exact PostgreSQL equal"
        /// A string constant holding U+0000, which PostgreSQL text cannot hold.
        case nulCharacter = "PostgreSQL text cannot hold U+0000"
        /// A comparison with a value of an attribute kept in Core Data's external binary storage form: its
        /// column holds a marker and then the bytes or the name of a file, so SQL would compare the stored
        /// form, not the value. Only `== nil` and `!= nil` compile (nil is NULL in either form). Any dialect.
        case externalBinaryStorage = "the attribute keeps its values in Core Data's external storage form (a marker, then the bytes or a file's name), which SQL cannot compare with a value; test it against nil only, or compare after fetching"
        /// Sorting text with `localizedCompare:`, `localizedCaseInsensitiveCompare:` or
        /// `localizedStandardCompare:` (`compare:` and `caseInsensitiveCompare:` sort alike on PostgreSQL).
        case sortComparator = "sorting with this comparison selector needs a collation PostgreSQL does not have alike"
    }

    /// What was refused.
    public var construct: Construct
    /// The store's SQL, such as "PostgreSQL".
    public var dialect: String
    /// The predicate or expression refused, as a format string.
    public var expression: String
    /// The part of it that is refused, when the construct alone does not say (the regular expression syntax
    /// in a `MATCHES` pattern, such as `\d`); nil otherwise.
    public var detail: String?

    init(_ construct: Construct, in dialect: any SQLDialect, expression: String, detail: String? = nil) {
        self.construct = construct
        self.dialect = dialect.name
        self.expression = expression
        self.detail = detail
    }

    init(_ construct: Construct, in dialect: any SQLDialect, expression: QueryExpression) {
        self.init(construct, in: dialect, expression: QueryFormatter.format(expression))
    }

    /// `PostgreSQL cannot compile <expression>: <reason>[: <detail>]`.
    public var description: String {
        "\(dialect) cannot compile \(expression): \(construct.rawValue)" + (detail.map { ": " + $0 } ?? "")
    }
}
