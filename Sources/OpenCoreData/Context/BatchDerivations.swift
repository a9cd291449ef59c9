import Foundation

/// Derived attributes kept right by batch requests, which write rows without objects and so without the
/// save that computes derivations (`recomputeDerivedAttributes`). Core Data keeps them with triggers in
/// the store; here the batch request writes them itself, in the same transaction:
///
/// - A batch update recomputes, in its own `UPDATE`, each derived attribute of the updated rows that reads
///   an updated attribute or `now()`, from the new values (SQLite's `SET` sees the old row, so the new value
///   expressions are put in place of the attributes they set).
/// - Then, for each derived attribute of any entity that reads an updated attribute through a relationship
///   (`author.name`, `books.@sum.price`), one more `UPDATE` rewrites the rows whose stored value differs from
///   the derivation computed in SQL.
/// - A batch delete rewrites, the same way, the rows of every derived attribute that reads a related object.
/// - A batch insert computes each new row's derived attributes in Swift from the row's values (a new row has
///   no related objects: a to-one reads nil, a to-many is empty).
///
/// A derivation the store cannot compute for those rows refuses the whole request before anything is
/// written, naming the entity and the attribute; a stale value is never left behind silently.
enum BatchDerivations {
    /// A follow-up statement of a batch update.
    typealias Statement = (sql: String, arguments: [StoreValue])

    // MARK: Batch update, the updated rows

    /// The extra `column = SQL` assignments of a batch update of `updates` (attribute name → new value, a
    /// constant or a ``QueryExpression``) on `entity`'s rows (and its sub-entities' with `includesSubentities`).
    ///
    /// - Throws: ``ObjectGraphError/derivedAttribute(entity:key:)`` when `updates` sets a derived attribute,
    ///   ``ObjectGraphError/derivedAttributeNotRecomputable(entity:key:reason:)`` for a derivation that reads an
    ///   updated attribute and a related object too (SQLite's `UPDATE` cannot join), or one that does not compile
    ///   in `dialect`.
    static func assignments(entity: EntityDescription, includesSubentities: Bool, updates: [String: Any],
                            model: ManagedObjectModel, dialect: any SQLDialect = SQLiteDialect()) throws -> [(column: String, sql: String, arguments: [StoreValue])] {
        guard model.derivationPlan != nil else { return [] }
        for key in updates.keys.sorted() where entity.attributesByName[key]?.isDerived == true {
            throw ObjectGraphError.derivedAttribute(entity: entity.name, key: key)
        }
        var replacements: [String: QueryExpression] = [:]
        for (key, value) in updates {
            if let expression = value as? QueryExpression {
                replacements[key] = expression
            } else if let constant = QueryValue.convert(value) {
                replacements[key] = .constant(constant)
            }
        }
        // Derived attributes every updated row has (its own and inherited), then those of sub-entities,
        // each only for rows of its entity.
        var candidates: [(owner: EntityDescription, attribute: AttributeDescription, onlyOwnRows: Bool)] =
            entity.allProperties.compactMap { property in
                (property as? AttributeDescription).flatMap { $0.isDerived ? (entity, $0, false) : nil }
            }
        if includesSubentities {
            for subentity in entity.allSubentities {
                for case let attribute as AttributeDescription in subentity.properties where attribute.isDerived {
                    candidates.append((subentity, attribute, true))
                }
            }
        }
        var result: [(column: String, sql: String, arguments: [StoreValue])] = []
        for (owner, attribute, onlyOwnRows) in candidates {
            guard let derivation = attribute.derivationExpression else { continue }
            let readsUpdated = DerivationCheck.keyPaths(readBy: derivation).contains { $0.count == 1 && updates[$0[0]] != nil }
            guard readsUpdated || DerivationCheck.readsNow(derivation) else { continue }
            func refuse(_ reason: String) -> ObjectGraphError {
                .derivedAttributeNotRecomputable(entity: owner.name, key: attribute.name, reason: reason)
            }
            for path in DerivationCheck.keyPaths(readBy: derivation) where path.count == 1 && updates[path[0]] != nil {
                if replacements[path[0]] == nil { throw refuse("the new value of '\(path[0])' has no form a derivation can read") }
            }
            let substituted = substitute(derivation, replacements)
            let compiled: PredicateSQLCompiler.CompiledExpression
            do {
                compiled = try PredicateSQLCompiler(model: model, entity: owner, dialect: dialect).compile(expression: substituted)
            } catch {
                throw refuse("its derivation does not compile to SQL (\(error))")
            }
            guard compiled.fromClause == "\(owner.tableName) t0" else {
                throw refuse("its derivation reads a related object as well as an updated attribute, and a batch update reads only the row's own columns")
            }
            guard let slot = owner.slotByName[attribute.name], case .attribute(let column, _) = owner.storage[slot] else { continue }
            var sql = compiled.sql
            if onlyOwnRows {
                let numbers = owner.entityNumbersIncludingSubentities.map(String.init).joined(separator: ", ")
                sql = "CASE WHEN t0.Z_ENT IN (\(numbers)) THEN \(sql) ELSE t0.\(column) END"
            }
            result.append((column, sql, compiled.arguments))
        }
        return result
    }

