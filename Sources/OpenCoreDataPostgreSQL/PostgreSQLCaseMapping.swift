import Foundation
import OpenCoreData

/// The SQL functions that give `[c]`, `uppercase:` and `lowercase:` their Swift meaning on PostgreSQL: the
/// running Swift's and Foundation's mappings (``CaseMappingTable``) written out as one `translate` for the
/// scalars that map to one and `replace` calls for those that map to several. PostgreSQL's own `lower()` and
/// `upper()` follow the server's locale and map neither `ß` nor `ǰ` as Swift does.
enum PostgreSQLCaseMapping {
    /// Creates each function in the store's schema unless it is there already (one per table: see
    /// ``CaseMappingTable/functionName``). Runs inside the opening transaction, under the layout lock, so
    /// concurrent openers never race, and DDL runs only the first time.
    ///
    /// - Throws: ``StoreError/incompatibleModel(path:differences:)`` when the database's encoding
    ///   is not UTF-8 (text would be bytes, and neither the mappings nor lengths would be Swift's);
    ///   ``StoreError/serverError(sqlState:message:statement:)`` when the server refuses a
    ///   statement (for example for lack of privileges).
    static func install(in session: PostgreSQLSession, server: String) throws {
        let encoding = try session.rows("SHOW server_encoding").first?.first.flatMap { String.fromStoreValue($0) }
        guard encoding == "UTF8" else {
            throw StoreError.incompatibleModel(
                path: server, differences: ["the database's encoding is \(encoding ?? "unknown"), not UTF8"])
        }
        let names = Set(try session.rows("""
            SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema() AND p.proname LIKE 'ocd\\_%'
            """).compactMap { $0.first.flatMap { String.fromStoreValue($0) } })
        for table in CaseMappingTable.all where !names.contains(table.functionName) {
            if let statement = creationSQL(table) { _ = try session.execute(statement) }
        }
    }

    /// The `CREATE FUNCTION` statement for `table`, or nil for a table that cannot be written out exactly (one
    /// that composes neither as translate-then-replace nor as replace-then-translate, or holds a quote, a dollar sign, a backslash or NUL;
    /// no table Unicode has given so far). Its queries then fail with the server's "function does not exist",
    /// never with a wrong answer. The text embedded is the table's own, not a value from a caller: DDL takes no
    /// parameters.
    static func creationSQL(_ table: CaseMappingTable) -> String? {
        let quotable = (table.singles.map { String($0.from) + String($0.to) } + table.expansions.map { String($0.from) + $0.to })
            .allSatisfy { !$0.unicodeScalars.contains { $0 == "'" || $0 == "$" || $0 == "\\" || $0.value == 0 } }
        guard quotable, table.composesSafely || table.composesReplacingFirst else { return nil }
        var from = String.UnicodeScalarView(), to = String.UnicodeScalarView()
        for pair in table.singles {
            from.append(pair.from)
            to.append(pair.to)
        }
        func translated(_ text: String) -> String { "translate(" + text + ", '" + String(from) + "', '" + String(to) + "')" }
        func replaced(_ text: String) -> String {
            table.expansions.reduce(text) { body, expansion in
                "replace(" + body + ", '" + String(expansion.from) + "', '" + expansion.to + "')"
            }
        }
        let body = table.composesSafely ? replaced(translated("$1")) : translated(replaced("$1"))
        return "CREATE FUNCTION \(table.functionName)(text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE "
            + "AS $ocd$ SELECT " + body + " $ocd$"
    }
}
