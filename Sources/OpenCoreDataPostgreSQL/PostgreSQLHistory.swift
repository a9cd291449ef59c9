import Foundation
import OpenCoreData

/// Persistent history on a PostgreSQL store: Core Data's `ATRANSACTION`, `ACHANGE` and `ATRANSACTIONSTRING`
/// tables (docs/HISTORY.md) with PostgreSQL's types, written in the save's own transaction, and announced
/// with `NOTIFY` when it commits.
///
/// Transaction numbers follow commit order: the number is taken from `Z_PRIMARYKEY`'s row for entity 16002
/// by an `UPDATE`, whose row lock the saving transaction holds until it commits. A transaction that gets a
/// higher number therefore commits later, so a reader that has seen number `n` has seen every number below
/// it once `n` is visible, and reading "after my last token" never skips a late commit.
enum PostgreSQLHistory {
    /// The statements that create the history tables and their key rows where missing.
    static let creationSQL = [
        "CREATE TABLE IF NOT EXISTS ATRANSACTIONSTRING (Z_PK BIGINT PRIMARY KEY, Z_ENT BIGINT, Z_OPT BIGINT, ZNAME TEXT)",
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTIONSTRING_UNIQUE_INDEX ON ATRANSACTIONSTRING (ZNAME)",
        """
        CREATE TABLE IF NOT EXISTS ATRANSACTION (Z_PK BIGINT PRIMARY KEY, Z_ENT BIGINT, Z_OPT BIGINT,
            ZAUTHORTS BIGINT, ZBUNDLEIDTS BIGINT, ZCONTEXTNAMETS BIGINT, ZPROCESSIDTS BIGINT,
            ZTIMESTAMP DOUBLE PRECISION, ZAUTHOR TEXT, ZBUNDLEID TEXT, ZCONTEXTNAME TEXT, ZPROCESSID TEXT, ZQUERYGEN BYTEA)
        """,
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TIMESTAMP_INDEX ON ATRANSACTION (ZTIMESTAMP)",
        """
        CREATE TABLE IF NOT EXISTS ACHANGE (Z_PK BIGINT PRIMARY KEY, Z_ENT BIGINT, Z_OPT BIGINT, ZCHANGETYPE BIGINT,
            ZENTITY BIGINT, ZENTITYPK BIGINT, ZTRANSACTIONID BIGINT, ZCOLUMNS BYTEA)
        """,
        "CREATE INDEX IF NOT EXISTS Z_CHANGE_TRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
    ]

    /// The registry of history readers (``HistoryReaderRegistry``), laid out as on SQLite; names in `"C"`
    /// so they sort by code point there too.
    static let readerRegistrySQL = """
        CREATE TABLE IF NOT EXISTS Z_OCDHISTORYREADER (Z_NAME TEXT COLLATE "C" PRIMARY KEY NOT NULL,
            Z_SEEN BIGINT NOT NULL, Z_TIMESTAMP DOUBLE PRECISION NOT NULL)
        """

    /// Which of the history's tables the store's schema holds.
    struct Presence {
        /// `ATRANSACTION`, `ACHANGE` and `ATRANSACTIONSTRING`, with their key rows in `Z_PRIMARYKEY`.
        var history: Bool
        /// `Z_OCDHISTORYREADER`.
        var readerRegistry: Bool
    }

    /// Which history tables are there.
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops.
    static func presence(in session: PostgreSQLSession) throws -> Presence {
        let row = try session.rows("""
            SELECT (SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()
                        AND upper(table_name) IN ('ATRANSACTIONSTRING', 'ATRANSACTION', 'ACHANGE')),
                   (SELECT count(*) FROM Z_PRIMARYKEY WHERE Z_ENT IN (?, ?, ?)),
                   (SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()
                        AND upper(table_name) = ?)
            """, [Int64(HistoryTables.changeEntity).storeValue, Int64(HistoryTables.transactionEntity).storeValue,
                  Int64(HistoryTables.stringEntity).storeValue, HistoryReaderRegistry.table.storeValue]).first
        return Presence(history: row.map { Int64.fromStoreValue($0[0]) == 3 && Int64.fromStoreValue($0[1]) == 3 } ?? false,
                        readerRegistry: row.map { Int64.fromStoreValue($0[2]) == 1 } ?? false)
    }

