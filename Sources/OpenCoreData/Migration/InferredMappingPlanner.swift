import Foundation

/// Plans the inferred ("lightweight") migration from one model version to another: matches entities and
/// properties by name or renaming identifier, checks every change is one an inferred mapping can make,
/// and lays out the steps (docs/MIGRATION.md).
///
/// Every table of the new layout is rebuilt (created under a temporary name, filled from the old rows,
/// then renamed over the old one), so each row ends up exactly as a fresh store of the new version would
/// hold it. Rows keep their primary keys, so links stay valid; relationships are moved as collected
/// links (source key, destination key, order), whatever their storage was and becomes.
final class InferredMappingPlanner {
    let source: ManagedObjectModel
    let target: ManagedObjectModel
    let sourceVersion: String
    let targetVersion: String
    /// The store's entity numbers by name, from its `Z_PRIMARYKEY`: the old rows' `Z_ENT` values.
    let storedEntityNumbers: [String: Int]
    /// The store's metadata, rewritten with the target's hashes (its UUID kept).
    let metadata: StoreMetadata
    /// How the statements are written for the store's database.
    let dialect: any SQLDialect

    /// Prefix of the tables of the new layout while they are filled.
    static let newTablePrefix = "_OCD_NEW_"
    /// Prefix of the temporary link tables.
    static let linksPrefix = "_OCD_LINKS_"

    private var sourceByTarget: [ObjectIdentifier: EntityDescription] = [:]
    /// What is added to the keys of an old table whose rows join another table's in one new table (so
    /// keys stay unique), as SQL over the old tables; absent for tables whose keys stay as they are.
    private var keyOffsetByTable: [String: (sql: String, arguments: [StoreValue])] = [:]
    /// The same offsets with the source entities each old table stores, for the plan (``MigrationPlan/keyMoves``).
    private var keyMoves: [MigrationPlan.KeyMove] = []
    private var checks: [SchemaStep] = []
    private var checkKeys: Set<String> = []
    private var linkSteps: [SchemaStep] = []
    /// Link table name (nil: no source links) by target relationship.
    private var linksByRelationship: [ObjectIdentifier: String?] = [:]

    init(source: ManagedObjectModel, sourceVersion: String, target: ManagedObjectModel, targetVersion: String,
         storedEntityNumbers: [String: Int], metadata: StoreMetadata, dialect: any SQLDialect = SQLiteDialect()) {
        self.source = source
        self.target = target
        self.sourceVersion = sourceVersion
        self.targetVersion = targetVersion
        self.storedEntityNumbers = storedEntityNumbers
        self.metadata = metadata
        self.dialect = dialect
    }

    /// A name the library made, quoted as the store's database quotes it.
    private func q(_ name: String) -> String { dialect.quotedName(name) }

    /// The name of an index on a temporary table.
    private func temporaryIndex(_ name: String) -> String {
        dialect.qualifiesTemporaryIndexes ? dialect.temporary(name) : q(name)
    }

