import Foundation
import GRDB

/// Carries a store's persistent history through a mapping-model migration (docs/HISTORY.md, "Migrations").
///
/// A mapping-model migration writes a new store file object by object, so nothing of the old file stays
/// unless it is copied: the transactions, their interned names, the key reservations and the reader
/// registry are copied as they are (numbers keep counting up, readers keep their marks), and each change is
/// made to name the object the migration made of it:
/// - an object the migration carried over (the association table knows source key → destination object)
///   is named by its new entity and key;
/// - an object it did not carry (deleted before, or filtered out by the mapping) keeps its old key, under
///   the entity of the same name in the new model (number 0, left out when read, when there is none); the
///   new store's keys all start above every key the old store gave (``reserveKeys(inDestinationAt:)``), so
///   an old key never names a new object;
/// - updated property names (`ZCOLUMNS`) and tombstone values follow each property by name; those of a
///   property the new entity lacks are dropped.
/// The new store keeps the old one's UUID, so history tokens stay valid. One transaction by
/// ``PersistentHistoryTransaction/migrationAuthor`` then marks the migration.
///
/// Only stores that already have history tables are touched.
struct MappingMigrationHistory {
    private let sourcePath: String
    /// The highest key the source store ever gave an object, of any entity (its `Z_MAX`es, and the keys
    /// its history names, which may be above them in a store another program wrote).
    private let highestSourceKey: Int64

    /// Reads the source store at `path`; nil when it has no history tables.
    ///
    /// - Throws: the ``StoreError`` opening or reading the file throws.
    static func read(sourceAt path: String) throws -> MappingMigrationHistory? {
        try ReadOnlyStoreFile.read(path) { db -> MappingMigrationHistory? in
            guard try HistoryTables.exist(in: db) else { return nil }
            let reserved = try Int64.fetchOne(db, sql: "SELECT MAX(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
                                              arguments: [HistoryTables.firstReservedEntityNumber]) ?? 0
            let named = try Int64.fetchOne(db, sql: "SELECT MAX(ZENTITYPK) FROM ACHANGE") ?? 0
            return MappingMigrationHistory(sourcePath: path, highestSourceKey: max(reserved, named, 0))
        }
    }

