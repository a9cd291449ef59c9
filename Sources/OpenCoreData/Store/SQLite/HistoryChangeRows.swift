import Foundation
import GRDB

/// Writes a commit's insert and update rows into `ACHANGE`, many rows per statement run.
///
/// One `INSERT … VALUES (…), (…), …` run writes a whole chunk: what SQLite does per run of a statement
/// (resetting the program, opening the table's and the index's cursors, finding the end of each again) is
/// paid once per chunk instead of once per row, about half of what a change row cost when written alone
/// (docs/performance-log.md). The rows, their keys and their order are exactly those one statement per row
/// would write.
enum HistoryChangeRows {
    /// Rows per statement run, largest first: full chunks of the largest, the rest with the smaller ones, so a
    /// connection caches three statements whatever the size of its commits.
    static let chunkSizes = [100, 10, 1]

    /// Parameters per row: Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZCOLUMNS. The transaction, the same for
    /// every row, is parameter 1.
    static let parametersPerRow: Int32 = 5

    /// The statement writing `rows` change rows, for each of `chunkSizes`.
    private static let statements: [Int: String] = Dictionary(uniqueKeysWithValues: chunkSizes.map { ($0, sql(rows: $0)) })

    /// `INSERT INTO ACHANGE … VALUES` with `rows` rows of numbered parameters (`?1` is the transaction).
    static func sql(rows: Int) -> String {
        let values = (0..<rows).map { row in
            let first = 2 + row * Int(parametersPerRow)
            return "(?\(first), \(HistoryTables.changeEntity), 1, ?\(first + 1), ?\(first + 2), ?\(first + 3), ?1, ?\(first + 4))"
        }
        return "INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES "
            + values.joined(separator: ", ")
    }

    /// Writes one row per change, keyed `firstKey`, `firstKey + 1`, … in order, all in `transaction`. An
    /// update names its changed properties in `ZCOLUMNS`; an insert leaves it null.
    /// - Throws: `DatabaseError` when SQLite refuses a row (a key already taken, a full disk).
    static func write(_ changes: [HistoryEntry.Change], firstKey: Int64, transaction: Int64, in db: Database) throws {
        var written = 0
        for size in chunkSizes where changes.count - written >= size {
            let insert = try BoundWrite(db, sql: statements[size]!)
            try insert.bind(transaction, at: 1)
            while changes.count - written >= size {
                for row in 0..<size {
                    let change = changes[written + row]
                    let first = 2 + Int32(row) * parametersPerRow
                    try insert.bind(firstKey + Int64(written + row), at: first)
                    try insert.bind(Int64(change.type.rawValue), at: first + 1)
                    try insert.bind(Int64(change.entityNumber), at: first + 2)
                    try insert.bind(change.primaryKey, at: first + 3)
                    if change.type == .update, let columns = HistoryEntry.bitmap(change.updatedSlots) {
                        try insert.bind(columns.storeValue, at: first + 4)
                    } else {
                        try insert.bind(.null, at: first + 4)
                    }
                }
                try insert.step()
                written += size
            }
        }
    }
}
