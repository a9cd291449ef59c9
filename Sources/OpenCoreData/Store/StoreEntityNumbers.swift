import Foundation
import GRDB

/// The entity numbers a store file gives its entities, read from its `Z_PRIMARYKEY`.
///
/// Core Data numbers a store's entities when it creates the store and keeps those numbers across model
/// versions, so a store it wrote (or one that lived through migrations) may number them differently from the
/// order ``ManagedObjectModel`` would choose. Rows carry the number in `Z_ENT`, and some column and join-table
/// names contain it, so a model reading such a store must use the store's numbers.
enum StoreEntityNumbers {
    /// The entity numbers of the store at `path`, by entity name; Core Data's own numbers (16000 and up,
    /// persistent history) are left out. Reads through a read-only connection; the file is not changed.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file cannot be opened as SQLite or has no
    ///   `Z_PRIMARYKEY`; ``StoreError/corrupt(path:reason:)`` when a row has no name or number, or two rows
    ///   give one name or one number.
    static func read(path: String) throws -> [String: Int] {
        var configuration = Configuration()
        configuration.readonly = true
        let rows: [Row]
        do {
            let reader = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? reader.close() }
            rows = try reader.read { db in
                guard try db.tableExists("Z_PRIMARYKEY") else {
                    throw StoreError.notAStore(path: path, reason: "it has no Z_PRIMARYKEY table")
                }
                return try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < ? ORDER BY Z_ENT",
                                        arguments: [HistoryTables.firstReservedEntityNumber])
            }
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
        var numbers: [String: Int] = [:]
        var seenNumbers: Set<Int> = []
        for (position, row) in rows.enumerated() {
            guard let number = row[0] as Int?, let name = row[1] as String? else {
                throw StoreError.corrupt(path: path, reason: "Z_PRIMARYKEY row \(position + 1) has no entity number or name")
            }
            guard seenNumbers.insert(number).inserted else {
                throw StoreError.corrupt(path: path, reason: "Z_PRIMARYKEY gives entity number \(number) twice")
            }
            guard numbers.updateValue(number, forKey: name) == nil else {
                throw StoreError.corrupt(path: path, reason: "Z_PRIMARYKEY names entity '\(name)' twice")
            }
        }
        return numbers
    }
}
