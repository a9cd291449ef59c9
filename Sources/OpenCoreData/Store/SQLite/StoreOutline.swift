import Foundation
import GRDB

/// What a store file in Core Data's layout holds, read from its own tables without a model: the entities
/// `Z_PRIMARYKEY` names, their rows and the columns of their tables, typed by the values they hold.
///
/// A model gives attribute names, types and relationships; without one this is what can be said. The file
/// is read through a read-only connection and never changed. Names from the file reach SQL only quoted,
/// and only names that the file's own schema lists.
///
/// ```swift
/// for entity in try StoreOutline(storeAt: url).entities {
///     print(entity.name, entity.rowCount ?? 0, entity.columns.map(\.name))
/// }
/// ```
public struct StoreOutline: Sendable {
    /// A column of an entity's table and the kinds of value the entity's rows hold in it.
    public struct Column: Sendable, Equatable {
        /// The column's name in the store (`ZTITLE`).
        public let name: String
        /// The SQLite storage classes the entity's rows hold in the column, in order: "integer", "real",
        /// "text", "blob". Empty when every row holds NULL there (or there are no rows).
        public let kinds: [String]
    }

    /// One entity of the store.
    public struct Entity: Sendable {
        /// The name `Z_PRIMARYKEY` gives it.
        public let name: String
        /// Its entity number (`Z_ENT`).
        public let number: Int
        /// Its parent entity's name, when `Z_SUPER` names one.
        public let superentityName: String?
        /// The table holding its rows (its root entity's), nil when the store has no such table.
        public let tableName: String?
        /// Its rows (those whose `Z_ENT` is its number), nil without a table.
        public let rowCount: Int?
        /// The table's columns after `Z_PK`, `Z_ENT` and `Z_OPT`, with what this entity's rows hold in them.
        public let columns: [Column]
    }

    /// The entities in entity-number order.
    public let entities: [Entity]

    /// Reads the outline of the store at `url`.
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file is not SQLite or has no
    ///   `Z_PRIMARYKEY`; ``StoreError/corrupt(path:reason:)`` when a `Z_PRIMARYKEY` row lacks its number or
    ///   name; ``StoreError/sqlite(code:message:sql:)`` when a read fails.
    public init(storeAt url: URL) throws {
        let path = url.path
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let reader = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? reader.close() }
            entities = try reader.read { db in try Self.entities(db, path: path) }
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
    }

    private static func entities(_ db: Database, path: String) throws -> [Entity] {
        guard try db.tableExists("Z_PRIMARYKEY") else {
            throw StoreError.notAStore(path: path, reason: "it has no Z_PRIMARYKEY table")
        }
        var named: [(number: Int, name: String, parent: Int)] = []
        for (position, row) in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < ? ORDER BY Z_ENT",
                                                  arguments: [HistoryTables.firstReservedEntityNumber]).enumerated() {
            guard let number = row[0] as Int?, let name = row[1] as String? else {
                throw StoreError.corrupt(path: path, reason: "Z_PRIMARYKEY row \(position + 1) has no entity number or name")
            }
            named.append((number, name, row[2] as Int? ?? 0))
        }
        let byNumber = Dictionary(named.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        // The store's own table names, by their uppercased form (SQLite ignores case in names).
        let tables = Dictionary(try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            .map { ($0.uppercased(), $0) }, uniquingKeysWith: { first, _ in first })
        return try named.map { entity in
            // The root: follow Z_SUPER, at most once per entity, so a cycle in a damaged file ends.
            var root = entity
            for _ in named.indices {
                guard let parent = byNumber[root.parent], parent.number != root.number else { break }
                root = parent
            }
            let parentName = byNumber[entity.parent]?.name
            guard let table = tables[StoreSchema.tableName(forEntityNamed: root.name).uppercased()] else {
                return Entity(name: entity.name, number: entity.number, superentityName: parentName, tableName: nil,
                              rowCount: nil, columns: [])
            }
            let quotedTable = SQLIdentifier.quoted(table)
            let names = try Row.fetchAll(db, sql: "PRAGMA table_info(\(quotedTable))").map { $0["name"] as String }
            let hasEntityColumn = names.contains { $0.uppercased() == "Z_ENT" }
            let filter = hasEntityColumn ? " WHERE Z_ENT = ?" : ""
            let arguments: StatementArguments = hasEntityColumn ? [entity.number] : []
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quotedTable)\(filter)", arguments: arguments) ?? 0
            let order = ["integer", "real", "text", "blob"]
            let columns = try names.filter { !["Z_PK", "Z_ENT", "Z_OPT"].contains($0.uppercased()) }.map { name in
                let kinds = try String.fetchAll(db, sql: "SELECT DISTINCT typeof(\(SQLIdentifier.quoted(name))) FROM \(quotedTable)\(filter)",
                                                arguments: arguments)
                return Column(name: name, kinds: order.filter(kinds.contains))
            }
            return Entity(name: entity.name, number: entity.number, superentityName: parentName, tableName: table,
                          rowCount: count, columns: columns)
        }
    }
}
