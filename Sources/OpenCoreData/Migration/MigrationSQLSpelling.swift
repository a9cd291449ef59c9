import Foundation

/// How the statements of a ``MigrationPlan`` are spelled for the database that runs them.
///
/// The planner decides what a migration does (which tables are rebuilt, which rows and links move where,
/// what is checked); this says how each of those statements is written where SQLite and PostgreSQL differ:
/// how a name is quoted, where temporary tables live, the scalar maximum, column types. SQLite's spelling is
/// the planner's default; the PostgreSQL store module makes its own.
package struct MigrationSQLSpelling: Sendable {
    /// A name the library made (``StoreSchema`` or the planner's prefixes), quoted.
    package var name: @Sendable (String) -> String
    /// The schema temporary tables live in (`temp.name`).
    package var temporarySchema: String
    /// Whether an index on a temporary table is created under the temporary schema's name (SQLite) or
    /// without one (PostgreSQL puts it beside its table and refuses a schema in the index's name).
    package var qualifiesTemporaryIndexes: Bool
    /// The scalar function giving the largest of its arguments (SQLite's two-argument `MAX`).
    package var greatest: String
    /// The type an integer is cast to when it becomes a double.
    package var doubleType: String
    /// The condition no row meets.
    package var never: String
    /// A NULL where a key or an order number is expected (PostgreSQL types a bare NULL in a subquery as text).
    package var nullNumber: String
    /// Whether a subquery in `FROM` needs an alias (PostgreSQL before 16).
    package var aliasesSubqueries: Bool
    /// The column definition for a column SQLite declares as the given type (`INTEGER PRIMARY KEY`,
    /// `VARCHAR`, …), as a fresh store of the dialect declares it.
    package var columnDefinition: @Sendable (String) -> String
    /// The same for the columns of `Z_PRIMARYKEY`, which a fresh store may declare otherwise (PostgreSQL
    /// keeps entity names in the server's collation, entity tables' text in `"C"`).
    package var bookkeepingColumnDefinition: @Sendable (String) -> String

    package init(name: @escaping @Sendable (String) -> String, temporarySchema: String, qualifiesTemporaryIndexes: Bool,
                 greatest: String, doubleType: String, never: String, nullNumber: String, aliasesSubqueries: Bool,
                 columnDefinition: @escaping @Sendable (String) -> String,
                 bookkeepingColumnDefinition: @escaping @Sendable (String) -> String) {
        self.name = name
        self.temporarySchema = temporarySchema
        self.qualifiesTemporaryIndexes = qualifiesTemporaryIndexes
        self.greatest = greatest
        self.doubleType = doubleType
        self.never = never
        self.nullNumber = nullNumber
        self.aliasesSubqueries = aliasesSubqueries
        self.columnDefinition = columnDefinition
        self.bookkeepingColumnDefinition = bookkeepingColumnDefinition
    }

    /// SQLite's spelling: the statements the planner has always written.
    package static let sqlite = MigrationSQLSpelling(
        name: quoted, temporarySchema: "temp", qualifiesTemporaryIndexes: true, greatest: "MAX", doubleType: "REAL",
        never: "0", nullNumber: "NULL", aliasesSubqueries: false, columnDefinition: { $0 },
        bookkeepingColumnDefinition: { $0 })

    /// A temporary table's name as a statement addresses it.
    func temporary(_ table: String) -> String { "\(temporarySchema).\(name(table))" }

    /// `sql` as a subquery in `FROM`, with `alias` where the dialect needs one.
    func derived(_ sql: String, _ alias: String) -> String { aliasesSubqueries ? "(\(sql)) AS \(alias)" : "(\(sql))" }
}
