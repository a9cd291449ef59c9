import Foundation
import GRDB

/// Batch updates and deletes replace or delete stored values without a save's file handling: the files
/// their rows referred to are listed inside the batch's transaction, before its statement runs, and removed
/// once it has committed (``PersistentStore/batchUpdate(entity:assignments:selection:returningIDs:followUps:)``,
/// ``PersistentStore/batchDelete(initial:entity:selection:needsIDs:followUps:)``). A batch that fails removes
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
                if let name = referencedFile(in: row[index] as DatabaseValue) { names.append(name) }
            }
        }
        return names
    }

    /// Removes files a committed batch let go of.
    func remove(_ names: [String]) {
        for name in names { remove(name) }
    }
}