    /// The plan.
    ///
    /// - Throws: ``MigrationError/unsupportedChange(entity:property:reason:)`` and
    ///   ``MigrationError/unsupportedTypeChange(entity:attribute:from:to:)`` for changes no inferred
    ///   mapping makes.
    func plan() throws -> MigrationPlan {
        try matchEntities()
        try CompositeMigrationCheck.check(target) { match($0) }
        let targetSchema = target.schema
        var creates: [SchemaStep] = []
        var copies: [SchemaStep] = []
        try assignKeyOffsets()
        var entityColumnFills: [SchemaStep] = []
        // Entity tables.
        for table in targetSchema.tables {
            let entities = target.entitiesByNumber.filter { targetSchema.mapping(for: $0).tableName == table.name }
            let columns = table.columns.map { "\(q($0.name)) \(dialect.columnDefinition(forSQLiteType: $0.sqlType))" }.joined(separator: ", ")
            creates.append(SchemaStep(.createTable, subject: entities.first?.rootEntity.name,
                                      "create \(table.name) (\(table.columns.count) columns)",
                                      [MigrationStatement(sql: "CREATE TABLE \(q(Self.newTablePrefix + table.name)) (\(columns))")]))
            for entity in entities {
                guard let sourceEntity = match(entity) else { continue }
                copies.append(try copyRows(of: entity, from: sourceEntity, into: table))
                entityColumnFills += fillEntityColumns(of: entity)
            }
        }
        // Join tables.
        for join in targetSchema.joinTables {
            let columns = join.columns.map { "\(q($0)) \(dialect.columnDefinition(forSQLiteType: "INTEGER"))" }.joined(separator: ", ")
            creates.append(SchemaStep(.createTable, subject: nil, "create join table \(join.name)", [MigrationStatement(
                sql: "CREATE TABLE \(q(Self.newTablePrefix + join.name)) (\(columns), PRIMARY KEY (\(q(join.sourceColumn)), \(q(join.destinationColumn))))")]))
            if let fill = try fillJoinTable(join) { copies.append(fill) }
        }
        var steps = linkSteps + checks + creates + copies + entityColumnFills
        steps.append(rewritePrimaryKeys())
        let sourceSchema = source.schema
        for name in sourceSchema.tables.map(\.name) + sourceSchema.joinTables.map(\.name) {
            steps.append(SchemaStep(.dropTable, subject: nil, "drop old \(name)",
                                    [MigrationStatement(sql: "DROP TABLE \(q(name))")]))
        }
        for name in targetSchema.tables.map(\.name) + targetSchema.joinTables.map(\.name) {
            steps.append(SchemaStep(.renameTable, subject: nil, "rename new \(name)", [MigrationStatement(
                sql: "ALTER TABLE \(q(Self.newTablePrefix + name)) RENAME TO \(q(name))")]))
        }
        for index in targetSchema.indexes {
            let unique = index.unique ? "UNIQUE " : ""
            let whereClause = index.whereClause.map { " WHERE \($0)" } ?? ""
            let columns = index.columns.map(q).joined(separator: ", ")
            steps.append(SchemaStep(.createIndex, subject: nil, "index \(index.name)", [MigrationStatement(
                sql: "CREATE \(unique)INDEX \(q(index.name)) ON \(q(index.table)) (\(columns))\(whereClause)")]))
        }
        steps.append(try writeMetadata())
        if !linkSteps.isEmpty {
            let drops = linksByRelationship.values.compactMap { $0 }.sorted().map {
                MigrationStatement(sql: "DROP TABLE \(dialect.temporary($0))")
            }
            steps.append(SchemaStep(.cleanUp, subject: nil, "drop the collected links", drops))
        }
        return MigrationPlan(sourceVersion: sourceVersion, targetVersion: targetVersion, steps: steps,
                             sourceHashes: source.entityVersionHashesByName,
                             targetHashes: target.entityVersionHashesByName, keyMoves: keyMoves, slotMoves: slotMoves())
    }

    /// Where the property slots of each source entity the target keeps under its name go: a target
    /// property's slot for the slot of the source property it takes its values from.
    private func slotMoves() -> [String: [Int: Int]] {
        var moves: [String: [Int: Int]] = [:]
        for entity in target.entitiesByNumber {
            guard let sourceEntity = match(entity), sourceEntity.name == entity.name else { continue }
            var slots: [Int: Int] = [:]
            for (slot, property) in entity.allProperties.enumerated() {
                if let found = sourceProperty(for: property, in: sourceEntity), let old = sourceEntity.slotByName[found.name] {
                    slots[old] = slot
                }
            }
            moves[entity.name] = slots
        }
        return moves
    }

    // MARK: Matching

    /// Pairs each target entity with the source entity its rows come from: the one its renaming
    /// identifier names, else the one of the same name unless another entity's renaming identifier
    /// claims it (then the entity of that name is new).
    private func matchEntities() throws {
        let claimed = Set(target.entities.compactMap { entity in
            entity.renamingIdentifier.flatMap { source.entitiesByName[$0] != nil ? $0 : nil }
        })
        var taken: [ObjectIdentifier: String] = [:]
        for entity in target.entitiesByNumber {
            let renamed = entity.renamingIdentifier.flatMap { source.entitiesByName[$0] }
            let found = renamed ?? (claimed.contains(entity.name) ? nil : source.entitiesByName[entity.name])
            guard let found else { continue }
            if let other = taken[ObjectIdentifier(found)] {
                throw MigrationError.unsupportedChange(entity: entity.name, property: nil,
                                                       reason: "it and '\(other)' both come from '\(found.name)'")
            }
            taken[ObjectIdentifier(found)] = entity.name
            sourceByTarget[ObjectIdentifier(entity)] = found
        }
    }

    private func match(_ entity: EntityDescription) -> EntityDescription? { sourceByTarget[ObjectIdentifier(entity)] }

    /// The source property a target property takes its values from: the one its renaming identifier
    /// names, else the one of the same name unless another property of its entity claims that one by its
    /// renaming identifier (then the property is new).
    private func sourceProperty(for property: PropertyDescription, in entity: EntityDescription) -> PropertyDescription? {
        var found = property.renamingIdentifier.flatMap { entity.propertiesByName[$0] }
        if found == nil {
            let siblings = property.entity.map { [$0] + $0.allSubentities }?.flatMap(\.allProperties) ?? []
            let claimed = siblings.contains { $0 !== property && $0.renamingIdentifier == property.name }
            found = claimed ? nil : entity.propertiesByName[property.name]
        }
        guard let found, !found.isTransient else { return nil }
        return found
    }