    /// Creates the history tables, their `Z_PRIMARYKEY` rows and (with `readerRegistry`) the reader registry
    /// where missing, and adds the tombstone columns `model` needs (inside the caller's transaction).
    ///
    /// - Throws: ``StoreError`` when the server refuses a statement.
    static func create(in session: PostgreSQLSession, model: ManagedObjectModel, readerRegistry: Bool) throws {
        // Only what is missing: `CREATE INDEX IF NOT EXISTS` locks its table before it finds the index there,
        // so running the statements on every open would deadlock with stores saving meanwhile.
        let present = try presence(in: session)
        if !present.history {
            for statement in creationSQL { try session.execute(statement) }
            for (number, name) in [(HistoryTables.changeEntity, "CHANGE"), (HistoryTables.transactionEntity, "TRANSACTION"),
                                   (HistoryTables.stringEntity, "TRANSACTIONSTRING")] {
                try session.execute("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0) ON CONFLICT DO NOTHING",
                                    [Int64(number).storeValue, name.storeValue])
            }
        }
        // A store whose history was made before the registry existed gets it on its next open with history.
        if readerRegistry && !present.readerRegistry { try session.execute(readerRegistrySQL) }
        // As on SQLite: a column per preserved attribute of the entity with the most, added when a model
        // needs more than the table has (only then: `ALTER TABLE` locks the table).
        let needed = HistoryTables.tombstoneCount(model)
        let existing = try tombstoneColumnCount(in: session)
        for index in existing..<max(existing, needed) {
            try session.execute("ALTER TABLE ACHANGE ADD COLUMN \(HistoryTables.tombstoneColumn(index)) BYTEA")
        }
    }

    /// How many tombstone columns `ACHANGE` has (`ZTOMBSTONE0` on, without a gap).
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops.
    static func tombstoneColumnCount(in session: PostgreSQLSession) throws -> Int {
        let names = Set(try session.rows("""
            SELECT upper(column_name) FROM information_schema.columns
            WHERE table_schema = current_schema() AND upper(table_name) = 'ACHANGE'
            """).compactMap { String.fromStoreValue($0[0]) })
        var count = 0
        while names.contains(HistoryTables.tombstoneColumn(count)) { count += 1 }
        return count
    }

    /// The `NOTIFY` channel of the store in `schema` (one per schema, so stores sharing a database stay apart).
    static func channel(schema: String?) -> String { "ocd_history_" + (schema ?? "public").lowercased() }

