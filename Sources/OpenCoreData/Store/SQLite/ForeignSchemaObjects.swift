import Foundation
import GRDB

/// Finds what a store holds beyond Core Data's layout: triggers, views and tables that neither this
/// library nor Core Data made. Triggers fire on the library's writes and can drop, delete or copy rows;
/// a store carrying any is refused for writing unless the caller opts in
/// (``StoreOptions/allowsForeignSchemaObjects``).
enum ForeignSchemaObjects {
    /// Tables Core Data adds beyond the model's: persistent history and its strings.
    static let coreDataHistoryTables: Set<String> = ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"]

    /// Whether a table named `name` belongs to Core Data's own layout whatever the model: its bookkeeping
    /// and join tables (`Z_` names, which no entity table can have), persistent history (`A…`), CloudKit
    /// mirroring (`ANSCK…`), and SQLite's own (`sqlite_…`).
    static func isCoreDataTable(_ name: String) -> Bool {
        let upper = name.uppercased()
        return upper.hasPrefix("Z_") || upper.hasPrefix("ANSCK") || upper.hasPrefix("SQLITE_")
            || coreDataHistoryTables.contains(upper)
    }

    /// The foreign objects in `db`, one line each ("trigger EVIL on ZITEM", "view V", "table T", "ON
    /// CONFLICT REPLACE in the declaration of table ZITEM"), in name order; empty when the store holds only
    /// what `schema` and Core Data's layout imply. Indexes are tolerated on the tables that are: they act on
    /// no write beyond refusing a duplicate. The model's tables must be declared without the clauses
    /// ``TableDeclarationClauses`` lists, which would make a save drop or overwrite rows while succeeding.
    static func list(in db: Database, schema: StoreSchema) throws -> [String] {
        let known = Set(schema.tables.map { $0.name.uppercased() } + schema.joinTables.map { $0.name.uppercased() })
        func isKnownTable(_ name: String) -> Bool { known.contains(name.uppercased()) || isCoreDataTable(name) }
        var foreign: [String] = []
        for row in try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name") {
            let type: String = row["type"] ?? "?", name: String = row["name"] ?? "?"
            let table: String = row["tbl_name"] ?? "?"
            switch type {
            case "table" where known.contains(name.uppercased()):
                // The model's own tables: made by the model, but re-declared by another program?
                let declaration = String.fromStoreValue(row["sql"]) ?? ""
                for clause in TableDeclarationClauses.silentlyActing(in: declaration) {
                    foreign.append("\(clause) in the declaration of table \(name)")
                }
            case "table" where isKnownTable(name), "index" where isKnownTable(table):
                continue
            case "trigger", "index":
                foreign.append("\(type) \(name) on \(table)")
            default:
                foreign.append("\(type) \(name)")
            }
        }
        return foreign
    }
}