    private func sourceTable(_ entity: EntityDescription) -> String { source.schema.mapping(for: entity).tableName }

    /// When rows of several old tables land in one new table (inheritance trees joined under a new
    /// parent), the keys of each old table after the first (in name order) move up past every key the
    /// tables before it held or handed out. Links move with them; those objects get new IDs.
    private func assignKeyOffsets() throws {
        let schema = target.schema
        for table in schema.tables {
            let entities = target.entitiesByNumber.filter { schema.mapping(for: $0).tableName == table.name }
            let oldTables = Array(Set(entities.compactMap { match($0).map(sourceTable) })).sorted()
            guard oldTables.count > 1 else { continue }
            var terms: [(sql: String, arguments: [StoreValue])] = []
            for oldTable in oldTables {
                if keyOffsetByTable[oldTable] != nil {
                    throw MigrationError.unsupportedChange(
                        entity: entities[0].rootEntity.name, property: nil,
                        reason: "rows of \(oldTable) would join rows of other tables in more than one new table")
                }
                if !terms.isEmpty {
                    keyOffsetByTable[oldTable] = (terms.map(\.sql).joined(separator: " + "), terms.flatMap(\.arguments))
                    keyMoves.append(MigrationPlan.KeyMove(
                        sourceEntities: source.entitiesByNumber.filter { sourceTable($0) == oldTable }.map(\.name),
                        offset: MigrationStatement(sql: terms.map(\.sql).joined(separator: " + "), arguments: terms.flatMap(\.arguments))))
                }
                terms.append(highestKey(of: oldTable))
            }
        }
    }

    /// SQL for the highest key an old table holds or handed out.
    private func highestKey(of table: String) -> (sql: String, arguments: [StoreValue]) {
        let names = source.entitiesByNumber.filter { sourceTable($0) == table }.map(\.name)
        return ("\(dialect.greatest)((SELECT COALESCE(MAX(\(q("Z_PK"))), 0) FROM \(q(table))), (SELECT COALESCE(MAX(\(q("Z_MAX"))), 0) FROM \(q("Z_PRIMARYKEY")) WHERE \(q("Z_NAME")) IN (\(placeholders(names)))))",
                names.map(\.storeValue))
    }

    /// `key` (an old key of `table`) as the new key: with the table's offset, if it has one.
    private func newKey(_ key: String, of table: String) -> (sql: String, arguments: [StoreValue]) {
        guard let offset = keyOffsetByTable[table] else { return (key, []) }
        return ("(\(key) + \(offset.sql))", offset.arguments)
    }

    /// The `Z_ENT` a source entity's rows carry in the store.
    private func storedNumber(_ entity: EntityDescription) -> Int {
        storedEntityNumbers[entity.name] ?? entity.entityNumber
    }

    /// (stored source number, new number) for `entity` and its sub-entities that have a source.
    private func numberPairs(_ entity: EntityDescription) -> [(old: Int, new: Int)] {
        ([entity] + entity.allSubentities).compactMap { target in match(target).map { (storedNumber($0), target.entityNumber) } }
    }

    /// SQL for the new keys of the rows that become objects of `entity` or its sub-entities.
    private func keptKeys(_ entity: EntityDescription) -> MigrationStatement? {
        keys(of: ([entity] + entity.allSubentities).compactMap(match))
    }

    /// SQL for the new keys of the rows of these source entities, table by table.
    private func keys(of entities: [EntityDescription]) -> MigrationStatement? {
        guard !entities.isEmpty else { return nil }
        let byTable = Dictionary(grouping: entities, by: sourceTable)
        var parts: [String] = []
        var arguments: [StoreValue] = []
        for table in byTable.keys.sorted() {
            let numbers = byTable[table]!.map(storedNumber)
            let key = newKey(q("Z_PK"), of: table)
            parts.append("SELECT \(key.sql) FROM \(q(table)) WHERE \(q("Z_ENT")) IN (\(placeholders(numbers)))")
            arguments += key.arguments + numbers.map(\.storeValue)
        }
        return MigrationStatement(sql: parts.joined(separator: " UNION ALL "), arguments: arguments)
    }

