/// The SQL a ``PredicateSQLCompiler`` writes.
///
/// One compiler serves both stores; the dialect picks the spelling where the two databases differ (booleans,
/// `IS` against `IS NOT DISTINCT FROM`, where NULLs sort, the functions that stand in for Swift code) and, on
/// PostgreSQL, refuses what it cannot answer as in-memory evaluation does (``QueryDialectRefusal``).
package enum SQLDialect: String, Sendable, Hashable {
    /// SQLite, with the functions and collations ``QuerySQLFunctions`` registers on each connection.
    case sqlite = "SQLite"
    /// PostgreSQL, on the PostgreSQL store's layout (text columns in the `"C"` collation: code point order).
    case postgreSQL = "PostgreSQL"

    /// The literal for a constant predicate.
    func boolean(_ value: Bool) -> String {
        switch self {
        case .sqlite: value ? "1" : "0"
        case .postgreSQL: value ? "TRUE" : "FALSE"
        }
    }

    /// The operator for "equal, NULL equal to NULL" (`IS`), or its negation.
    func nullSafeEquality(negated: Bool) -> String {
        switch self {
        case .sqlite: negated ? " IS NOT " : " IS "
        case .postgreSQL: negated ? " IS DISTINCT FROM " : " IS NOT DISTINCT FROM "
        }
    }
}
