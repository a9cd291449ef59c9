import Foundation
import GRDB

/// Core Data's persistent-history layout (docs/HISTORY.md): `ATRANSACTION` (one row per commit),
/// `ACHANGE` (one row per object changed), `ATRANSACTIONSTRING` (author, context and process names,
/// each stored once), with entity numbers 16001–16003 in `Z_PRIMARYKEY`, where their keys are reserved
/// so that transaction numbers only ever count up, even after pruning.
///
/// The tables are created the first time a store opened with history tracking commits, never on open.
package enum HistoryTables {
    package static let transactionTable = "ATRANSACTION"
    static let changeTable = "ACHANGE"
    static let stringTable = "ATRANSACTIONSTRING"

    /// Core Data's entity numbers for its history rows (`Z_ENT` in each table, a row each in Z_PRIMARYKEY).
    package static let changeEntity = 16001
    package static let transactionEntity = 16002
    package static let stringEntity = 16003
    /// Entity numbers from here up are Core Data's own, never a model's.
    package static let firstReservedEntityNumber = 16000

    /// Every table name the history layout uses (tolerated in any store, written only by this layer).
    static let tableNames: Set<String> = [transactionTable, changeTable, stringTable]

    /// Deleted rows of the commit under way, captured by temporary triggers on the writing connection
    /// (they see every delete: a save's, a cascade's, a batch request's) and read back before the commit.
    static let deletedRowsTable = "temp.ocd_history_deleted"

    /// `ZTOMBSTONE0`…: one column per preserved attribute, as many as the entity with the most has.
    package static func tombstoneColumn(_ index: Int) -> String { "ZTOMBSTONE\(index)" }

    /// The attributes whose values a delete keeps in its change row, in tombstone-column order: the
    /// entity's attributes marked `preservesValueInHistoryOnDeletion`, by name.
    package static func preservedAttributes(of entity: EntityDescription) -> [AttributeDescription] {
        entity.allProperties.compactMap { $0 as? AttributeDescription }
            .filter { $0.preservesValueInHistoryOnDeletion && !$0.isTransient }
            .sorted { $0.name < $1.name }
    }

    /// The entity's table columns that hold its preserved attributes, in tombstone-column order (what a
    /// delete reads into the tombstone).
    package static func preservedColumns(of entity: EntityDescription) -> [String] {
        preservedAttributes(of: entity).compactMap { attribute in
            guard let slot = entity.slotByName[attribute.name], case .attribute(let column, _) = entity.storage[slot] else { return nil }
            return column
        }
    }

    /// How many tombstone columns the model needs: as many as its entity with the most preserved attributes.
    package static func tombstoneCount(_ model: ManagedObjectModel) -> Int {
        model.entitiesByNumber.map { preservedAttributes(of: $0).count }.max() ?? 0
    }

    /// A delete change's tombstone from its row's tombstone columns (`count` of them), as both stores read
    /// it: each preserved attribute of `entity` by name, from the column at its position; nil when the
    /// entity preserves nothing.
    package static func tombstone(of entity: EntityDescription, columnCount count: Int,
                                  value: (Int) throws -> PersistentHistoryChange.TombstoneValue)
        rethrows -> [String: PersistentHistoryChange.TombstoneValue]? {
        let preserved = preservedAttributes(of: entity)
        guard !preserved.isEmpty else { return nil }
        var values: [String: PersistentHistoryChange.TombstoneValue] = [:]
        for (index, attribute) in preserved.enumerated() where index < count {
            values[attribute.name] = try value(index)
        }
        return values
    }

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
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('ATRANSACTION', 'ACHANGE')") == 2
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