    /// SQL for the new keys of every row that stays in the store (its entity has a match) in the tables
    /// that hold `entity`'s rows, when that is more than the rows of `entity` and its sub-entities; nil
    /// when it is not.
    private func survivingKeys(besides entity: EntityDescription) -> MigrationStatement? {
        let tree = ([entity] + entity.allSubentities).compactMap(match)
        let tables = Set(tree.map(sourceTable))
        let matched = Set(sourceByTarget.values.map(ObjectIdentifier.init))
        let surviving = source.entitiesByNumber.filter { tables.contains(sourceTable($0)) && matched.contains(ObjectIdentifier($0)) }
        guard Set(surviving.map(ObjectIdentifier.init)) != Set(tree.map(ObjectIdentifier.init)) else { return nil }
        return keys(of: surviving)
    }

    private func storage(of property: PropertyDescription, in entity: EntityDescription, schema: StoreSchema) -> StoreSchema.PropertyStorage {
        schema.mapping(for: entity).storage[entity.slotByName[property.name]!]
    }

    // MARK: Rows

    private func copyRows(of entity: EntityDescription, from sourceEntity: EntityDescription,
                          into table: StoreSchema.Table) throws -> SchemaStep {
        let oldTable = sourceTable(sourceEntity)
        let key = newKey("old.\(q("Z_PK"))", of: oldTable)
        var assignments: [(column: String, sql: String, arguments: [StoreValue])] = [
            ("Z_PK", key.sql, key.arguments),
            ("Z_ENT", "?", [entity.entityNumber.storeValue]),
            ("Z_OPT", "old.\(q("Z_OPT"))", []),
        ]
        let mapping = target.schema.mapping(for: entity)
        for (slot, property) in entity.allProperties.enumerated() {
            switch mapping.storage[slot] {
            case .attribute(let column, _):
                let attribute = property as! AttributeDescription
                if let value = try attributeValue(attribute, of: entity, from: sourceEntity, oldTable: oldTable) {
                    assignments.append((column, value.sql, value.arguments))
                }
            case .toOne(let column, _, _, _):
                let relationship = property as! RelationshipDescription
                guard let links = try links(for: relationship) else { continue }
                assignments.append((column, "(SELECT l.b FROM \(dialect.temporary(links)) AS l WHERE l.a = \(key.sql))", key.arguments))
            default:
                break
            }
        }
        // Columns this table holds for other entities' to-many relationships: the hidden key of a to-many
        // without inverse, and the position in an ordered to-many.
        for owner in target.entitiesByNumber {
            for case let relationship as RelationshipDescription in owner.properties where !relationship.isTransient {
                guard case .toManyByForeignKey(let destinationTable, let column, let orderColumn)
                        = storage(of: relationship, in: owner, schema: target.schema),
                      destinationTable == table.name, entity.isKind(of: relationship.destinationEntity),
                      let links = try links(for: relationship) else { continue }
                if relationship.storedInverse == nil {
                    assignments.append((column, "(SELECT l.a FROM \(dialect.temporary(links)) AS l WHERE l.b = \(key.sql))", key.arguments))
                }
                if let orderColumn {
                    assignments.append((orderColumn, "(SELECT l.pos FROM \(dialect.temporary(links)) AS l WHERE l.b = \(key.sql))", key.arguments))
                }
            }
        }
        let columns = assignments.map { q($0.column) }.joined(separator: ", ")
        let values = assignments.map(\.sql).joined(separator: ", ")
        let statement = MigrationStatement(
            sql: "INSERT INTO \(q(Self.newTablePrefix + table.name)) (\(columns)) SELECT \(values) FROM \(q(oldTable)) AS old WHERE old.\(q("Z_ENT")) = ?",
            arguments: assignments.flatMap(\.arguments) + [storedNumber(sourceEntity).storeValue])
        let from = sourceEntity.name == entity.name ? "" : " (from \(sourceEntity.name))"
        return SchemaStep(.copyRows, subject: entity.name, "copy rows of \(entity.name)\(from) from \(oldTable) into \(table.name)", [statement])
    }

    /// Fills the entity-number columns of `entity`'s to-ones whose destination has sub-entities, from the
    /// destination rows of the new layout (once every table is copied).
    private func fillEntityColumns(of entity: EntityDescription) -> [SchemaStep] {
        let mapping = target.schema.mapping(for: entity)
        var steps: [SchemaStep] = []
        for (slot, property) in entity.allProperties.enumerated() where property.entity === entity {
            guard case .toOne(let column, _, let entityColumn?, _) = mapping.storage[slot],
                  let destination = (property as? RelationshipDescription)?.destinationEntity else { continue }
            let table = q(Self.newTablePrefix + mapping.tableName)
            let destinationTable = q(Self.newTablePrefix + target.schema.mapping(for: destination).tableName)
            let numbers = entity.entityNumbersIncludingSubentities
            steps.append(SchemaStep(.fillEntityColumns, subject: "\(entity.name).\(property.name)",
                                    "set the destination entity numbers of \(entity.name).\(property.name)", [MigrationStatement(
                sql: "UPDATE \(table) SET \(q(entityColumn)) = (SELECT d.\(q("Z_ENT")) FROM \(destinationTable) AS d WHERE d.\(q("Z_PK")) = \(table).\(q(column))) WHERE \(q(column)) IS NOT NULL AND \(q("Z_ENT")) IN (\(placeholders(numbers)))",
                arguments: numbers.map(\.storeValue))]))
        }
        return steps
    }

