import Foundation
import GRDB
import GRDBSQLite

/// Reads and prunes a store's history tables (written by ``HistoryRecorder``, or by Core Data).
struct HistoryReader {
    let model: ManagedObjectModel
    let identity: StoreIdentity

    /// The transactions `selection` selects, oldest first, at most `limit` (0: no limit), with their
    /// changes when asked.
    func transactions(_ db: Database, selection: HistorySelection, withChanges: Bool,
                      limit: Int) throws -> [PersistentHistoryTransaction] {
        guard try HistoryTables.exist(in: db) else { return [] }
        var sql = """
            SELECT t.Z_PK, t.ZTIMESTAMP, COALESCE(a.ZNAME, t.ZAUTHOR), COALESCE(b.ZNAME, t.ZBUNDLEID),
                   COALESCE(c.ZNAME, t.ZCONTEXTNAME), COALESCE(p.ZNAME, t.ZPROCESSID),
                   a.Z_PK, b.Z_PK, c.Z_PK, p.Z_PK
            FROM ATRANSACTION t
            LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS
            LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
            LEFT JOIN ATRANSACTIONSTRING p ON p.Z_PK = t.ZPROCESSIDTS
            WHERE \(selection.condition) ORDER BY t.Z_PK
            """
        var arguments = selection.arguments
        if limit > 0 {
            sql += " LIMIT ?"
            arguments.append(Int64(limit).storeValue)
        }
        struct Header { var number: Int64; var timestamp: Double; var author, bundle, context, process: String? }
        var headers: [Header] = []
        // Names repeat from transaction to transaction: each distinct one is made into a String once.
        var names: [Int64: String] = [:]
        func name(_ handle: SQLiteStatement, _ column: Int32, key: Int32) -> String? {
            guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return nil }
            let interned = sqlite3_column_type(handle, key) == SQLITE_INTEGER ? sqlite3_column_int64(handle, key) : nil
            if let interned, let known = names[interned] { return known }
            let text = String(cString: sqlite3_column_text(handle, column))
            if let interned { names[interned] = text }
            return text
        }
        try db.stepRows(sql: sql, arguments: arguments) { handle in
            headers.append(Header(number: sqlite3_column_int64(handle, 0), timestamp: sqlite3_column_double(handle, 1),
                                  author: name(handle, 2, key: 6), bundle: name(handle, 3, key: 7),
                                  context: name(handle, 4, key: 8), process: name(handle, 5, key: 9)))
        }
        guard let first = headers.first?.number, let last = headers.last?.number else { return [] }
        // Changes come ordered by transaction, so each transaction takes the next run of them.
        let allChanges = withChanges ? try changes(db, from: first, through: last) : []
        var next = allChanges.startIndex
        return headers.map { header in
            var own: [PersistentHistoryChange]?
            if withChanges {
                while next < allChanges.endIndex && allChanges[next].transactionNumber < header.number { next += 1 }
                let start = next
                while next < allChanges.endIndex && allChanges[next].transactionNumber == header.number { next += 1 }
                own = Array(allChanges[start..<next])
            }
            return PersistentHistoryTransaction(
                transactionNumber: header.number, timestamp: Date(timeIntervalSinceReferenceDate: header.timestamp),
                author: header.author, contextName: header.context, bundleID: header.bundle, processID: header.process,
                storeIdentifier: identity.uuid, changes: own)
        }
    }

    /// The changes of the transactions numbered `first` through `last`, in order. Changes of entities the
    /// model does not have (a store written with another model) are left out.
    private func changes(_ db: Database, from first: Int64, through last: Int64) throws -> [PersistentHistoryChange] {
        let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ACHANGE)").map { ($0["name"] as String).uppercased() })
        var tombstoneCount = 0
        while columns.contains(HistoryTables.tombstoneColumn(tombstoneCount)) { tombstoneCount += 1 }
        let tombstoneList = (0..<tombstoneCount).map { ", " + HistoryTables.tombstoneColumn($0) }.joined()
        var changes: [PersistentHistoryChange] = []
        var lastEntity: (number: Int64, entity: EntityDescription?) = (-1, nil)
        try db.stepRows(sql: """
            SELECT Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneList)
            FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY ZTRANSACTIONID, Z_PK
            """, arguments: [first.storeValue, last.storeValue]) { handle in
            let entityNumber = sqlite3_column_int64(handle, 2)
            if entityNumber != lastEntity.number { lastEntity = (entityNumber, model.entity(number: Int(entityNumber))) }
            guard let type = PersistentHistoryChangeType(rawValue: Int(sqlite3_column_int64(handle, 1))),
                  let entity = lastEntity.entity else { return }
            var updated: Set<String>?
            if type == .update {
                let bitmap = Self.blob(handle, 5)
                updated = Set(HistoryEntry.slots(in: bitmap).compactMap { slot in
                    slot < entity.allProperties.count ? entity.allProperties[slot].name : nil
                })
            }
            let tombstone = type != .delete ? nil : HistoryTables.tombstone(of: entity, columnCount: tombstoneCount) {
                Self.tombstoneValue(handle, Int32(6 + $0))
            }
            changes.append(PersistentHistoryChange(
                changeID: sqlite3_column_int64(handle, 0),
                changedObjectID: ManagedObjectID(entity: entity, primaryKey: sqlite3_column_int64(handle, 3), store: identity),
                changeType: type, updatedProperties: updated, tombstone: tombstone,
                transactionNumber: sqlite3_column_int64(handle, 4)))
        }
        return changes
    }

    private static func blob(_ handle: SQLiteStatement, _ column: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }

    private static func tombstoneValue(_ handle: SQLiteStatement, _ column: Int32) -> PersistentHistoryChange.TombstoneValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(handle, column)))
        case SQLITE_BLOB: return .data(blob(handle, column))
        default: return .null
        }
    }

    /// Deletes the transactions a delete request's scope selects, and their changes, but none a registered
    /// reader has not seen (``HistoryPruning``). Runs inside the caller's write transaction, which SQLite
    /// runs alone, so no reader can move between the check and the delete.
    func delete(_ db: Database, scope: PersistentHistoryChangeRequest.Scope) throws -> HistoryPruning {
        guard try HistoryTables.exist(in: db) else { return HistoryPruning() }
        let session = SQLiteSession(db: db)
        let readers = try HistoryReaderRegistry.all(in: session).map { (name: $0.name, seen: $0.seen) }
        return try HistoryPruning.run(scope, readers: readers, in: session)
    }

    /// The newest transaction's number (0 when there is none).
    func lastTransactionNumber(_ db: Database) throws -> Int64 {
        guard try HistoryTables.exist(in: db) else { return 0 }
        return try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ATRANSACTION") ?? 0
    }
}
