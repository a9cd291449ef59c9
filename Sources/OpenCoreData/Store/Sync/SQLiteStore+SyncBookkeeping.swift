import Foundation

/// The sync bookkeeping (``SyncBookkeeping``) as the sync client uses it: records and state in, no connection
/// or SQL out.
extension SQLiteStore {
    /// Writes bookkeeping rows and state in one write transaction (a nil state value removes its key).
    ///
    /// - Throws: ``StoreError`` when the store cannot be written (read-only, busy, SQLite refuses).
    package func writeSyncBookkeeping(records: [SyncBookkeeping.Record], state: [String: Data?] = [:]) throws {
        try write(changesObjects: false) { db in try SyncBookkeeping.write(records: records, state: state, in: SQLiteSession(db: db)) }
    }

    /// The bookkeeping rows of the objects named by (entity name, primary key), where they have one.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read or its bookkeeping holds values of the wrong type.
    package func syncRecords(forObjects objects: [(entity: String, primaryKey: Int64)]) throws -> [SyncBookkeeping.Record] {
        try read { db in try SyncBookkeeping.records(forObjects: objects, in: SQLiteSession(db: db)) }
    }

    /// The bookkeeping rows of `recordIDs`, where they have one.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read or its bookkeeping holds values of the wrong type.
    package func syncRecords(forRecordIDs recordIDs: [UUID]) throws -> [SyncBookkeeping.Record] {
        try read { db in try SyncBookkeeping.records(forRecordIDs: recordIDs, in: SQLiteSession(db: db)) }
    }

    /// The state value kept under `key`, if any.
    ///
    /// - Throws: ``StoreError`` when the store cannot be read.
    package func syncState(_ key: String) throws -> Data? {
        try read { db in try SyncBookkeeping.state(key, in: SQLiteSession(db: db)) }
    }
}