    /// The value of a target attribute in a copied row; nil leaves the column NULL.
    private func attributeValue(_ attribute: AttributeDescription, of entity: EntityDescription,
                                from sourceEntity: EntityDescription, oldTable: String) throws -> (sql: String, arguments: [StoreValue])? {
        let declaring = attribute.entity ?? entity
        let defaultValue: StoreValue?
        do {
            defaultValue = try attribute.defaultValue.map { try ValueConversion.storeValue($0, for: attribute) }
        } catch {
            throw MigrationError.unsupportedChange(entity: declaring.name, property: attribute.name,
                                                   reason: "its default value cannot be stored (\(error))")
        }
        // A relationship that becomes an attribute of the same name is one property removed and one added
        // (its links go with the old relationship): the attribute is filled as a new one.
        guard let old = sourceProperty(for: attribute, in: sourceEntity) as? AttributeDescription,
              case .attribute(let oldColumn, _) = storage(of: old, in: sourceEntity, schema: source.schema) else {
            // A new attribute: its default, or nothing.
            if let defaultValue, !defaultValue.isNull { return ("?", [defaultValue]) }
            if !attribute.isOptional {
                addCheck(key: "\(declaring.name).\(attribute.name)", subject: "\(declaring.name).\(attribute.name)",
                         "rows that would lack required \(attribute.name)",
                         sql: "SELECT COUNT(*) FROM \(q(oldTable)) WHERE \(q("Z_ENT")) IN (\(placeholders(numberPairs(declaring))))",
                         arguments: numberPairs(declaring).map { $0.old.storeValue },
                         refusal: .missingRequiredValues(entity: declaring.name, attribute: attribute.name))
            }
            return nil
        }
        guard let converted = Self.convert("old.\(q(oldColumn))", from: old.attributeType, to: attribute.attributeType, doubleType: dialect.doubleType) else {
            throw MigrationError.unsupportedTypeChange(entity: declaring.name, attribute: attribute.name,
                                                       from: old.attributeType, to: attribute.attributeType)
        }
        if attribute.isOptional { return (converted, []) }
        if let defaultValue, !defaultValue.isNull { return ("COALESCE(\(converted), ?)", [defaultValue]) }
        if old.isOptional {
            addCheck(key: "\(declaring.name).\(attribute.name)", subject: "\(declaring.name).\(attribute.name)",
                     "rows where required \(attribute.name) has no value",
                     sql: "SELECT COUNT(*) FROM \(q(oldTable)) WHERE \(q("Z_ENT")) IN (\(placeholders(numberPairs(declaring)))) AND \(q(oldColumn)) IS NULL",
                     arguments: numberPairs(declaring).map { $0.old.storeValue },
                     refusal: .missingRequiredValues(entity: declaring.name, attribute: attribute.name))
        }
        return (converted, [])
    }

    /// `expression` (a value of type `from`) as a value of type `to`, for the type changes an inferred
    /// mapping accepts: integer widening, integers and booleans to floating point and decimal, Float to
    /// Double, booleans to integers, URI to String. Nil for every other change.
    static func convert(_ expression: String, from: AttributeType, to: AttributeType, doubleType: String = "REAL") -> String? {
        if from == to { return expression }
        let widerInteger: [AttributeType: Int] = [.boolean: 0, .integer16: 1, .integer32: 2, .integer64: 3]
        switch (from, to) {
        case _ where widerInteger[from].map { old in widerInteger[to].map { old < $0 } ?? false } ?? false:
            return expression
        case (.boolean, .double), (.boolean, .float), (.integer16, .double), (.integer16, .float),
             (.integer32, .double), (.integer32, .float), (.integer64, .double):
            return "CAST(\(expression) AS \(doubleType))"
        case (.boolean, .decimal), (.integer16, .decimal), (.integer32, .decimal), (.integer64, .decimal),
             (.float, .double), (.uri, .string):
            return expression
        default:
            return nil
        }
    }

    // MARK: Relationships

