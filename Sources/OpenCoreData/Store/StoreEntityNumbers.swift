import Foundation

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
        try numbers(inRows: try SQLiteStore.primaryKeyRows(ofStoreAt: path), path: path)
    }

    /// The numbers `rows` give (each `Z_ENT, Z_NAME` of `Z_PRIMARYKEY` below Core Data's own); `path` names
    /// the store in errors.
    ///
    /// - Throws: ``StoreError/corrupt(path:reason:)`` as ``read(path:)``.
    static func numbers(inRows rows: [[StoreValue]], path: String) throws -> [String: Int] {
        var numbers: [String: Int] = [:]
        var seenNumbers: Set<Int> = []
        for (position, row) in rows.enumerated() {
            guard row.count == 2, let number = Int.fromStoreValue(row[0]), let name = String.fromStoreValue(row[1]) else {
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
