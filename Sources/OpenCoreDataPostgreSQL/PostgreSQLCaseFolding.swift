import Foundation
import GRDB
import OpenCoreData

/// The SQL function that gives `[c]` its Swift meaning on PostgreSQL: the running Foundation's case folding
/// (``CaseFoldingTable``) written out as `replace` calls for the scalars that fold to several and one
/// `translate` for those that fold to one. PostgreSQL's own `lower()` follows the server's locale and folds
/// neither `ß` nor `ǰ` as Swift does.
enum PostgreSQLCaseFolding {
    /// Creates the function in the store's schema unless it is there already (one per table: see
    /// ``CaseFoldingTable/functionName``). Runs inside the opening transaction, under the layout lock, so
    /// concurrent openers never race, and DDL runs only the first time.
    ///
    /// - Throws: ``PostgreSQLStoreError/incompatibleStore(server:differences:)`` when the database's encoding
    ///   is not UTF-8 (text would be bytes, and neither folding nor lengths would be Swift's);
    ///   ``PostgreSQLStoreError/serverError(sqlState:message:statement:)`` when the server refuses the
    ///   statement (for example for lack of privileges).
    static func install(in session: PostgreSQLSession, server: String) throws {
        let encoding = try session.rows("SHOW server_encoding").first?.first.flatMap { String.fromDatabaseValue($0) }
        guard encoding == "UTF8" else {
            throw PostgreSQLStoreError.incompatibleStore(
                server: server, differences: ["the database's encoding is \(encoding ?? "unknown"), not UTF8"])
        }
        let table = CaseFoldingTable.current
        let existing = try session.rows("""
            SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema() AND p.proname = ?
            """, [table.functionName.databaseValue])
        guard existing.isEmpty else { return }
        _ = try session.execute(creationSQL(table))
    }

    /// The `CREATE FUNCTION` statement for `table`. The text it embeds is the table's own (Unicode letters,
    /// never a quote or a dollar sign, checked), not a value from a caller: DDL takes no parameters.
    static func creationSQL(_ table: CaseFoldingTable) -> String {
        func literal(_ text: String) -> String {
            precondition(!text.unicodeScalars.contains { $0 == "'" || $0 == "$" || $0 == "\\" || $0.value == 0 },
                         "case folding table holds a character that needs quoting")
            return "'" + text + "'"
        }
        var body = "$1"
        for (from, to) in table.expansions {
            body = "replace(" + body + ", " + literal(String(from)) + ", " + literal(to) + ")"
        }
        var from = String.UnicodeScalarView(), to = String.UnicodeScalarView()
        for pair in table.singles {
            from.append(pair.from)
            to.append(pair.to)
        }
        body = "translate(" + body + ", " + literal(String(from)) + ", " + literal(String(to)) + ")"
        return "CREATE FUNCTION \(table.functionName)(text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE "
            + "AS $ocd$ SELECT " + body + " $ocd$"
    }
}