    /// The temporary table holding a target relationship's links, collected from the old layout (planned
    /// once per relationship); nil when the relationship is new.
    private func links(for relationship: RelationshipDescription) throws -> String? {
        let key = ObjectIdentifier(relationship)
        if let known = linksByRelationship[key] { return known }
        let owner = relationship.entity!
        let destination = relationship.destinationEntity!
        var pairs: (sql: String, arguments: [StoreValue])?
        var fromToMany = false
        var fromManyToMany = false
        if let sourceOwner = match(owner), let found = sourceProperty(for: relationship, in: sourceOwner) {
            guard let old = found as? RelationshipDescription else {
                throw MigrationError.unsupportedChange(entity: owner.name, property: relationship.name,
                                                       reason: "it was an attribute and becomes a relationship")
            }
            try checkDestination(old.destinationEntity, becomes: destination, of: relationship)
            pairs = offsetPairs(sourcePairs(old, in: sourceOwner), old, in: sourceOwner)
            fromToMany = old.isToMany
            fromManyToMany = old.isManyToMany
        } else if let inverse = relationship.storedInverse, let inverseOwner = inverse.entity,
                  let sourceInverseOwner = match(inverseOwner),
                  let found = sourceProperty(for: inverse, in: sourceInverseOwner) {
            guard let old = found as? RelationshipDescription else {
                throw MigrationError.unsupportedChange(entity: inverseOwner.name, property: inverse.name,
                                                       reason: "it was an attribute and becomes a relationship")
            }
            try checkDestination(old.destinationEntity, becomes: owner, of: inverse)
            let inner = offsetPairs(sourcePairs(old, in: sourceInverseOwner), old, in: sourceInverseOwner)
            pairs = ("SELECT b AS a, a AS b, io AS o, o AS io FROM \(dialect.derived(inner.sql, "inverse"))", inner.arguments)
            fromToMany = old.storedInverse?.isToMany ?? true
            fromManyToMany = old.isManyToMany
        }
        guard let pairs, let ownerKeys = keptKeys(owner), let destinationKeys = keptKeys(destination) else {
            linksByRelationship[key] = .some(nil)
            return nil
        }
        let name = Self.linksPrefix + "\(linksByRelationship.count + 1)"
        linksByRelationship[key] = name
        let table = q(name)
        linkSteps.append(SchemaStep(.collectLinks, subject: "\(owner.name).\(relationship.name)",
                                    "collect the links of \(owner.name).\(relationship.name)", [
            MigrationStatement(
                sql: "CREATE TEMP TABLE \(table) AS SELECT a, b, ROW_NUMBER() OVER (PARTITION BY a ORDER BY o, b) * 1024 AS pos, ROW_NUMBER() OVER (PARTITION BY b ORDER BY io, a) * 1024 AS ipos FROM \(dialect.derived(pairs.sql, "pairs")) WHERE a IN (\(ownerKeys.sql)) AND b IN (\(destinationKeys.sql))",
                arguments: pairs.arguments + ownerKeys.arguments + destinationKeys.arguments),
            MigrationStatement(sql: "CREATE INDEX \(temporaryIndex(name + "_A")) ON \(table) (a)"),
            MigrationStatement(sql: "CREATE INDEX \(temporaryIndex(name + "_B")) ON \(table) (b)"),
        ]))
        // Links to objects that stay but leave the relationship's entities (an inheritance change) would
        // be dropped silently: refused instead. (Links to objects of removed entities go with them.)
        var lost: [String] = []
        var lostArguments: [StoreValue] = []
        for (column, entity, kept) in [("a", owner, ownerKeys), ("b", destination, destinationKeys)] {
            guard let surviving = survivingKeys(besides: entity) else { continue }
            lost.append("(\(column) IN (\(surviving.sql)) AND \(column) NOT IN (\(kept.sql)))")
            lostArguments += surviving.arguments + kept.arguments
        }
        if !lost.isEmpty {
            addCheck(key: "lost \(name)", subject: "\(owner.name).\(relationship.name)",
                     "links to objects no longer of the relationship's entities",
                     sql: "SELECT COUNT(*) FROM \(dialect.derived(pairs.sql, "pairs")) WHERE \(lost.joined(separator: " OR "))",
                     arguments: pairs.arguments + lostArguments,
                     refusal: .linksLost(entity: owner.name, relationship: relationship.name))
        }
        // Links that the new storage cannot hold are refused, never dropped.
        if !relationship.isToMany && fromToMany {
            addCheck(key: "links \(name)", subject: "\(owner.name).\(relationship.name)",
                     "objects holding several \(relationship.name) links",
                     sql: "SELECT COUNT(*) FROM \(dialect.derived("SELECT a FROM \(dialect.temporary(name)) GROUP BY a HAVING COUNT(*) > 1", "several"))", arguments: [],
                     refusal: .severalLinks(entity: owner.name, relationship: relationship.name))
        }
        if relationship.isToMany && !relationship.isManyToMany && fromManyToMany {
            let inverseName = relationship.storedInverse?.name ?? relationship.name
            addCheck(key: "inverse links \(name)", subject: "\(destination.name).\(inverseName)",
                     "objects linked from several \(owner.name) objects",
                     sql: "SELECT COUNT(*) FROM \(dialect.derived("SELECT b FROM \(dialect.temporary(name)) GROUP BY b HAVING COUNT(*) > 1", "several"))", arguments: [],
                     refusal: .severalLinks(entity: destination.name, relationship: inverseName))
        }
        return name
    }

