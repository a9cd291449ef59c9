import Foundation
import GRDB

/// Batch updates, deletes and upserting inserts replace or delete stored values without a save's file
/// handling: the files their rows referred to are listed inside the batch's transaction, and removed once
/// it has committed (``SQLiteStore/batchUpdate(entity:assignments:selection:returningIDs:followUps:)``,
/// ``SQLiteStore/batchDelete(initial:entity:selection:needsIDs:followUps:)``). A batch that fails removes
/// nothing, so the folder never lacks a file a committed row names.
extension ExternalBinaryStorage {
    /// The names of the flagged columns of `table`, in table order; empty when it has none.
    func columnNames(ofTable table: String, schema: StoreSchema) -> [String] {
        guard let columns = columns(forTable: table)?.columns, let stored = schema.table(named: table) else { return [] }
        return columns.compactMap { $0.index < stored.columns.count ? stored.columns[$0.index].name : nil }
    }

    /// The files the rows `sql` selects refer to, in any of the columns it selects (each a flagged column).
    ///
    /// - Throws: the `DatabaseError` of the query.
    static func referencedFiles(_ db: Database, sql: String, arguments: StatementArguments) throws -> [String] {
        var names: [String] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            for index in 0..<row.count {
                if let name = referencedFile(in: row[index] as StoreValue) { names.append(name) }
            }
        }
        return names
    }

    /// Starts noting, on the writing connection and inside the transaction under way, the stored values
    /// that updates of `table` replace in `columns`: what an upserting batch insert's `DO UPDATE` lets go
    /// of. A temporary table and trigger, which ``filesReplacedByUpserts(_:table:)`` reads and drops before
    /// the commit (a rolled-back transaction takes them away too).
    ///
    /// - Throws: the `DatabaseError` of creating them.
    static func noteUpsertReplacements(_ db: Database, table: String, columns: [String]) throws {
        try db.execute(sql: "CREATE TEMP TABLE ocd_external_replaced (value)")
        let inserts = columns.map { "INSERT INTO ocd_external_replaced (value) VALUES (OLD.\($0));" }.joined(separator: " ")
        try db.execute(sql: "CREATE TEMP TRIGGER ocd_external_replaced_\(table) BEFORE UPDATE ON main.\(table) BEGIN \(inserts) END")
    }

    /// The files of the values noted since ``noteUpsertReplacements(_:table:columns:)``; drops its table
    /// and trigger.
    ///
    /// - Throws: the `DatabaseError` of reading or dropping them.
    static func filesReplacedByUpserts(_ db: Database, table: String) throws -> [String] {
        let names = try referencedFiles(db, sql: "SELECT value FROM temp.ocd_external_replaced", arguments: [])
        try db.execute(sql: "DROP TRIGGER temp.ocd_external_replaced_\(table)")
        try db.execute(sql: "DROP TABLE temp.ocd_external_replaced")
        return names
    }

    /// Removes files a committed batch let go of.
    func remove(_ names: [String]) {
        for name in names { remove(name) }
    }
}
