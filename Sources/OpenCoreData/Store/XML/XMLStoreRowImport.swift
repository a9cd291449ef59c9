import Foundation

/// An XML store's checked objects as rows of the store's tables: each object a row of its root entity's
/// table (primary keys counted from 1 per table, in file order), to-one relationships in their foreign-key
/// columns, to-many ones in the destination's foreign key or in join rows, ordered ones with their positions.
struct XMLStoreRowImport {
    private struct Placed {
        var table: Int
        var primaryKey: Int64
    }

    private let schema: StoreSchema
    private var rows: [[StoreValue]] = []
    private var placed: [Placed] = []
    /// Join rows by (table, the two key columns and keys, sorted): both sides of a many-to-many relationship
    /// name the same row. The value holds every column to write.
    private var joinRows: [[String]: (table: String, values: [String: StoreValue])] = [:]
    private(set) var idsByTable: [String: [Int64: String]] = [:]
    /// The root entity's number of each table that receives rows (its key counter in `Z_PRIMARYKEY`).
    private var rootNumberByTable: [Int: Int] = [:]

    /// - Throws: ``XMLStoreError/invalidObject(path:objectID:key:reason:)`` when the file's two sides of a
    ///   relationship disagree (an object listed by one parent, its to-one naming another).
    init(contents: XMLStoreContents, model: ManagedObjectModel, path: String) throws {
        schema = model.schema
        let tableIndex = Dictionary(uniqueKeysWithValues: schema.tables.enumerated().map { ($1.name, $0) })
        var nextKey: [Int: Int64] = [:]
        for object in contents.objects {
            let mapping = schema.mapping(for: object.entity)
            // The schema lays out a table for every root entity: a missing one is a mistake in this library.
            guard let table = tableIndex[mapping.tableName] else { preconditionFailure("no table \(mapping.tableName)") }
            let key = (nextKey[table] ?? 0) + 1
            nextKey[table] = key
            rootNumberByTable[table] = object.entity.rootEntity.entityNumber
            var row = [StoreValue](repeating: .null, count: schema.tables[table].columns.count)
            row[0] = key.storeValue
            row[1] = object.entity.entityNumber.storeValue
            row[2] = 1.storeValue
            rows.append(row)
            placed.append(Placed(table: table, primaryKey: key))
            idsByTable[mapping.tableName, default: [:]][key] = object.fileID
        }
        for (position, object) in contents.objects.enumerated() {
            func invalid(_ key: String, _ reason: String) -> XMLStoreError {
                .invalidObject(path: path, objectID: object.fileID, key: key, reason: reason)
            }
            let mapping = schema.mapping(for: object.entity)
            for (slot, value) in object.values {
                if case .attribute(_, let column) = mapping.storage[slot] { rows[position][column] = value }
            }
            for (slot, targets) in object.targets {
                let property = object.entity.allProperties[slot]
                switch mapping.storage[slot] {
                case .toOne(_, let column, _, let entityColumn):
                    guard let target = targets.first else { continue }
                    try set(column, of: position, to: placed[target].primaryKey.storeValue) { invalid(property.name, $0) }
                    if let entityColumn {
                        rows[position][entityColumn] = contents.objects[target].entity.entityNumber.storeValue
                    }
                case .toManyByForeignKey(let table, let column, let orderColumn):
                    guard let tableIndex = tableIndex[table],
                          let columnIndex = schema.tables[tableIndex].columnIndexByName[column] else { continue }
                    let orderIndex = orderColumn.flatMap { schema.tables[tableIndex].columnIndexByName[$0] }
                    // The inverse to-one's entity column, when the source entity has sub-entities.
                    var inverseEntityColumn: Int?
                    if let inverse = (property as? RelationshipDescription)?.storedInverse,
                       let destination = inverse.entity, let inverseSlot = destination.slotByName[inverse.name],
                       case .toOne(_, _, _, let entityColumn) = schema.mapping(for: destination).storage[inverseSlot] {
                        inverseEntityColumn = entityColumn
                    }
                    for (order, target) in targets.enumerated() {
                        try set(columnIndex, of: target, to: placed[position].primaryKey.storeValue) {
                            invalid(property.name, "\($0) (it lists '\(contents.objects[target].fileID)')")
                        }
                        if let inverseEntityColumn { rows[target][inverseEntityColumn] = object.entity.entityNumber.storeValue }
                        if let orderIndex { rows[target][orderIndex] = Int64((order + 1) * 1024).storeValue }
                    }
                case .toManyByJoinTable(let join):
                    for (order, target) in targets.enumerated() {
                        let source = placed[position].primaryKey, destination = placed[target].primaryKey
                        let pairs = [[join.sourceColumn, "\(source)"], [join.destinationColumn, "\(destination)"]].sorted { $0[0] < $1[0] }
                        let key = [join.name] + pairs.flatMap { $0 }
                        var entry = joinRows[key] ?? (join.name, [join.sourceColumn: source.storeValue,
                                                                  join.destinationColumn: destination.storeValue])
                        if let orderColumn = join.orderColumn { entry.values[orderColumn] = Int64((order + 1) * 1024).storeValue }
                        joinRows[key] = entry
                    }
                case .attribute, .transient:
                    continue
                }
            }
        }
    }

    /// Sets a foreign key, refusing a second, different value for it.
    private mutating func set(_ column: Int, of position: Int, to value: StoreValue,
                              _ failure: (String) -> XMLStoreError) throws {
        let current = rows[position][column]
        guard current.isNull || current == value else {
            throw failure("the two sides of the relationship disagree")
        }
        rows[position][column] = value
    }

    /// Inserts every row and join row, and moves each table's key counter past its rows.
    ///
    /// - Throws: what the session throws when the database refuses a row.
    func insert(into session: some SQLSession) throws {
        for (index, table) in schema.tables.enumerated() {
            let positions = placed.indices.filter { placed[$0].table == index }
            guard !positions.isEmpty else { continue }
            let columns = table.columns.map { SQLIdentifier.quoted($0.name) }.joined(separator: ", ")
            let marks = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
            let statement = try session.prepareWrite("INSERT INTO \(SQLIdentifier.quoted(table.name)) (\(columns)) VALUES (\(marks))")
            for position in positions {
                for (column, value) in rows[position].enumerated() { try statement.bind(value, at: Int32(column + 1)) }
                try statement.step()
            }
            let maximum = positions.map { placed[$0].primaryKey }.max() ?? 0
            try session.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?",
                                [maximum.storeValue, (rootNumberByTable[index] ?? 0).storeValue])
        }
        for (_, entry) in joinRows.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let names = entry.values.keys.sorted()
            let columns = names.map(SQLIdentifier.quoted).joined(separator: ", ")
            let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
            try session.execute("INSERT INTO \(SQLIdentifier.quoted(entry.table)) (\(columns)) VALUES (\(marks))",
                                names.map { entry.values[$0] ?? .null })
        }
    }
}