    /// The derivation with each attribute a batch update sets replaced by its new value.
    private static func substitute(_ expression: QueryExpression, _ replacements: [String: QueryExpression]) -> QueryExpression {
        switch expression {
        case .keyPath(.evaluatedObject, let components) where components.count == 1:
            return replacements[components[0]] ?? expression
        case .arithmetic(let op, let left, let right):
            return .arithmetic(op, substitute(left, replacements), substitute(right, replacements))
        case .negate(let operand):
            return .negate(substitute(operand, replacements))
        case .function(let function, let arguments):
            return .function(function, arguments.map { substitute($0, replacements) })
        default:
            return expression
        }
    }

    // MARK: Batch update, related rows

    /// The statements that bring derived attributes reading an updated attribute of `entity` through a
    /// relationship up to date, run after the batch update in its transaction: each rewrites (and moves
    /// `Z_OPT` on for) the rows whose stored value differs from the derivation computed in SQL.
    ///
    /// - Throws: ``ObjectGraphError/derivedAttributeNotRecomputable(entity:key:reason:)`` for a derivation
    ///   that also reads `now()` (every row would change) or does not compile.
    static func relatedStatements(entity: EntityDescription, updatedKeys: Set<String>,
                                  model: ManagedObjectModel, dialect: any SQLDialect = SQLiteDialect()) throws -> [Statement] {
        let table = entity.tableName
        return try relatedStatements(model: model, dialect: dialect,
                                     change: "an attribute the batch update changes on related rows") { relationship, key in
            relationship.destinationEntity?.tableName == table && updatedKeys.contains(key)
        }
    }

    /// The statements that bring every derived attribute reading a related object up to date after a batch
    /// delete, run in its transaction: the delete removes related rows, and cascades and nullified foreign
    /// keys reach further than the request's entity.
    ///
    /// - Throws: ``ObjectGraphError/derivedAttributeNotRecomputable(entity:key:reason:)`` as
    ///   ``relatedStatements(entity:updatedKeys:model:)`` does.
    static func statementsAfterDelete(model: ManagedObjectModel, dialect: any SQLDialect = SQLiteDialect()) throws -> [Statement] {
        try relatedStatements(model: model, dialect: dialect, change: "related objects, which a batch delete may remove") { _, _ in true }
    }

    /// The statements for the derived attributes with a key path (relationship, last key) that `reads` accepts.
    private static func relatedStatements(model: ManagedObjectModel, dialect: any SQLDialect, change: String,
                                          reads: (RelationshipDescription, String) -> Bool) throws -> [Statement] {
        guard model.derivationPlan != nil else { return [] }
        var statements: [Statement] = []
        for owner in model.entities {
            for case let attribute as AttributeDescription in owner.properties {
                guard let derivation = attribute.derivationExpression else { continue }
                let readsChangedRelated = DerivationCheck.keyPaths(readBy: derivation).contains { path in
                    guard path.count >= 2, let relationship = owner.relationshipsByName[path[0]], let key = path.last
                    else { return false }
                    return reads(relationship, key)
                }
                guard readsChangedRelated else { continue }
                func refuse(_ reason: String) -> ObjectGraphError {
                    .derivedAttributeNotRecomputable(entity: owner.name, key: attribute.name, reason: reason)
                }
                if DerivationCheck.readsNow(derivation) {
                    throw refuse("its derivation reads now() as well as \(change)")
                }
                let compiled: PredicateSQLCompiler.CompiledExpression
                do {
                    compiled = try PredicateSQLCompiler(model: model, entity: owner, dialect: dialect).compile(expression: derivation)
                } catch {
                    throw refuse("its derivation does not compile to SQL (\(error))")
                }
                guard let slot = owner.slotByName[attribute.name], case .attribute(let column, _) = owner.storage[slot] else { continue }
                // The derivation's query re-reads the row by key; its table is aliased t0 inside, so the bare
                // table name is the row being updated. Names come from the schema.
                let ownerTable = owner.tableName
                let value = "(SELECT \(compiled.sql) FROM \(compiled.fromClause) WHERE t0.Z_PK = \(ownerTable).Z_PK)"
                let numbers = owner.entityNumbersIncludingSubentities.map(String.init).joined(separator: ", ")
                // "Differs, NULL included".
                let differs = dialect.nullSafeEquality(negated: true)
                let sql = "UPDATE \(ownerTable) SET \(column) = \(value), Z_OPT = Z_OPT + 1 "
                    + "WHERE \(ownerTable).Z_ENT IN (\(numbers)) AND \(ownerTable).\(column)\(differs)\(value)"
                statements.append((sql, compiled.arguments + compiled.arguments))
            }
        }
        return statements
    }

