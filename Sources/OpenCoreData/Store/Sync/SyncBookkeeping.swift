import Foundation
import GRDB

/// The sync client's bookkeeping in the store file (docs/SYNC.md): which record ID every replica knows each
/// synced object by, and the client's own state (its ID, the server token it has pulled through). Tables of
/// our own beside Core Data's, with `Z_` names no entity table can have, so Core Data and every `ocd` command
/// still open the store. They are made the first time a sync client writes, never otherwise.
package enum SyncBookkeeping {
    /// One synced object: its record ID, its entity and primary key here, and whether it was deleted (a
    /// deleted record keeps its row, so that a late upsert of it is recognised and ignored).
    package struct Record: Sendable, Hashable {
        /// The ID every replica knows the object by.
        package var recordID: UUID
        /// The object's entity, by name.
        package var entity: String
        /// The object's primary key in this store.
        package var primaryKey: Int64
        /// Whether the object is deleted.
        package var isDeleted: Bool

        /// A bookkeeping row.
        package init(recordID: UUID, entity: String, primaryKey: Int64, isDeleted: Bool) {
            self.recordID = recordID
            self.entity = entity
            self.primaryKey = primaryKey
            self.isDeleted = isDeleted
        }
    }

    static func create(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS Z_OCDSYNCRECORD (ZRECORDID BLOB PRIMARY KEY NOT NULL,
                ZENTITY VARCHAR NOT NULL, Z_PK INTEGER NOT NULL, ZDELETED INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS Z_OCDSYNCRECORD_OBJECT ON Z_OCDSYNCRECORD (ZENTITY, Z_PK);
            CREATE TABLE IF NOT EXISTS Z_OCDSYNCSTATE (ZKEY VARCHAR PRIMARY KEY NOT NULL, ZVALUE BLOB NOT NULL);
            """)
    }

    static func exists(in db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('Z_OCDSYNCRECORD', 'Z_OCDSYNCSTATE')") == 2
    }

    /// Writes `records` (insert or replace by record ID) and `state` (a nil value removes the key).
    static func write(records: [Record], state: [String: Data?], in db: Database) throws {
        try create(in: db)
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO Z_OCDSYNCRECORD (ZRECORDID, ZENTITY, Z_PK, ZDELETED) VALUES (?, ?, ?, ?)
            ON CONFLICT (ZRECORDID) DO UPDATE SET ZENTITY = excluded.ZENTITY, Z_PK = excluded.Z_PK,
                ZDELETED = excluded.ZDELETED
            """)
        for record in records {
            try upsert.execute(arguments: [record.recordID.blob, record.entity, record.primaryKey, record.isDeleted])
        }
        for (key, value) in state {
            if let value {
                try db.execute(sql: "INSERT OR REPLACE INTO Z_OCDSYNCSTATE (ZKEY, ZVALUE) VALUES (?, ?)", arguments: [key, value])
            } else {
                try db.execute(sql: "DELETE FROM Z_OCDSYNCSTATE WHERE ZKEY = ?", arguments: [key])
            }
        }
    }

    /// The rows of the objects named by (entity, primary key), where they have one.
    static func records(forObjects objects: [(entity: String, primaryKey: Int64)], in db: Database) throws -> [Record] {
        guard try exists(in: db) else { return [] }
        let statement = try db.cachedStatement(sql: "SELECT ZRECORDID, ZENTITY, Z_PK, ZDELETED FROM Z_OCDSYNCRECORD WHERE ZENTITY = ? AND Z_PK = ?")
        return try objects.compactMap { object in
            try Row.fetchOne(statement, arguments: [object.entity, object.primaryKey]).map { try record(from: $0) }
        }
    }

    /// The rows of `recordIDs`, where they have one.
    static func records(forRecordIDs recordIDs: [UUID], in db: Database) throws -> [Record] {
        guard try exists(in: db) else { return [] }
        let statement = try db.cachedStatement(sql: "SELECT ZRECORDID, ZENTITY, Z_PK, ZDELETED FROM Z_OCDSYNCRECORD WHERE ZRECORDID = ?")
        return try recordIDs.compactMap { id in
            try Row.fetchOne(statement, arguments: [id.blob]).map { try record(from: $0) }
        }
    }

    /// The value kept under `key`, if any.
    static func state(_ key: String, in db: Database) throws -> Data? {
        guard try exists(in: db) else { return nil }
        return try Data.fetchOne(db, sql: "SELECT ZVALUE FROM Z_OCDSYNCSTATE WHERE ZKEY = ?", arguments: [key])
    }

    /// - Throws: `DatabaseError` `SQLITE_CORRUPT` naming the column when another program wrote a value of the
    ///   wrong type there.
    private static func record(from row: Row) throws -> Record {
        func refuse(_ column: String) -> DatabaseError {
            DatabaseError(resultCode: .SQLITE_CORRUPT, message: "Z_OCDSYNCRECORD: \(column) is \(row[column] as StoreValue)")
        }
        guard let bytes = Data.fromStoreValue(row[0]), bytes.count == 16 else { throw refuse("ZRECORDID") }
        guard let entity = String.fromStoreValue(row[1]) else { throw refuse("ZENTITY") }
        guard let key = Int64.fromStoreValue(row[2]) else { throw refuse("Z_PK") }
        guard let deleted = Int64.fromStoreValue(row[3]) else { throw refuse("ZDELETED") }
        let id = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return Record(recordID: id, entity: entity, primaryKey: key, isDeleted: deleted != 0)
    }
}

private extension UUID {
    /// The 16 bytes, as the record table keeps them.
    var blob: Data { withUnsafeBytes(of: uuid) { Data($0) } }
}
