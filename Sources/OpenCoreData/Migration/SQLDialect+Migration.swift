/// How the statements of a ``MigrationPlan`` are spelled by the dialect that runs them.
///
/// The planner decides what a migration does (which tables are rebuilt, which rows and links move where,
/// what is checked); the store's ``SQLDialect`` says how each statement is written.
extension SQLDialect {
    /// A temporary table's name as a statement addresses it.
    func temporary(_ table: String) -> String { "\(temporarySchema).\(quotedName(table))" }

    /// `sql` as a subquery in `FROM`, with `alias` where the dialect needs one.
    func derived(_ sql: String, _ alias: String) -> String { aliasesSubqueries ? "(\(sql)) AS \(alias)" : "(\(sql))" }
}
