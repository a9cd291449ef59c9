import Foundation

/// Carries a store's persistent history through a mapping-model migration (docs/HISTORY.md, "Migrations").
///
/// A mapping-model migration writes a new store object by object, so nothing of the old one stays
/// unless it is copied: the transactions, their interned names, the key reservations and the reader
/// registry are copied as they are (numbers keep counting up, readers keep their marks), and each change is
/// made to name the object the migration made of it:
/// - an object the migration carried over (the association table knows source key → destination object)
///   is named by its new entity and key;
/// - an object it did not carry (deleted before, or filtered out by the mapping) keeps its old key, under
///   the entity of the same name in the new model (number 0, left out when read, when there is none); the
///   new store's keys all start above every key the old store gave (``reserveKeys(in:)``), so
///   an old key never names a new object;
/// - updated property names (`ZCOLUMNS`) and tombstone values follow each property by name; those of a
///   property the new entity lacks are dropped.
/// The new store keeps the old one's UUID, so history tokens stay valid. One transaction by
/// ``PersistentHistoryTransaction/migrationAuthor`` then marks the migration.
///
/// The statements are spelled so that SQLite and PostgreSQL read them alike (``Store``); both sides are the
/// same kind of store, so tombstone cells are copied as they are. Only stores that already have history
/// tables are touched.
package struct MappingMigrationHistory {
    /// One store's side of the copy: its statements, and the few things each kind of store does its own way.
    package struct Store {
        /// The store, for errors (a file's path, a server's redacted URL).
        var name: String
        var connection: any SQLSession
        /// A table's column names, in upper case.
        var columns: (_ table: String) throws -> [String]
        /// Whether the history reader registry is there.
        var hasReaderRegistry: () throws -> Bool
        /// Creates the history tables (with the tombstone columns the model needs), and the reader registry
        /// when asked, where missing.
        var createTables: (_ model: ManagedObjectModel, _ readerRegistry: Bool) throws -> Void
        /// Records a transaction by ``PersistentHistoryTransaction/migrationAuthor`` with this context name;
        /// its number.
        var recordMigration: (_ contextName: String) throws -> Int64

        /// A store side made of its statements (see each property).
        package init(name: String, connection: any SQLSession, columns: @escaping (_ table: String) throws -> [String],
                     hasReaderRegistry: @escaping () throws -> Bool,
                     createTables: @escaping (_ model: ManagedObjectModel, _ readerRegistry: Bool) throws -> Void,
                     recordMigration: @escaping (_ contextName: String) throws -> Int64) {
            self.name = name
            self.connection = connection
            self.columns = columns
            self.hasReaderRegistry = hasReaderRegistry
            self.createTables = createTables
            self.recordMigration = recordMigration
        }

    }

    /// The highest key the source store ever gave an object, of any entity (its `Z_MAX`es, and the keys
    /// its history names, which may be above them in a store another program wrote).
    private let highestSourceKey: Int64
    /// The source store's ``Store/name`` (a file's path: where ``carry(into:run:)`` reads it).
    let sourceName: String
    /// Rows a copy reads at a time, and values one insert statement binds at most (under SQLite's oldest limit).
    private static let pageSize = 500
    private static let valuesPerStatement = 900

    /// Reads the source store `source`, which has history tables.
    ///
    /// - Throws: what `source`'s statements throw.
    package static func read(_ source: Store) throws -> MappingMigrationHistory {
        func highest(_ sql: String, _ arguments: [StoreValue]) throws -> Int64 {
            try source.connection.rows(sql, arguments).first?.first.flatMap { Int64.fromStoreValue($0) } ?? 0
        }
        let reserved = try highest("SELECT MAX(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_ENT < ?",
                                   [Int64(HistoryTables.firstReservedEntityNumber).storeValue])
        let named = try highest("SELECT MAX(ZENTITYPK) FROM ACHANGE", [])
        return MappingMigrationHistory(highestSourceKey: max(reserved, named, 0), sourceName: source.name)
    }

    /// Before any object is made: every entity of the (new, empty) destination store gives keys above
    /// the highest the source ever gave, so the old keys kept by changes of objects the migration did not
    /// carry never name an object of the new store.
    ///
    /// - Throws: what `destination`'s statements throw.
    package func reserveKeys(in destination: Store) throws {
        try destination.connection.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = CASE WHEN COALESCE(Z_MAX, 0) < ? THEN ? ELSE Z_MAX END WHERE Z_ENT < ?",
                               [highestSourceKey.storeValue, highestSourceKey.storeValue,
                                Int64(HistoryTables.firstReservedEntityNumber).storeValue])
    }

    /// Copies the history of `source` into `destination` (whose objects `run` made), inside the caller's
    /// transaction on `destination`, and records the migration's transaction; its number.
    ///
    /// - Throws: what either store's statements throw; ``StoreError`` for a `Z_METADATA` that holds no
    ///   store's metadata.
    @discardableResult
    package func carry(from source: Store, into destination: Store, run: MappingRun) throws -> Int64 {
        // The store's identity too: history tokens (and readers' marks) name it.
        var metadata = try Self.metadata(of: destination)
        metadata.storeUUID = try Self.metadata(of: source).storeUUID
        try destination.connection.execute("UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?",
                                           [metadata.uuidString.storeValue, try metadata.plistData().storeValue])
        let readers = try source.hasReaderRegistry()
        try destination.createTables(run.destinationModel, readers)
        try Self.copyRows(of: HistoryTables.stringTable, orderedBy: "Z_PK", from: source, to: destination)
        try Self.copyRows(of: HistoryTables.transactionTable, orderedBy: "Z_PK", from: source, to: destination)
        try copyChanges(from: source, to: destination, run: run)
        if readers { try Self.copyRows(of: HistoryReaderRegistry.table, orderedBy: "Z_NAME", from: source, to: destination) }
        // Key reservations as the source had them, never below what the tables now hold.
        let reserved = Int64(HistoryTables.firstReservedEntityNumber).storeValue
        for row in try source.connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= ?", [reserved]) {
            try destination.connection.execute("DELETE FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [row[0]])
            try destination.connection.execute("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                                               Array(row.prefix(4)))
        }
        for (entity, table) in [(HistoryTables.changeEntity, HistoryTables.changeTable),
                                (HistoryTables.transactionEntity, HistoryTables.transactionTable),
                                (HistoryTables.stringEntity, HistoryTables.stringTable)] {
            let held = try destination.connection.rows("SELECT COALESCE(MAX(Z_PK), 0) FROM \(table)", []).first?.first
                .flatMap { Int64.fromStoreValue($0) } ?? 0
            try destination.connection.execute(
                "UPDATE Z_PRIMARYKEY SET Z_MAX = CASE WHEN COALESCE(Z_MAX, 0) < ? THEN ? ELSE Z_MAX END WHERE Z_ENT = ?",
                [held.storeValue, held.storeValue, Int64(entity).storeValue])
        }
        return try destination.recordMigration(run.versions)
    }

    private static func metadata(of store: Store) throws -> StoreMetadata {
        guard let row = try store.connection.rows("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1", []).first,
              let plist = Data.fromStoreValue(row[1]) else {
            throw StoreError.corrupt(path: store.name, reason: "Z_METADATA has no row with a property list")
        }
        return try StoreMetadata(plistData: plist, rowUUID: String.fromStoreValue(row[0]), storePath: store.name)
    }

    /// A name SQL reads unquoted alike on both stores (PostgreSQL folds it, as it folded the layout's).
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") } && !(name.first?.isNumber ?? true)
    }

    /// Reads `table` of `store` a page at a time in `key` order (`key` among `columns`), handing each page to `body`.
    private static func forEachPage(of table: String, columns: [String], orderedBy key: String, in store: Store,
                                    _ body: ([[StoreValue]]) throws -> Void) throws {
        guard let keyIndex = columns.firstIndex(of: key) else { return }
        let list = columns.joined(separator: ", ")
        var after: StoreValue?
        while true {
            let rows = try store.connection.rows(
                "SELECT \(list) FROM \(table)\(after == nil ? "" : " WHERE \(key) > ?") ORDER BY \(key) LIMIT \(pageSize)",
                after.map { [$0] } ?? [])
            try body(rows)
            guard rows.count == pageSize, let last = rows.last else { return }
            after = last[keyIndex]
        }
    }

    /// Inserts `rows` (values of `columns`) into `table`, many rows a statement.
    private static func insert(_ rows: [[StoreValue]], into table: String, columns: [String], in store: Store) throws {
        let perStatement = max(1, valuesPerStatement / max(1, columns.count))
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            let part = rows[start..<min(start + perStatement, rows.count)]
            try store.connection.execute(
                "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES \(Array(repeating: row, count: part.count).joined(separator: ", "))",
                part.flatMap { $0 })
        }
    }

    /// Copies every row of `table` (the columns both stores' tables have) from `source` to `destination`.
    private static func copyRows(of table: String, orderedBy key: String, from source: Store, to destination: Store) throws {
        let wanted = Set(try destination.columns(table))
        let shared = try source.columns(table).filter { wanted.contains($0) && isPlainName($0) }
        try forEachPage(of: table, columns: shared, orderedBy: key, in: source) { rows in
            try insert(rows, into: table, columns: shared, in: destination)
        }
    }

    private static func tombstoneCount(_ store: Store) throws -> Int {
        let columns = Set(try store.columns(HistoryTables.changeTable))
        var count = 0
        while columns.contains(HistoryTables.tombstoneColumn(count)) { count += 1 }
        return count
    }

    /// Copies the changes, each renamed to the object the migration made of it (see the type's comment).
    private func copyChanges(from source: Store, to destination: Store, run: MappingRun) throws {
        let sourceNumbers = try MigrationHistory.entityNumbers(source.connection)
        let sourceNames = Dictionary(sourceNumbers.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let destinationNumbers = try MigrationHistory.entityNumbers(destination.connection)
        let sourceTombstones = try Self.tombstoneCount(source)
        let destinationTombstones = try Self.tombstoneCount(destination)
        let mappingsBySource = Dictionary(grouping: run.plan.entities.filter { $0.source != nil }, by: { $0.source?.name ?? "" })
        let fixed = ["Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]
        let sourceColumns = fixed + (0..<sourceTombstones).map(HistoryTables.tombstoneColumn)
        let destinationColumns = fixed + (0..<destinationTombstones).map(HistoryTables.tombstoneColumn)
        try Self.forEachPage(of: HistoryTables.changeTable, columns: sourceColumns, orderedBy: "Z_PK", in: source) { rows in
            let copied = rows.map { row -> [StoreValue] in
                let oldNumber = Int64.fromStoreValue(row[4]) ?? 0
                let oldKey = Int64.fromStoreValue(row[5]) ?? 0
                var columns = row[7]
                var tombstone = (0..<destinationTombstones).map { index in index < sourceTombstones ? row[8 + index] : .null }
                var number: Int64 = 0
                var key = oldKey
                if let name = sourceNames[oldNumber], let oldEntity = run.sourceModel.entitiesByName[name] {
                    // The object the migration made of it, else the entity of the same name.
                    let made = (mappingsBySource[name] ?? []).lazy
                        .compactMap { run.associations.destinationIDs(mapping: $0.name, sourceKey: oldKey).first }.first
                    let newEntity = made?.entity ?? run.destinationModel.entitiesByName[name]
                    if let newEntity, let newNumber = destinationNumbers[newEntity.name] {
                        number = newNumber
                        key = made?.primaryKey ?? oldKey
                        columns = Self.columns(columns, from: oldEntity, to: newEntity)
                        tombstone = Self.tombstone(row, from: oldEntity, to: newEntity, sourceCount: sourceTombstones,
                                                   destinationCount: destinationTombstones)
                    }
                }
                return [row[0], row[1], row[2], row[3], number.storeValue, key.storeValue, row[6], columns] + tombstone
            }
            try Self.insert(copied, into: HistoryTables.changeTable, columns: destinationColumns, in: destination)
        }
    }

    /// A `ZCOLUMNS` bitmap of `old`'s properties as the bitmap of `new`'s properties of the same names.
    private static func columns(_ value: StoreValue, from old: EntityDescription, to new: EntityDescription) -> StoreValue {
        guard let bitmap = Data.fromStoreValue(value) else { return value }
        let slots = HistoryEntry.slots(in: bitmap).compactMap { slot -> Int? in
            guard slot < old.allProperties.count else { return nil }
            let name = old.allProperties[slot].name
            return new.allProperties.firstIndex { $0.name == name }
        }
        return HistoryEntry.bitmap(slots)?.storeValue ?? .null
    }

    /// The tombstone columns of a change row of `old`, placed where `new` keeps the same attributes.
    private static func tombstone(_ row: [StoreValue], from old: EntityDescription, to new: EntityDescription,
                                  sourceCount: Int, destinationCount: Int) -> [StoreValue] {
        let oldPreserved = HistoryTables.preservedAttributes(of: old).map(\.name)
        let newPreserved = HistoryTables.preservedAttributes(of: new).map(\.name)
        return (0..<destinationCount).map { index -> StoreValue in
            guard index < newPreserved.count, let oldIndex = oldPreserved.firstIndex(of: newPreserved[index]),
                  oldIndex < sourceCount else { return .null }
            return row[8 + oldIndex]
        }
    }
}
