import Foundation

/// The statements of a batch update and of a batch delete that needs no cascade, spelled once for every
/// store. Names come from the schema; values reach the statements only as bound parameters.
extension BatchSelection {
    /// `UPDATE table AS t0 SET column = …, Z_OPT = Z_OPT + 1` over the selected rows, with its arguments (the
    /// assignments' first, then the selection's). `Z_OPT` moves on so optimistic locking sees the change.
    /// A selection that joins other tables goes through the keys its query selects, since an `UPDATE` cannot
    /// join on SQLite. With `returningIDs`, the statement returns each changed row's `(Z_ENT, Z_PK)`
    /// (unqualified: SQLite's `RETURNING` does not take the table's alias).
    package func updateStatement(table: String, assignments: [(column: String, sql: String, arguments: [StoreValue])],
                                 returningIDs: Bool) -> (sql: String, arguments: [StoreValue]) {
        let setClause = (assignments.map { "\($0.column) = \($0.sql)" } + ["Z_OPT = Z_OPT + 1"]).joined(separator: ", ")
        var sql = fromClause != "\(table) t0"
            ? "UPDATE \(table) AS t0 SET \(setClause) WHERE t0.Z_PK IN (SELECT t0.Z_PK FROM \(fromClause)\(whereSQL))"
            : "UPDATE \(table) AS t0 SET \(setClause)\(whereSQL)"
        if returningIDs { sql += " RETURNING Z_ENT, Z_PK" }
        return (sql, assignments.flatMap(\.arguments) + arguments)
    }

    /// `DELETE FROM table AS t0 WHERE …` for a selection of `table` alone (no joined tables), returning each
    /// deleted row's `(Z_ENT, Z_PK)` with `returningIDs`. Its arguments are the selection's.
    package func deleteStatement(table: String, returningIDs: Bool) -> String {
        "DELETE FROM \(table) AS t0\(whereSQL)" + (returningIDs ? " RETURNING Z_ENT, Z_PK" : "")
    }

    /// Whether the selection reads `table` alone, so a delete can take it directly.
    package func readsOnly(table: String) -> Bool { fromClause == "\(table) t0" }
}

extension EntityDescription {
    /// The storage slots of the attributes whose columns `assignments` write (a batch update's history
    /// names them as the changed keys).
    package func attributeSlots(assigned assignments: [(column: String, sql: String, arguments: [StoreValue])]) -> [Int] {
        assignments.compactMap { assignment in
            storage.firstIndex { storage in
                if case .attribute(let column, _) = storage { return column == assignment.column }
                return false
            }
        }
    }
}