    /// Refuses a destination change unless every old destination object is still one (the new
    /// destination is the old one's entity or an ancestor of it).
    private func checkDestination(_ old: EntityDescription, becomes new: EntityDescription,
                                  of relationship: RelationshipDescription) throws {
        guard let newSource = ([new] + new.allSubentities).compactMap(match).first,
              old.isKind(of: match(new) ?? newSource) else {
            throw MigrationError.unsupportedChange(
                entity: relationship.entity?.name ?? "?", property: relationship.name,
                reason: "its destination changes from '\(old.name)' to '\(new.name)'")
        }
    }

    /// `pairs` with new keys: a from the table of the relationship's entity, b from its destination's.
    private func offsetPairs(_ pairs: (sql: String, arguments: [StoreValue]), _ relationship: RelationshipDescription,
                             in entity: EntityDescription) -> (sql: String, arguments: [StoreValue]) {
        let a = newKey("a", of: sourceTable(entity)), b = newKey("b", of: sourceTable(relationship.destinationEntity))
        guard !a.arguments.isEmpty || !b.arguments.isEmpty else { return pairs }
        return ("SELECT \(a.sql) AS a, \(b.sql) AS b, o, io FROM \(dialect.derived(pairs.sql, "moved"))", a.arguments + b.arguments + pairs.arguments)
    }

    /// SQL selecting (a: source key, b: destination key, o: order in a's list, io: order in b's list)
    /// for a source relationship, from wherever the old layout keeps it.
    private func sourcePairs(_ relationship: RelationshipDescription, in entity: EntityDescription) -> (sql: String, arguments: [StoreValue]) {
        switch storage(of: relationship, in: entity, schema: source.schema) {
        case .toOne(let column, _, _, _):
            var inverseOrder = dialect.nullNumber
            if let inverse = relationship.storedInverse, inverse.isOrdered, let inverseOwner = inverse.entity,
               case .toManyByForeignKey(_, _, let orderColumn?) = storage(of: inverse, in: inverseOwner, schema: source.schema) {
                inverseOrder = q(orderColumn)
            }
            return ("SELECT \(q("Z_PK")) AS a, \(q(column)) AS b, \(dialect.nullNumber) AS o, \(inverseOrder) AS io FROM \(q(sourceTable(entity))) WHERE \(q(column)) IS NOT NULL", [])
        case .toManyByForeignKey(let table, let column, let orderColumn):
            return ("SELECT \(q(column)) AS a, \(q("Z_PK")) AS b, \(orderColumn.map(q) ?? dialect.nullNumber) AS o, \(dialect.nullNumber) AS io FROM \(q(table)) WHERE \(q(column)) IS NOT NULL", [])
        case .toManyByJoinTable(let join):
            return ("SELECT \(q(join.sourceColumn)) AS a, \(q(join.destinationColumn)) AS b, \(join.orderColumn.map(q) ?? dialect.nullNumber) AS o, \(join.inverseOrderColumn.map(q) ?? dialect.nullNumber) AS io FROM \(q(join.name))", [])
        case .attribute, .transient:
            let null = dialect.nullNumber
            return ("SELECT \(null) AS a, \(null) AS b, \(null) AS o, \(null) AS io WHERE \(dialect.boolean(false))", [])
        }
    }

    /// Fills a join table of the new layout from the links of the relationship that names it.
    private func fillJoinTable(_ join: StoreSchema.JoinTable) throws -> SchemaStep? {
        for owner in target.entitiesByNumber {
            for case let relationship as RelationshipDescription in owner.properties where !relationship.isTransient {
                guard case .toManyByJoinTable(let stored) = storage(of: relationship, in: owner, schema: target.schema),
                      stored.name == join.name, stored.sourceColumn == join.sourceColumn else { continue }
                guard let links = try links(for: relationship) else { return nil }
                var columns = [join.sourceColumn, join.destinationColumn]
                var values = ["a", "b"]
                if let orderColumn = join.orderColumn { columns.append(orderColumn); values.append("pos") }
                if let inverseOrderColumn = join.inverseOrderColumn { columns.append(inverseOrderColumn); values.append("ipos") }
                return SchemaStep(.fillJoinTable, subject: "\(owner.name).\(relationship.name)",
                                  "fill \(join.name) with the links of \(owner.name).\(relationship.name)", [MigrationStatement(
                    sql: "INSERT INTO \(q(Self.newTablePrefix + join.name)) (\(columns.map(q).joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(dialect.temporary(links))")])
            }
        }
        return nil
    }

