import Foundation
import GRDB

/// Stores this library wrote before it kept external binary storage values in Core Data's marked form hold
/// the plain bytes in those columns. They are told apart by their metadata
/// (``StoreMetadata/mayHoldUnmarkedExternalData``: our framework version, none of the keys Core Data has
/// written since, and no `_OCDExternalDataMarked`), so a store Core Data wrote is never taken for one.
///
/// Opened writable, such a store is brought to the marked form before anything else reads it, in one
/// transaction: each non-empty value gets the inline marker (`0x01`, at any size, as batch inserts write it),
/// and the metadata gets the flag. Opened read-only, it is not changed and its values read as they are.
///
/// The same metadata was written for a few hours by the version that already marked values; a store whose
/// every value is already well formed (an inline marker, or a reference to a file that is there) is taken
/// as marked and only gets the flag. A value written before the markers existed is never a reference to
/// a file there, so it tells an unmarked store from a marked one unless every value of the store happens to
/// start with `0x01`.
enum UnmarkedExternalData {
    /// What opening found.
    enum Outcome: Equatable {
        /// The store is in the marked form (Core Data's, or ours with the flag).
        case marked
        /// The store holds plain bytes and stays so: it was opened read-only.
        case readsPlainBytes
    }

    /// Checks a store that already existed when it was opened, and marks its values if it is an unmarked
    /// one opened writable.
    ///
    /// - Throws: the `DatabaseError` of a failed read or write (the transaction then changes nothing).
    static func prepare(_ writer: any DatabaseWriter, storage: ExternalBinaryStorage, schema: StoreSchema,
                        readOnly: Bool) throws -> Outcome {
        let path = storage.storePath
        // A store without readable metadata was let through by the schema check (read-only); it is no
        // store of ours.
        guard let metadata = try? writer.read({ db in try StoreMetadata.read(db, path: path) }),
              metadata.mayHoldUnmarkedExternalData else { return .marked }
        if readOnly {
            return try writer.read { db in try allValuesWellFormed(db, storage: storage, schema: schema) }
                ? .marked : .readsPlainBytes
        }
        try writer.write { db in
            var metadata = try StoreMetadata.read(db, path: path)
            guard metadata.mayHoldUnmarkedExternalData else { return }
            if try !allValuesWellFormed(db, storage: storage, schema: schema) {
                try markValues(db, storage: storage, schema: schema)
            }
            metadata.externalDataMarked = true
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = (SELECT MIN(Z_VERSION) FROM Z_METADATA)",
                           arguments: [try metadata.plistData()])
        }
        return .marked
    }

    /// Each table with flagged columns and their names.
    private static func flaggedColumns(_ storage: ExternalBinaryStorage, _ schema: StoreSchema) -> [(table: String, columns: [String])] {
        schema.tables.compactMap { table in
            let names = storage.columnNames(ofTable: table.name, schema: schema)
            return names.isEmpty ? nil : (table.name, names)
        }
    }

    /// Whether every non-empty value of the flagged columns is in the marked form: the inline marker, or a
    /// reference to a regular file in the folder.
    private static func allValuesWellFormed(_ db: Database, storage: ExternalBinaryStorage, schema: StoreSchema) throws -> Bool {
        for (table, columns) in flaggedColumns(storage, schema) {
            for column in columns {
                let values = try StoreValue.fetchCursor(
                    db, sql: "SELECT \(column) FROM \(table) WHERE typeof(\(column)) = 'blob' AND length(\(column)) > 0")
                while let value = try values.next() {
                    guard case .blob(let bytes) = value.storage else { continue }
                    if bytes.first == ExternalBinaryStorage.inlineMarker { continue }
                    guard let name = ExternalBinaryStorage.referencedFile(in: value), storage.holdsFile(named: name) else {
                        return false
                    }
                }
            }
        }
        return true
    }

    /// Puts the inline marker before every non-empty value of the flagged columns.
    private static func markValues(_ db: Database, storage: ExternalBinaryStorage, schema: StoreSchema) throws {
        for (table, columns) in flaggedColumns(storage, schema) {
            for column in columns {
                let keys = try Int64.fetchAll(
                    db, sql: "SELECT Z_PK FROM \(table) WHERE typeof(\(column)) = 'blob' AND length(\(column)) > 0")
                for key in keys {
                    guard let value = try StoreValue.fetchOne(db, sql: "SELECT \(column) FROM \(table) WHERE Z_PK = ?",
                                                                 arguments: [key]) else { continue }
                    try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE Z_PK = ?",
                                   arguments: [ExternalBinaryStorage.inlineForm(value), key])
                }
            }
        }
    }
}