    /// Records `entry`'s changes (deletes with their tombstones) as one transaction, inside the caller's
    /// transaction, and queues its announcement (PostgreSQL sends it when, and only if, the transaction
    /// commits). Returns the transaction's number, or nil when there was nothing to record.
    ///
    /// - Throws: ``StoreError`` when the server refuses a statement.
    static func record(_ entry: HistoryEntry, storeIdentifier: String, channel: String,
                       in session: PostgreSQLSession) throws -> Int64? {
        let changes = entry.changes
        guard !changes.isEmpty else { return nil }
        let transaction = try HistoryTransactionWriter.insertTransaction(author: entry.author, contextName: entry.contextName, in: session)
        var key = try HistoryTransactionWriter.reserveKeys(entity: HistoryTables.changeEntity, count: changes.count, in: session)
        // The tombstone columns this transaction fills (the open added as many as the model needs).
        let tombstones = changes.map(\.tombstone.count).max() ?? 0
        let columns = ["Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]
            + (0..<tombstones).map(HistoryTables.tombstoneColumn)
        // Many rows per statement: one round trip per few hundred changes, not per change.
        let inserter = session.rowInserter(table: HistoryTables.changeTable, columns: columns)
        for change in changes {
            let bitmap = change.type == .update ? HistoryEntry.bitmap(change.updatedSlots) : nil
            var values = [key.storeValue, HistoryTables.changeEntity.storeValue, Int64(1).storeValue,
                          Int64(change.type.rawValue).storeValue, Int64(change.entityNumber).storeValue,
                          change.primaryKey.storeValue, transaction.storeValue, bitmap?.storeValue ?? .null]
            values += (0..<tombstones).map { index in
                index < change.tombstone.count ? PostgreSQLTombstoneCoding.encode(change.tombstone[index]) : .null
            }
            try inserter.insert(RowValues(values: values))
            key += 1
        }
        try inserter.finish()
        try session.execute("SELECT pg_notify(?, ?)", [channel.storeValue, "\(storeIdentifier):\(transaction)".storeValue])
        return transaction
    }

    /// Records the migration `plans` made, in its transaction (a transaction by
    /// ``PersistentHistoryTransaction/migrationAuthor`` with no changes, docs/HISTORY.md), and queues its
    /// announcement on `channel`.
    ///
    /// - Throws: ``StoreError`` when the server refuses a statement.
    static func recordMigration(_ plans: [MigrationPlan], storeIdentifier: String, channel: String,
                                in session: PostgreSQLSession) throws {
        let transaction = try HistoryTransactionWriter.insertTransaction(author: PersistentHistoryTransaction.migrationAuthor,
                                                                         contextName: MigrationHistory.contextName(plans), in: session)
        try session.execute("SELECT pg_notify(?, ?)", [channel.storeValue, "\(storeIdentifier):\(transaction)".storeValue])
    }

    /// The transactions numbered above `number`, oldest first, at most `limit`, each with its changes (what
    /// the change feed delivers).
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops;
    ///   ``StoreError/corrupt(path:reason:)`` naming the change row when a tombstone cell is not one.
    /// `identity` names the store in the changes' object IDs (a new one when nil: IDs that match no context's).
    static func transactions(after number: Int64, limit: Int, model: ManagedObjectModel, storeIdentifier: String,
                             identity: StoreIdentity? = nil, in session: PostgreSQLSession) throws -> [PersistentHistoryTransaction] {
        try transactions(HistorySelection.fetching(.afterToken(nil))[0], after: number, limit: limit, withChanges: true,
                         model: model, storeIdentifier: storeIdentifier, identity: identity, in: session)
    }

    /// The transactions `selection` selects numbered above `number`, oldest first, at most `limit`; with
    /// their changes when `withChanges` (nil changes otherwise, as SQLite gives).
    ///
    /// - Throws: ``StoreError`` when the server refuses the query or the connection drops;
    ///   ``StoreError/corrupt(path:reason:)`` naming the change row when a tombstone cell is not one.
    static func transactions(_ selection: HistorySelection, after number: Int64, limit: Int, withChanges: Bool,
                             model: ManagedObjectModel, storeIdentifier: String, identity: StoreIdentity? = nil,
                             in session: PostgreSQLSession) throws -> [PersistentHistoryTransaction] {
        let rows = try session.rows("""
            SELECT t.Z_PK, t.ZTIMESTAMP, a.ZNAME, c.ZNAME, b.ZNAME, p.ZNAME FROM ATRANSACTION t
            LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
            LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS LEFT JOIN ATRANSACTIONSTRING p ON p.Z_PK = t.ZPROCESSIDTS
            WHERE (\(selection.condition)) AND t.Z_PK > ? ORDER BY t.Z_PK LIMIT ?
            """, selection.arguments + [number.storeValue, Int64(limit).storeValue])
        guard let first = rows.first.flatMap({ Int64.fromStoreValue($0[0]) }),
              let last = rows.last.flatMap({ Int64.fromStoreValue($0[0]) }) else { return [] }
        let identity = identity ?? StoreIdentity(uuid: storeIdentifier)
        var changesByTransaction: [Int64: [PersistentHistoryChange]] = [:]
        // Tombstone columns are read only for a model that preserves something (nothing to name otherwise),
        // and only as many as the table has (a store whose history no open with this model prepared).
        let wanted = withChanges ? HistoryTables.tombstoneCount(model) : 0
        let tombstones = wanted > 0 ? min(wanted, try tombstoneColumnCount(in: session)) : 0
        let tombstoneList = (0..<tombstones).map { ", " + HistoryTables.tombstoneColumn($0) }.joined()
        for row in try withChanges ? session.rows("""
            SELECT Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneList) FROM ACHANGE
            WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY Z_PK
            """, [first.storeValue, last.storeValue]) : [] {
            // Rows of entities this model does not have (another version's) are left out, as on SQLite.
            guard let id = Int64.fromStoreValue(row[0]), let typeNumber = Int.fromStoreValue(row[1]),
                  let type = PersistentHistoryChangeType(rawValue: typeNumber),
                  let entity = Int.fromStoreValue(row[2]).flatMap(model.entity(number:)),
                  let key = Int64.fromStoreValue(row[3]), let transaction = Int64.fromStoreValue(row[4]) else { continue }
            var updated: Set<String>?
            if type == .update {
                let slots = Data.fromStoreValue(row[5]).map(HistoryEntry.slots(in:)) ?? []
                updated = Set(slots.compactMap { $0 < entity.allProperties.count ? entity.allProperties[$0].name : nil })
            }
            let tombstone = type != .delete ? nil : try HistoryTables.tombstone(of: entity, columnCount: tombstones) { index in
                guard let value = PostgreSQLTombstoneCoding.decode(row[6 + index]) else {
                    throw StoreError.corrupt(path: session.server,
                                             reason: "ACHANGE row \(id): \(HistoryTables.tombstoneColumn(index)) is not a tombstone value")
                }
                return value
            }
            changesByTransaction[transaction, default: []].append(PersistentHistoryChange.recorded(
                changeID: id, changedObjectID: ManagedObjectID(entity: entity, primaryKey: key, store: identity),
                changeType: type, updatedProperties: updated, tombstone: tombstone, transactionNumber: transaction))
        }
        return rows.compactMap { row in
            guard let number = Int64.fromStoreValue(row[0]) else { return nil }
            return PersistentHistoryTransaction.recorded(
                transactionNumber: number,
                timestamp: Date(timeIntervalSinceReferenceDate: Double.fromStoreValue(row[1]) ?? 0),
                author: String.fromStoreValue(row[2]), contextName: String.fromStoreValue(row[3]),
                bundleID: String.fromStoreValue(row[4]), processID: String.fromStoreValue(row[5]),
                storeIdentifier: storeIdentifier, changes: withChanges ? changesByTransaction[number] ?? [] : nil)
        }
    }
}