    // MARK: Batch insert

    /// A batch-insert row (attribute name → value) with its derived attributes computed (any value given for
    /// one is replaced); the row itself when the entity has none.
    ///
    /// - Throws: what evaluating a derivation throws (``QueryLanguageError``).
    static func completing(_ row: [String: Any], entity: EntityDescription,
                           derived: [AttributeDescription]) throws -> [String: Any] {
        guard !derived.isEmpty else { return row }
        let proxy = NewRow(entity: entity, values: row)
        var completed = row
        for attribute in derived {
            guard let derivation = attribute.derivationExpression else { continue }
            completed[attribute.name] = DerivationPlan.storable(try derivation.evaluate(with: proxy), for: attribute)
        }
        return completed
    }

    /// A batch insert's scratch object with its derived attributes computed.
    ///
    /// - Throws: what evaluating a derivation throws, and what converting its value for the attribute throws
    ///   (``ObjectGraphError/typeMismatch(entity:key:expected:actual:)``).
    static func complete(_ object: ManagedObject, derived: [AttributeDescription]) throws {
        for attribute in derived {
            guard let derivation = attribute.derivationExpression, let slot = object.entity.slotByName[attribute.name]
            else { continue }
            let value = DerivationPlan.storable(try derivation.evaluate(with: object), for: attribute)
            object.changes[slot] = .attribute(try ValueConversion.storeValue(value, for: attribute))
        }
    }

    /// The derived attributes of a batch insert's rows of `entity`.
    ///
    /// - Throws: ``ObjectGraphError/derivedAttributeNotRecomputable(entity:key:reason:)`` when the insert is an
    ///   upsert (the entity has uniqueness constraints) and a derivation reads both the row's attributes and
    ///   related objects: a row that updates a stored one would need the stored row's related objects.
    static func derivedAttributes(of entity: EntityDescription) throws -> [AttributeDescription] {
        let derived = entity.allProperties.compactMap { ($0 as? AttributeDescription).flatMap { $0.isDerived ? $0 : nil } }
        var ancestor: EntityDescription? = entity, upserts = false
        while let current = ancestor {
            if !current.uniquenessConstraints.isEmpty { upserts = true }
            ancestor = current.superentity
        }
        guard upserts else { return derived }
        for attribute in derived {
            guard let derivation = attribute.derivationExpression else { continue }
            let paths = DerivationCheck.keyPaths(readBy: derivation)
            let readsRelated = paths.contains { $0.count > 1 }, readsOwn = paths.contains { $0.count == 1 }
            if readsRelated && readsOwn {
                throw ObjectGraphError.derivedAttributeNotRecomputable(entity: entity.name, key: attribute.name,
                    reason: "the batch insert may update a stored row (uniqueness constraints), and the derivation reads that row's related objects as well as its attributes")
            }
        }
        return derived
    }

    /// A new row as a derivation reads it: its values (an attribute not given has its default), no related
    /// objects.
    private struct NewRow: KeyValueCoding {
        let entity: EntityDescription
        let values: [String: Any]

        func value(forKey key: String) throws -> Any? {
            if let value = values[key] { return value }
            if let relationship = entity.relationshipsByName[key] { return relationship.isToMany ? [Any]() : nil }
            return entity.attributesByName[key]?.defaultValue
        }
    }
}