    // MARK: Bookkeeping

    private func rewritePrimaryKeys() -> SchemaStep {
        let table = q(Self.newTablePrefix + "Z_PRIMARYKEY")
        var statements = [MigrationStatement(
            sql: "CREATE TABLE \(table) (\(q("Z_ENT")) \(dialect.bookkeepingColumnDefinition(forSQLiteType: "INTEGER PRIMARY KEY")), \(q("Z_NAME")) \(dialect.bookkeepingColumnDefinition(forSQLiteType: "VARCHAR")), \(q("Z_SUPER")) \(dialect.bookkeepingColumnDefinition(forSQLiteType: "INTEGER")), \(q("Z_MAX")) \(dialect.bookkeepingColumnDefinition(forSQLiteType: "INTEGER")))")]
        for entity in target.entitiesByNumber {
            let row: [StoreValue] = [entity.entityNumber.storeValue, entity.name.storeValue,
                                        (entity.superentity?.entityNumber ?? 0).storeValue]
            let sourceNames = ([entity] + entity.allSubentities).compactMap(match).map(\.name)
            if entity.superentity != nil || sourceNames.isEmpty {
                statements.append(MigrationStatement(sql: "INSERT INTO \(table) VALUES (?, ?, ?, 0)", arguments: row))
                continue
            }
            // The root's row carries the table's highest key: never below what the old store handed out
            // (in each old table, moved up by its key offset).
            let newTable = q(Self.newTablePrefix + target.schema.mapping(for: entity).tableName)
            let tree = ([entity] + entity.allSubentities).compactMap(match)
            var terms = ["COALESCE((SELECT MAX(\(q("Z_PK"))) FROM \(newTable)), 0)"]
            var arguments = row
            for (table, entities) in Dictionary(grouping: tree, by: sourceTable).sorted(by: { $0.key < $1.key }) {
                let names = entities.map(\.name)
                let handedOut = newKey("COALESCE((SELECT MAX(\(q("Z_MAX"))) FROM \(q("Z_PRIMARYKEY")) WHERE \(q("Z_NAME")) IN (\(placeholders(names)))), 0)", of: table)
                terms.append(handedOut.sql)
                arguments += names.map(\.storeValue) + handedOut.arguments
            }
            statements.append(MigrationStatement(sql: "INSERT INTO \(table) VALUES (?, ?, ?, \(dialect.greatest)(\(terms.joined(separator: ", "))))",
                                                 arguments: arguments))
        }
        statements.append(MigrationStatement(sql: "DROP TABLE \(q("Z_PRIMARYKEY"))"))
        statements.append(MigrationStatement(sql: "ALTER TABLE \(table) RENAME TO \(q("Z_PRIMARYKEY"))"))
        return SchemaStep(.rewritePrimaryKeys, subject: nil,
                          "rewrite Z_PRIMARYKEY for \(target.entitiesByNumber.count) entities", statements)
    }

    private func writeMetadata() throws -> SchemaStep {
        var updated = metadata
        updated.versionHashes = target.entityVersionHashesByName
        updated.versionIdentifiers = StoreMetadata(model: target).versionIdentifiers
        return SchemaStep(.writeMetadata, subject: nil, "write the version hashes of \(targetVersion)", [MigrationStatement(
            sql: "UPDATE \(q("Z_METADATA")) SET \(q("Z_PLIST")) = ? WHERE \(q("Z_VERSION")) = (SELECT MIN(\(q("Z_VERSION"))) FROM \(q("Z_METADATA")))",
            arguments: [try updated.plistData().storeValue])])
    }

    private func addCheck(key: String, subject: String, _ summary: String, sql: String, arguments: [StoreValue],
                          refusal: MigrationRefusal) {
        guard checkKeys.insert(key).inserted else { return }
        checks.append(SchemaStep(.check, subject: subject, "refuse if any: \(summary)",
                                 [MigrationStatement(sql: sql, arguments: arguments)], refusal: refusal))
    }

    private func placeholders<T>(_ values: [T]) -> String { values.map { _ in "?" }.joined(separator: ", ") }
}
