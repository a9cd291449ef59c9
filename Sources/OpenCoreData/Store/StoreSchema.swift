import Foundation

/// The SQLite layout a model implies, in Core Data's shape (docs/STORE-LAYOUT.md).
///
/// Computed once per model. Every identifier that reaches SQL comes from here, made from names the model
/// checked (``SQLIdentifier``), never pasted from input; the statements quote them too.
package struct StoreSchema: Sendable {
    /// Tables Core Data keeps for itself, whatever the model.
    static let coreDataTables = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

    /// The table of a root entity named `name`: "Z" and the name in capitals, as Core Data names it.
    static func tableName(forEntityNamed name: String) -> String { "Z" + name.uppercased() }

    /// A table: one per root entity, one per many-to-many relationship.
    package struct Table: Sendable {
        package var name: String
        /// Columns in order; entity tables start with Z_PK, Z_ENT, Z_OPT.
        package var columns: [Column]
        var columnIndexByName: [String: Int] = [:]
    }

    package struct Column: Sendable {
        package var name: String
        package var sqlType: String
    }

    /// The join table of a many-to-many relationship.
    package struct JoinTable: Sendable {
        package var name: String
        /// Holds the primary key of the relationship's source object.
        package var sourceColumn: String
        /// Holds the primary key of the relationship's destination object.
        package var destinationColumn: String
        /// Holds the position of the destination in an ordered relationship.
        var orderColumn: String?
        /// Holds the position of the source in the inverse relationship, when that one is ordered (written
        /// through the inverse; listed here so the table is created with it).
        var inverseOrderColumn: String? = nil

        /// Every column, in creation order.
        package var columns: [String] { [sourceColumn, destinationColumn] + [orderColumn, inverseOrderColumn].compactMap { $0 } }
    }

    /// Where one property's value lives.
    package enum PropertyStorage: Sendable {
        /// An attribute in the entity's own table.
        case attribute(column: String, columnIndex: Int)
        /// A to-one relationship: the destination's Z_PK in this entity's table, plus its entity number
        /// when the destination has sub-entities.
        case toOne(column: String, columnIndex: Int, entityColumn: String?, entityColumnIndex: Int?)
        /// A to-many relationship whose destination rows point back with a foreign key
        /// (the inverse to-one's column, or a hidden column when there is no inverse).
        case toManyByForeignKey(destinationTable: String, column: String, orderColumn: String?)
        /// A many-to-many relationship through a join table.
        case toManyByJoinTable(JoinTable)
        /// Not stored.
        case transient
    }

    /// The layout of one entity.
    struct EntityMapping: Sendable {
        var entityNumber: Int
        var tableName: String
        /// `storage[slot]` for each of the entity's properties (`EntityDescription.allProperties`).
        var storage: [PropertyStorage]
        /// Every entity number this entity's fetches include (itself and its sub-entities).
        var entityNumbers: [Int]
        /// Whether the table also holds rows of other entities (so fetches filter on Z_ENT).
        var sharesTable: Bool
    }

    package private(set) var tables: [Table] = []
    package private(set) var joinTables: [JoinTable] = []
    /// In entity-number order (`model.entitiesByNumber`).
    private(set) var entities: [EntityMapping] = []
    /// `positionByNumber[n]`: where the entity numbered `n` is in ``entities`` (numbers may have gaps).
    private var positionByNumber: [Int] = []
    /// Foreign-key and model indexes: (index name, table, columns, unique, partial WHERE clause).
    package private(set) var indexes: [(name: String, table: String, columns: [String], unique: Bool, whereClause: String?)] = []

    /// Lays out `model`'s tables, columns and indexes.
    ///
    /// - Throws: ``ModelError/conflictingNames(first:second:storeName:)`` when two parts of the model would
    ///   get one table, join table or index name (SQLite ignores case in names), or a column twice in one
    ///   join table, or a name Core Data keeps for its own tables.
    init(model: ManagedObjectModel) throws {
        try self.init(model: model, entityColumnsNamedBySource: false)
    }

    /// `entityColumnsNamedBySource` lays out a to-one's entity-number column as this library did before it
    /// followed Core Data (``EarlierEntityColumnNames``): numbered after the relationship's own entity.
    init(model: ManagedObjectModel, entityColumnsNamedBySource: Bool) throws {
        // Tables and indexes share one namespace in SQLite, compared without case; the names made here are
        // in capitals already, so comparing uppercased names finds every clash.
        var ownerByName: [String: String] = [:]
        for table in Self.coreDataTables { ownerByName[table] = "Core Data's table \(table)" }
        func claim(_ name: String, for owner: String) throws {
            let key = name.uppercased()
            if let other = ownerByName[key] {
                throw ModelError.conflictingNames(first: other, second: owner, storeName: name)
            }
            ownerByName[key] = owner
        }
        func describe(_ relationship: RelationshipDescription) -> String {
            "relationship '\(relationship.entity?.name ?? "?").\(relationship.name)'"
        }
        var tableIndexByRoot: [ObjectIdentifier: Int] = [:]
        // One table per root entity, columns for every entity of its tree in entity-number order.
        var columnNameByProperty: [ObjectIdentifier: String] = [:]
        var entityColumnByProperty: [ObjectIdentifier: String] = [:]

        for entity in model.entitiesByNumber where entity.superentity == nil {
            tableIndexByRoot[ObjectIdentifier(entity)] = tables.count
            let name = Self.tableName(forEntityNamed: entity.name)
            try claim(name, for: "entity '\(entity.name)'")
            tables.append(Table(name: name, columns: [
                Column(name: "Z_PK", sqlType: "INTEGER PRIMARY KEY"),
                Column(name: "Z_ENT", sqlType: "INTEGER"),
                Column(name: "Z_OPT", sqlType: "INTEGER"),
            ]))
        }
        func tableIndex(of entity: EntityDescription) -> Int { tableIndexByRoot[ObjectIdentifier(entity.rootEntity)]! }
        // The names each table has taken, kept as columns are added: rebuilding the set for every new column
        // made the schema quadratic in the number of columns of a table (one per property of its whole tree).
        var takenNames = tables.map { Set($0.columns.map(\.name)) }
        func uniqueColumnName(_ base: String, in table: Int) -> String {
            var name = base
            var suffix = 0
            while takenNames[table].contains(name) {
                suffix += 1
                name = base + String(suffix)
            }
            takenNames[table].insert(name)
            return name
        }

        // Declared attributes and to-one foreign keys.
        for entity in model.entitiesByNumber {
            let table = tableIndex(of: entity)
            for property in entity.properties where !property.isTransient {
                if let composite = property as? CompositeAttributeDescription {
                    // No column for the composite itself; one per element, "Z", the attribute and the
                    // element's path in capitals, joined by underscores: ZMAGNITUDE_RICHTER.
                    for element in composite.storedElements {
                        let base = "Z" + element.name.uppercased().replacingOccurrences(of: ".", with: "_")
                        let name = uniqueColumnName(base, in: table)
                        tables[table].columns.append(Column(name: name, sqlType: element.attributeType.sqlColumnType))
                        columnNameByProperty[ObjectIdentifier(element)] = name
                    }
                } else if let attribute = property as? AttributeDescription {
                    let name = uniqueColumnName("Z" + attribute.name.uppercased(), in: table)
                    tables[table].columns.append(Column(name: name, sqlType: attribute.attributeType.sqlColumnType))
                    columnNameByProperty[ObjectIdentifier(property)] = name
                } else if let relationship = property as? RelationshipDescription, !relationship.isToMany {
                    let name = uniqueColumnName("Z" + relationship.name.uppercased(), in: table)
                    if !relationship.destinationEntity.subentities.isEmpty {
                        // Core Data numbers it after the destination entity (ZPAGE.Z1_BOOK for Page.book, Book
                        // being entity 1 and Page 4, in alemar11's SampleModel2 stores).
                        let number = entityColumnsNamedBySource ? entity.entityNumber : relationship.destinationEntity.entityNumber
                        let entityColumn = uniqueColumnName("Z\(number)_" + relationship.name.uppercased(), in: table)
                        tables[table].columns.append(Column(name: entityColumn, sqlType: "INTEGER"))
                        entityColumnByProperty[ObjectIdentifier(property)] = entityColumn
                    }
                    tables[table].columns.append(Column(name: name, sqlType: "INTEGER"))
                    columnNameByProperty[ObjectIdentifier(property)] = name
                }
            }
        }
        // To-many relationships: hidden foreign keys, order columns, join tables.
        var storageByProperty: [ObjectIdentifier: PropertyStorage] = [:]
        for entity in model.entitiesByNumber {
            for case let relationship as RelationshipDescription in entity.properties
            where relationship.isToMany && !relationship.isTransient {
                let destinationTable = tableIndex(of: relationship.destinationEntity)
                if let inverse = relationship.storedInverse, inverse.isToMany {
                    // Many-to-many: the side with the lower entity number names the table; between two
                    // relationships of one entity, the one whose name sorts later, as Core Data named
                    // duckduckgo's Z_1FAVORITES (favorites, inverse favoriteFolders) (docs/STORE-LAYOUT.md).
                    let source = entity.entityNumber, destination = inverse.entity!.entityNumber
                    let ownsTable = source == destination ? relationship.name >= inverse.name : source < destination
                    let (owner, other) = ownsTable ? (relationship, inverse) : (inverse, relationship)
                    let ownerNumber = owner.entity!.entityNumber
                    let otherNumber = other.entity!.entityNumber
                    var join = JoinTable(
                        name: "Z_\(ownerNumber)\(owner.name.uppercased())",
                        sourceColumn: "Z_\(ownerNumber)\(other.name.uppercased())",
                        destinationColumn: "Z_\(otherNumber)\(owner.name.uppercased())",
                        orderColumn: owner.isOrdered ? "Z_FOK_\(otherNumber)\(owner.name.uppercased())" : nil,
                        inverseOrderColumn: other.isOrdered ? "Z_FOK_\(ownerNumber)\(other.name.uppercased())" : nil)
                    if owner === other {
                        // Its own inverse (Person.friends): one relationship, so each link is a row from either
                        // side, ordered by its own row; the second key column gets a `1` (inferred,
                        // docs/STORE-LAYOUT.md).
                        join.destinationColumn += "1"
                        join.inverseOrderColumn = nil
                    }
                    if ownsTable {
                        try claim(join.name, for: describe(owner))
                        if Set(join.columns).count != join.columns.count {
                            throw ModelError.conflictingNames(first: describe(owner), second: "its inverse \(describe(other))",
                                                              storeName: join.sourceColumn)
                        }
                        joinTables.append(join)
                        storageByProperty[ObjectIdentifier(relationship)] = .toManyByJoinTable(join)
                    } else {
                        storageByProperty[ObjectIdentifier(relationship)] = .toManyByJoinTable(JoinTable(
                            name: join.name, sourceColumn: join.destinationColumn,
                            destinationColumn: join.sourceColumn, orderColumn: join.inverseOrderColumn,
                            inverseOrderColumn: join.orderColumn))
                    }
                } else {
                    let column: String
                    if let inverse = relationship.storedInverse {
                        column = columnNameByProperty[ObjectIdentifier(inverse)]!
                    } else {
                        column = uniqueColumnName("Z\(entity.entityNumber)" + relationship.name.uppercased(),
                                                  in: destinationTable)
                        tables[destinationTable].columns.append(Column(name: column, sqlType: "INTEGER"))
                    }
                    var orderColumn: String?
                    if relationship.isOrdered {
                        let base = "Z_FOK_" + (relationship.storedInverse.map { $0.name.uppercased() }
                            ?? "\(entity.entityNumber)\(relationship.name.uppercased())")
                        let name = uniqueColumnName(base, in: destinationTable)
                        tables[destinationTable].columns.append(Column(name: name, sqlType: "INTEGER"))
                        orderColumn = name
                    }
                    storageByProperty[ObjectIdentifier(relationship)] = .toManyByForeignKey(
                        destinationTable: tables[destinationTable].name, column: column, orderColumn: orderColumn)
                    let destinationName = tables[destinationTable].name
                    if !indexes.contains(where: { $0.table == destinationName && $0.columns == [column] }) {
                        let name = "\(destinationName)_\(column)_INDEX"
                        try claim(name, for: "the index of \(describe(relationship))")
                        indexes.append((name: name, table: destinationName, columns: [column], unique: false,
                                        whereClause: nil))
                    }
                }
            }
        }
        for index in tables.indices {
            for (position, column) in tables[index].columns.enumerated() {
                tables[index].columnIndexByName[column.name] = position
            }
        }
        // Per-entity storage.
        for entity in model.entitiesByNumber {
            let table = tables[tableIndex(of: entity)]
            var storage: [PropertyStorage] = []
            for property in entity.allProperties {
                let key = ObjectIdentifier(property)
                if property.isTransient || property is CompositeAttributeDescription {
                    // A composite is read and written through its elements' slots (CompositeValue).
                    storage.append(.transient)
                } else if property is AttributeDescription {
                    let column = columnNameByProperty[key]!
                    storage.append(.attribute(column: column, columnIndex: table.columnIndexByName[column]!))
                } else if let relationship = property as? RelationshipDescription, !relationship.isToMany {
                    let column = columnNameByProperty[key]!
                    let entityColumn = entityColumnByProperty[key]
                    storage.append(.toOne(column: column, columnIndex: table.columnIndexByName[column]!,
                                          entityColumn: entityColumn,
                                          entityColumnIndex: entityColumn.flatMap { table.columnIndexByName[$0] }))
                } else {
                    storage.append(storageByProperty[key]!)
                }
            }
            entities.append(EntityMapping(
                entityNumber: entity.entityNumber, tableName: table.name, storage: storage,
                entityNumbers: entity.entityNumbersIncludingSubentities,
                sharesTable: entity.superentity != nil || !entity.subentities.isEmpty))
        }
        positionByNumber = [Int](repeating: -1, count: (model.entitiesByNumber.last?.entityNumber ?? 0) + 1)
        for (position, mapping) in entities.enumerated() { positionByNumber[mapping.entityNumber] = position }
        // Foreign-key indexes, model indexes, uniqueness constraints. A set finds the columns already indexed
        // (the to-many foreign keys above), where searching the list was quadratic in the relationships.
        struct IndexedColumn: Hashable { let table: String, column: String }
        var indexedColumns = Set(indexes.filter { $0.columns.count == 1 }
            .map { IndexedColumn(table: $0.table, column: $0.columns[0]) })
        for entity in model.entitiesByNumber {
            let table = tables[tableIndex(of: entity)].name
            for case let relationship as RelationshipDescription in entity.properties
            where !relationship.isToMany && !relationship.isTransient {
                let column = columnNameByProperty[ObjectIdentifier(relationship)]!
                if indexedColumns.insert(IndexedColumn(table: table, column: column)).inserted {
                    let name = "\(table)_\(column)_INDEX"
                    try claim(name, for: "the index of \(describe(relationship))")
                    indexes.append((name: name, table: table, columns: [column], unique: false, whereClause: nil))
                }
            }
            let mapping = self.mapping(for: entity)
            func columns(for keys: [String]) -> [String] {
                keys.compactMap { key in
                    switch mapping.storage[entity.slotByName[key]!] {
                    case .attribute(let column, _), .toOne(let column, _, _, _): return column
                    default: return nil
                    }
                }
            }
            for index in entity.indexes {
                let name = "Z_\(entity.name.uppercased())_\(index.name.uppercased())"
                try claim(name, for: "index '\(index.name)' of entity '\(entity.name)'")
                let indexed = columns(for: index.propertyNames)
                if indexed.count == 1 { indexedColumns.insert(IndexedColumn(table: table, column: indexed[0])) }
                indexes.append((name: name, table: table, columns: indexed, unique: false, whereClause: nil))
            }
            for (position, constraint) in entity.uniquenessConstraints.enumerated() {
                let whereClause = mapping.sharesTable
                    ? "Z_ENT IN (\(mapping.entityNumbers.map(String.init).joined(separator: ", ")))" : nil
                let name = "Z_\(entity.name.uppercased())_UNIQUE_\(position)"
                try claim(name, for: "uniqueness constraint \(position + 1) of entity '\(entity.name)'")
                let indexed = columns(for: constraint)
                if indexed.count == 1 { indexedColumns.insert(IndexedColumn(table: table, column: indexed[0])) }
                indexes.append((name: name, table: table, columns: indexed, unique: true, whereClause: whereClause))
            }
        }
        for join in joinTables {
            let name = "\(join.name)_\(join.destinationColumn)_INDEX"
            try claim(name, for: "the index of join table \(join.name)")
            indexes.append((name: name, table: join.name, columns: [join.destinationColumn, join.sourceColumn],
                            unique: false, whereClause: nil))
        }
        // Queries and writes paste these names unquoted; the model's checks make every one a plain name.
        let names = tables.flatMap { [$0.name] + $0.columns.map(\.name) }
            + joinTables.flatMap { [$0.name] + $0.columns } + indexes.map(\.name)
        for name in names where !SQLIdentifier.isPlainName(name) {
            preconditionFailure("StoreSchema made '\(name)', which is not a plain SQL name")
        }
    }

    func mapping(for entity: EntityDescription) -> EntityMapping { entities[positionByNumber[entity.entityNumber]] }

    package func table(named name: String) -> Table? { tables.first { $0.name == name } }

    /// The statements that create this layout in an empty database.
    var creationSQL: [String] {
        var statements: [String] = [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ]
        let quoted = SQLIdentifier.quoted
        for table in tables {
            let columns = table.columns.map { "\(quoted($0.name)) \($0.sqlType)" }.joined(separator: ", ")
            statements.append("CREATE TABLE \(quoted(table.name)) ( \(columns) )")
        }
        for join in joinTables {
            let columns = join.columns.map { "\(quoted($0)) INTEGER" }.joined(separator: ", ")
            statements.append("CREATE TABLE \(quoted(join.name)) ( \(columns), PRIMARY KEY (\(quoted(join.sourceColumn)), \(quoted(join.destinationColumn))) )")
        }
        for index in indexes {
            let unique = index.unique ? "UNIQUE " : ""
            // The only clause: Z_ENT and entity numbers the schema made.
            let whereClause = index.whereClause.map { " WHERE \($0)" } ?? ""
            let columns = index.columns.map(quoted).joined(separator: ", ")
            statements.append("CREATE \(unique)INDEX \(quoted(index.name)) ON \(quoted(index.table)) (\(columns))\(whereClause)")
        }
        return statements
    }
}