    /// Before any object is made: every entity of the (new, empty) destination store gives keys above
    /// the highest the source ever gave, so the old keys kept by changes of objects the migration did not
    /// carry never name an object of the new store.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when the destination cannot be written.
    func reserveKeys(inDestinationAt path: String) throws {
        try writing(path, step: "reserve keys above the history's") { db in
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = MAX(IFNULL(Z_MAX, 0), ?) WHERE Z_ENT < ?",
                           arguments: [highestSourceKey, HistoryTables.firstReservedEntityNumber])
        }
    }

    /// After every object is made and the destination store closed: copies the history into it, changes
    /// following their objects through `associations`, and records the migration's transaction.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when a table cannot be read or written.
    func carry(into destinationPath: String, plan: MappingPlan, associations: MappingAssociations,
               sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws {
        try writing(destinationPath, step: "carry the persistent history over") { destination in
            try ReadOnlyStoreFile.read(sourcePath) { source in
                // The store's identity too: history tokens (and readers' marks) name it.
                var metadata = try StoreMetadata.read(destination, path: destinationPath)
                metadata.storeUUID = try StoreMetadata.read(source, path: sourcePath).storeUUID
                try destination.execute(sql: "UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?",
                                        arguments: [metadata.uuidString, try metadata.plistData()])
                try HistoryTables.create(in: destination, model: destinationModel)
                try Self.copyRows(of: HistoryTables.stringTable, from: source, to: destination)
                try Self.copyRows(of: HistoryTables.transactionTable, from: source, to: destination)
                try copyChanges(from: source, to: destination, plan: plan, associations: associations,
                                sourceModel: sourceModel, destinationModel: destinationModel)
                if try HistoryReaderRegistry.exists(in: source) {
                    try HistoryReaderRegistry.create(in: destination)
                    try Self.copyRows(of: HistoryReaderRegistry.table, from: source, to: destination)
                }
                // Key reservations as the source had them, never below what the tables now hold.
                for row in try Row.fetchAll(source, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= ?",
                                            arguments: [HistoryTables.firstReservedEntityNumber]) {
                    try destination.execute(sql: "INSERT OR REPLACE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                                            arguments: [row[0] as DatabaseValue, row[1] as DatabaseValue,
                                                        row[2] as DatabaseValue, row[3] as DatabaseValue])
                }
                for (entity, table) in [(HistoryTables.changeEntity, HistoryTables.changeTable),
                                        (HistoryTables.transactionEntity, HistoryTables.transactionTable),
                                        (HistoryTables.stringEntity, HistoryTables.stringTable)] {
                    try destination.execute(sql: """
                        UPDATE Z_PRIMARYKEY SET Z_MAX = MAX(IFNULL(Z_MAX, 0), (SELECT COALESCE(MAX(Z_PK), 0) FROM \(table)))
                        WHERE Z_ENT = ?
                        """, arguments: [entity])
                }
            }
            let versions = "\(sourceModel.versionName ?? "?") → \(destinationModel.versionName ?? "?")"
            _ = try HistoryRecorder.insertTransaction(author: PersistentHistoryTransaction.migrationAuthor,
                                                      contextName: versions, in: destination)
        }
    }

    /// Copies every row of `table` (the columns both stores' tables have) from `source` to `destination`.
    private static func copyRows(of table: String, from source: Database, to destination: Database) throws {
        let wanted = Set(try columns(of: table, in: destination).map { $0.uppercased() })
        let shared = try columns(of: table, in: source).filter { wanted.contains($0.uppercased()) }
        guard !shared.isEmpty else { return }
        let list = shared.map { SQLIdentifier.quoted($0) }.joined(separator: ", ")
        let insert = try destination.makeStatement(
            sql: "INSERT INTO \(table) (\(list)) VALUES (\(Array(repeating: "?", count: shared.count).joined(separator: ", ")))")
        let rows = try Row.fetchCursor(source, sql: "SELECT \(list) FROM \(table)")
        while let row = try rows.next() {
            try insert.execute(arguments: StatementArguments((0..<row.count).map { row[$0] as DatabaseValue }))
        }
    }

    private static func columns(of table: String, in db: Database) throws -> [String] {
        try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { $0["name"] as String }
    }

    private static func tombstoneCount(_ db: Database) throws -> Int {
        let columns = Set(try columns(of: HistoryTables.changeTable, in: db).map { $0.uppercased() })
        var count = 0
        while columns.contains(HistoryTables.tombstoneColumn(count)) { count += 1 }
        return count
    }

    /// Copies the changes, each renamed to the object the migration made of it (see the type's comment).
    private func copyChanges(from source: Database, to destination: Database, plan: MappingPlan,
                             associations: MappingAssociations, sourceModel: ManagedObjectModel,
                             destinationModel: ManagedObjectModel) throws {
        let sourceNumbers = try MigrationHistory.entityNumbers(source)
        let sourceNames = Dictionary(sourceNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let destinationNumbers = try MigrationHistory.entityNumbers(destination)
        let sourceTombstones = try Self.tombstoneCount(source)
        let destinationTombstones = try Self.tombstoneCount(destination)
        let mappingsBySource = Dictionary(grouping: plan.entities.filter { $0.source != nil }, by: { $0.source?.name ?? "" })

        let tombstoneList = (0..<sourceTombstones).map { ", " + HistoryTables.tombstoneColumn($0) }.joined()
        let destinationTombstoneList = (0..<destinationTombstones).map { ", " + HistoryTables.tombstoneColumn($0) }.joined()
        let insert = try destination.makeStatement(sql: """
            INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(destinationTombstoneList))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?\(String(repeating: ", ?", count: destinationTombstones)))
            """)
        let rows = try Row.fetchCursor(source, sql: """
            SELECT Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS\(tombstoneList) FROM ACHANGE
            """)
        while let row = try rows.next() {
            let oldNumber: Int64 = row[4] ?? 0
            let oldKey: Int64 = row[5] ?? 0
            var columns: DatabaseValue = row[7]
            var tombstone = (0..<destinationTombstones).map { index in
                index < sourceTombstones ? row[8 + index] as DatabaseValue : .null
            }
            var number: Int64 = 0
            var key = oldKey
            if let name = sourceNames[oldNumber], let oldEntity = sourceModel.entitiesByName[name] {
                // The object the migration made of it, else the entity of the same name.
                let made = (mappingsBySource[name] ?? []).lazy
                    .compactMap { associations.destinationIDs(mapping: $0.name, sourceKey: oldKey).first }.first
                let newEntity = made?.entity ?? destinationModel.entitiesByName[name]
                if let newEntity, let newNumber = destinationNumbers[newEntity.name] {
                    number = newNumber
                    key = made?.primaryKey ?? oldKey
                    columns = Self.columns(columns, from: oldEntity, to: newEntity)
                    tombstone = Self.tombstone(row, from: oldEntity, to: newEntity, sourceCount: sourceTombstones,
                                               destinationCount: destinationTombstones)
                }
            }
            try insert.execute(arguments: StatementArguments(
                [row[0] as DatabaseValue, row[1] as DatabaseValue, row[2] as DatabaseValue, row[3] as DatabaseValue,
                 number.databaseValue, key.databaseValue, row[6] as DatabaseValue, columns]
                + tombstone))
        }
    }

    /// A `ZCOLUMNS` bitmap of `old`'s properties as the bitmap of `new`'s properties of the same names.
    private static func columns(_ value: DatabaseValue, from old: EntityDescription, to new: EntityDescription) -> DatabaseValue {
        guard let bitmap = Data.fromDatabaseValue(value) else { return value }
        let slots = HistoryRecorder.slots(in: bitmap).compactMap { slot -> Int? in
            guard slot < old.allProperties.count else { return nil }
            let name = old.allProperties[slot].name
            return new.allProperties.firstIndex { $0.name == name }
        }
        return HistoryRecorder.bitmap(slots)?.databaseValue ?? .null
    }

    /// The tombstone columns of a change row of `old`, placed where `new` keeps the same attributes.
    private static func tombstone(_ row: Row, from old: EntityDescription, to new: EntityDescription,
                                  sourceCount: Int, destinationCount: Int) -> [DatabaseValue] {
        let oldPreserved = HistoryTables.preservedAttributes(of: old).map(\.name)
        let newPreserved = HistoryTables.preservedAttributes(of: new).map(\.name)
        return (0..<destinationCount).map { index -> DatabaseValue in
            guard index < newPreserved.count, let oldIndex = oldPreserved.firstIndex(of: newPreserved[index]),
                  oldIndex < sourceCount else { return .null }
            return row[8 + oldIndex] as DatabaseValue
        }
    }

    /// Runs `body` in one write transaction on the store file at `path`, turning SQLite's errors into
    /// ``MigrationError/stepFailed(path:step:reason:)``.
    private func writing(_ path: String, step: String, _ body: (Database) throws -> Void) throws {
        do {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            try queue.write(body)
        } catch let error as DatabaseError {
            throw MigrationError.stepFailed(path: path, step: step, reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
    }
}
