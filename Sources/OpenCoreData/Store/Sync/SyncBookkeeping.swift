import Foundation

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

    /// Creates the tables where missing. Their spelling is SQLite's: the sync client mirrors an SQLite store.
    ///
    /// - Throws: what the session throws.
    static func create(in session: some SQLSession) throws {
        try session.execute("""
            CREATE TABLE IF NOT EXISTS Z_OCDSYNCRECORD (ZRECORDID BLOB PRIMARY KEY NOT NULL,
                ZENTITY VARCHAR NOT NULL, Z_PK INTEGER NOT NULL, ZDELETED INTEGER NOT NULL)
            """, [])
        try session.execute("CREATE INDEX IF NOT EXISTS Z_OCDSYNCRECORD_OBJECT ON Z_OCDSYNCRECORD (ZENTITY, Z_PK)", [])
        try session.execute("CREATE TABLE IF NOT EXISTS Z_OCDSYNCSTATE (ZKEY VARCHAR PRIMARY KEY NOT NULL, ZVALUE BLOB NOT NULL)", [])
    }

    /// Whether both tables are there (a store no sync client wrote has neither).
    ///
    /// - Throws: what the session throws.
    static func exists(in session: some SQLSession) throws -> Bool {
        try session.tableExists("Z_OCDSYNCRECORD") && session.tableExists("Z_OCDSYNCSTATE")
    }

    /// Writes `records` (insert or replace by record ID) and `state` (a nil value removes the key).
    ///
    /// - Throws: what the session throws.
    static func write(records: [Record], state: [String: Data?], in session: some SQLSession) throws {
        try create(in: session)
        let upsert = try session.prepareWrite("""
            INSERT INTO Z_OCDSYNCRECORD (ZRECORDID, ZENTITY, Z_PK, ZDELETED) VALUES (?, ?, ?, ?)
            ON CONFLICT (ZRECORDID) DO UPDATE SET ZENTITY = excluded.ZENTITY, Z_PK = excluded.Z_PK,
                ZDELETED = excluded.ZDELETED
            """)
        for record in records {
            try upsert.bind(record.recordID.blob.storeValue, at: 1)
            try upsert.bind(record.entity.storeValue, at: 2)
            try upsert.bind(record.primaryKey.storeValue, at: 3)
            try upsert.bind(Int64(record.isDeleted ? 1 : 0).storeValue, at: 4)
            try upsert.step()
        }
        for (key, value) in state {
            if let value {
                try session.execute("""
                    INSERT INTO Z_OCDSYNCSTATE (ZKEY, ZVALUE) VALUES (?, ?) ON CONFLICT (ZKEY) DO UPDATE SET ZVALUE = excluded.ZVALUE
                    """, [key.storeValue, value.storeValue])
            } else {
                try session.execute("DELETE FROM Z_OCDSYNCSTATE WHERE ZKEY = ?", [key.storeValue])
            }
        }
    }

    /// The rows of the objects named by (entity, primary key), where they have one.
    ///
    /// - Throws: what the session throws; ``StoreError/corrupt(path:reason:)`` as ``record(from:in:)``.
    static func records(forObjects objects: [(entity: String, primaryKey: Int64)], in session: some SQLSession) throws -> [Record] {
        guard try exists(in: session) else { return [] }
        return try objects.compactMap { object in
            try session.rows("SELECT ZRECORDID, ZENTITY, Z_PK, ZDELETED FROM Z_OCDSYNCRECORD WHERE ZENTITY = ? AND Z_PK = ?",
                             [object.entity.storeValue, object.primaryKey.storeValue])
                .first.map { try record(from: $0, in: session) }
        }
    }

    /// The rows of `recordIDs`, where they have one.
    ///
    /// - Throws: as ``records(forObjects:in:)``.
    static func records(forRecordIDs recordIDs: [UUID], in session: some SQLSession) throws -> [Record] {
        guard try exists(in: session) else { return [] }
        return try recordIDs.compactMap { id in
            try session.rows("SELECT ZRECORDID, ZENTITY, Z_PK, ZDELETED FROM Z_OCDSYNCRECORD WHERE ZRECORDID = ?",
                             [id.blob.storeValue])
                .first.map { try record(from: $0, in: session) }
        }
    }

    /// The value kept under `key`, if any.
    ///
    /// - Throws: what the session throws.
    static func state(_ key: String, in session: some SQLSession) throws -> Data? {
        guard try exists(in: session) else { return nil }
        return try session.rows("SELECT ZVALUE FROM Z_OCDSYNCSTATE WHERE ZKEY = ?", [key.storeValue])
            .first.flatMap { Data.fromStoreValue($0[0]) }
    }

    /// - Throws: ``StoreError/corrupt(path:reason:)`` naming the column when another program wrote a value of
    ///   the wrong type there.
    private static func record(from row: [StoreValue], in session: some SQLSession) throws -> Record {
        func refuse(_ column: Int, _ name: String) -> StoreError {
            StoreError.corrupt(path: session.location, reason: "Z_OCDSYNCRECORD: \(name) is \(row[column])")
        }
        guard let bytes = Data.fromStoreValue(row[0]), bytes.count == 16 else { throw refuse(0, "ZRECORDID") }
        guard let entity = String.fromStoreValue(row[1]) else { throw refuse(1, "ZENTITY") }
        guard let key = Int64.fromStoreValue(row[2]) else { throw refuse(2, "Z_PK") }
        guard let deleted = Int64.fromStoreValue(row[3]) else { throw refuse(3, "ZDELETED") }
        let id = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return Record(recordID: id, entity: entity, primaryKey: key, isDeleted: deleted != 0)
    }
}

private extension UUID {
    /// The 16 bytes, as the record table keeps them.
    var blob: Data { withUnsafeBytes(of: uuid) { Data($0) } }
}
