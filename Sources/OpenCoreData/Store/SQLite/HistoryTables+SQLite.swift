import Foundation
import GRDB

/// The SQLite spelling of the history's tables (``HistoryTables``, ``HistoryReaderRegistry``), and the
/// temporary triggers through which the SQLite store sees every delete of a commit.
extension HistoryTables {
    /// Deleted rows of the commit under way, captured by temporary triggers on the writing connection
    /// (they see every delete: a save's, a cascade's, a batch request's) and read back before the commit.
    static let deletedRowsTable = "temp.ocd_history_deleted"

    /// Creates the tables and their key rows where missing, and adds tombstone columns the model needs.
    static func create(in db: Database, model: ManagedObjectModel) throws {
        let tombstones = tombstoneCount(model)
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS ATRANSACTIONSTRING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);
            CREATE INDEX IF NOT EXISTS Z_TRANSACTIONSTRING_UNIQUE_INDEX ON ATRANSACTIONSTRING (ZNAME);
            CREATE TABLE IF NOT EXISTS ATRANSACTION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER,
                ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR,
                ZQUERYGEN BLOB);
            CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TIMESTAMP_INDEX ON ATRANSACTION (ZTIMESTAMP);
            CREATE TABLE IF NOT EXISTS ACHANGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB);
            CREATE INDEX IF NOT EXISTS Z_CHANGE_TRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID);
            """)
        let existing = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ACHANGE)").map { ($0["name"] as String).uppercased() })
        for index in 0..<tombstones where !existing.contains(tombstoneColumn(index)) {
            try db.execute(sql: "ALTER TABLE ACHANGE ADD COLUMN \(tombstoneColumn(index)) BLOB")
        }
        for (number, name) in [(changeEntity, "CHANGE"), (transactionEntity, "TRANSACTION"), (stringEntity, "TRANSACTIONSTRING")] {
            try db.execute(sql: "INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)",
                           arguments: [number, name])
        }
    }

    /// Whether the store has history tables (a store without them has no history to read).
    static func exist(in db: Database) throws -> Bool {
        // Read from the file's schema, not GRDB's cache: another connection may have made the tables since.
        let session = SQLiteSession(db: db)
        return try session.tableExists(transactionTable) && session.tableExists(changeTable)
    }

    /// Installs, on the writing connection, the temporary table and triggers that capture deleted rows
    /// (entity number, key, preserved values). Temporary objects live in the connection, not in the file.
    static func installDeleteCapture(in db: Database, model: ManagedObjectModel) throws {
        let tombstones = tombstoneCount(model)
        let valueColumns = (0..<tombstones).map { ", v\($0)" }.joined()
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS ocd_history_deleted (entity INTEGER, pk INTEGER\(valueColumns))")
        for table in model.schema.tables {
            // Each entity stored in the table keeps its own preserved columns: choose them by Z_ENT.
            let entities = model.entitiesByNumber.filter { $0.tableName == table.name }
            var values: [String] = []
            for index in 0..<tombstones {
                let cases = entities.compactMap { entity -> String? in
                    let preserved = preservedColumns(of: entity)
                    guard index < preserved.count else { return nil }
                    return "WHEN \(entity.entityNumber) THEN OLD.\(preserved[index])"
                }
                values.append(cases.isEmpty ? "NULL" : "CASE OLD.Z_ENT \(cases.joined(separator: " ")) END")
            }
            let list = (["OLD.Z_ENT", "OLD.Z_PK"] + values).joined(separator: ", ")
            try db.execute(sql: """
                CREATE TEMP TRIGGER IF NOT EXISTS ocd_history_delete_\(table.name) AFTER DELETE ON main.\(table.name)
                BEGIN INSERT INTO ocd_history_deleted VALUES (\(list)); END
                """)
        }
    }
}

extension HistoryReaderRegistry {
    /// Creates the table where missing.
    static func create(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS Z_OCDHISTORYREADER (Z_NAME VARCHAR PRIMARY KEY NOT NULL,
                Z_SEEN INTEGER NOT NULL, Z_TIMESTAMP FLOAT NOT NULL)
            """)
    }
}
