import Foundation
import GRDB

/// Reads and prunes a store's history tables (written by ``HistoryRecorder``, or by Core Data).
struct HistoryReader {
    let model: ManagedObjectModel
    let identity: StoreIdentity

    /// The WHERE clause (on ATRANSACTION, aliased t) a scope selects, and its arguments. For a delete the
    /// scope's point is inclusive on the far side: "before a token" deletes the token's transaction too.
    private func filter(_ scope: PersistentHistoryChangeRequest.Scope,
                        deleting: Bool) -> (sql: String, arguments: [DatabaseValue]) {
        switch (scope, deleting) {
        case (.afterToken(let token), false):
            return ("t.Z_PK > ?", [(token?.transactionNumber ?? 0).databaseValue])
        case (.afterToken(let token), true):
            // No token: every transaction.
            return ("t.Z_PK <= ?", [(token?.transactionNumber ?? Int64.max).databaseValue])
        case (.afterDate(let date), false):
            return ("t.ZTIMESTAMP > ?", [date.timeIntervalSinceReferenceDate.databaseValue])
        case (.afterDate(let date), true):
            return ("t.ZTIMESTAMP < ?", [date.timeIntervalSinceReferenceDate.databaseValue])
        case (.transactions(let numbers), _):
            let list = numbers.sorted().map(String.init).joined(separator: ", ")
            return ("t.Z_PK IN (\(list))", [])
        }
    }

    /// The transactions a scope selects, oldest first, with their changes when asked.
    func transactions(_ db: Database, scope: PersistentHistoryChangeRequest.Scope, withChanges: Bool,
                      limit: Int) throws -> [PersistentHistoryTransaction] {
        guard try HistoryTables.exist(in: db) else { return [] }
        let (whereSQL, arguments) = filter(scope, deleting: false)
        var sql = """
            SELECT t.Z_PK, t.ZTIMESTAMP, COALESCE(a.ZNAME, t.ZAUTHOR), COALESCE(b.ZNAME, t.ZBUNDLEID),
                   COALESCE(c.ZNAME, t.ZCONTEXTNAME), COALESCE(p.ZNAME, t.ZPROCESSID)
            FROM ATRANSACTION t
            LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS
            LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
            LEFT JOIN ATRANSACTIONSTRING p ON p.Z_PK = t.ZPROCESSIDTS
            WHERE \(whereSQL) ORDER BY t.Z_PK
            """
        if limit > 0 { sql += " LIMIT \(limit)" }
        struct Header { var number: Int64; var timestamp: Double; var author, bundle, context, process: String? }
        var headers: [Header] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try rows.next() {
            headers.append(Header(number: row[0], timestamp: row[1] ?? 0, author: row[2], bundle: row[3],
                                  context: row[4], process: row[5]))
        }
        guard let first = headers.first?.number, let last = headers.last?.number else { return [] }
        var changesByTransaction: [Int64: [PersistentHistoryChange]] = [:]
        if withChanges {
            for change in try changes(db, from: first, through: last) {
                changesByTransaction[change.transactionNumber, default: []].append(change)
            }
        }
        return headers.map { header in
            PersistentHistoryTransaction(
                transactionNumber: header.number, timestamp: Date(timeIntervalSinceReferenceDate: header.timestamp),
                author: header.author, contextName: header.context, bundleID: header.bundle, processID: header.process,
                storeIdentifier: identity.uuid, changes: withChanges ? changesByTransaction[header.number] ?? [] : nil)
        }
    }

    /// The changes of the transactions numbered `first` through `last`, in order. Changes of entities the
    /// model does not have (a store written with another model) are left out.
    private func changes(_ db: Database, from first: Int64, through last: Int64) throws -> [PersistentHistoryChange] {
        let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ACHANGE)").map { ($0["name"] as String).uppercased() })
        var tombstoneCount = 0
        while columns.contains(HistoryTables.tombstoneColumn(tombstoneCount)) { tombstoneCount += 1 }
        let tombstoneList = (0..<tombstoneCount).map { ", " + HistoryTables.tombstoneColumn($0) }.joined()
        let rows = try Row.fetchCursor(db, sql: """
            SELECT Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneList)
            FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY Z_PK
            """, arguments: [first, last])
        var changes: [PersistentHistoryChange] = []
        while let row = try rows.next() {
            guard let type = PersistentHistoryChangeType(rawValue: row[1] ?? -1),
                  let entity = model.entity(number: row[2] ?? 0) else { continue }
            var updated: Set<String>?
            if type == .update {
                let bitmap: Data = row[5] ?? Data()
                updated = Set(HistoryRecorder.slots(in: bitmap).compactMap { slot in
                    slot < entity.allProperties.count ? entity.allProperties[slot].name : nil
                })
            }
            var tombstone: [String: PersistentHistoryChange.TombstoneValue]?
            if type == .delete {
                let preserved = HistoryTables.preservedAttributes(of: entity)
                if !preserved.isEmpty {
                    var values: [String: PersistentHistoryChange.TombstoneValue] = [:]
                    for (index, attribute) in preserved.enumerated() where index < tombstoneCount {
                        values[attribute.name] = Self.tombstoneValue(row[6 + index] as DatabaseValue)
                    }
                    tombstone = values
                }
            }
            changes.append(PersistentHistoryChange(
                changeID: row[0], changedObjectID: ManagedObjectID(entity: entity, primaryKey: row[3] ?? 0, store: identity),
                changeType: type, updatedProperties: updated, tombstone: tombstone, transactionNumber: row[4] ?? 0))
        }
        return changes
    }

    private static func tombstoneValue(_ value: DatabaseValue) -> PersistentHistoryChange.TombstoneValue {
        switch value.storage {
        case .null: return .null
        case .int64(let integer): return .integer(integer)
        case .double(let real): return .real(real)
        case .string(let text): return .text(text)
        case .blob(let data): return .data(data)
        }
    }

    /// Deletes the transactions a delete request's scope selects, and their changes. Returns how many
    /// transactions went.
    func delete(_ db: Database, scope: PersistentHistoryChangeRequest.Scope) throws -> Int {
        guard try HistoryTables.exist(in: db) else { return 0 }
        let (whereSQL, arguments) = filter(scope, deleting: true)
        try db.execute(sql: "DELETE FROM ACHANGE WHERE ZTRANSACTIONID IN (SELECT t.Z_PK FROM ATRANSACTION t WHERE \(whereSQL))",
                       arguments: StatementArguments(arguments))
        try db.execute(sql: "DELETE FROM ATRANSACTION AS t WHERE \(whereSQL)", arguments: StatementArguments(arguments))
        return db.changesCount
    }

    /// The newest transaction's number (0 when there is none).
    func lastTransactionNumber(_ db: Database) throws -> Int64 {
        guard try HistoryTables.exist(in: db) else { return 0 }
        return try Int64.fetchOne(db, sql: "SELECT MAX(Z_PK) FROM ATRANSACTION") ?? 0
    }
}
