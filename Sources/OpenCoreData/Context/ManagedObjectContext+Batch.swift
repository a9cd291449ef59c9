import Foundation
import GRDB

/// Executing batch requests: they go straight to the store and do not touch the context's objects;
/// merge their object IDs into live contexts with `mergeChanges(fromRemoteContextSave:into:)`.
extension BatchUpdateRequest: ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let model = coordinator.managedObjectModel
        guard let entity = model.entitiesByName[entityName] else { throw ObjectGraphError.unknownEntity(entityName) }
        guard !propertiesToUpdate.isEmpty else {
            throw ObjectGraphError.invalidRequest("a batch update of \(entityName) needs propertiesToUpdate")
        }
        let store = try coordinator.primaryStore()
        // Everything is checked before any row changes.
        var assignments: [(column: String, sql: String, arguments: [DatabaseValue])] = []
        for key in propertiesToUpdate.keys.sorted() {
            guard let property = entity.propertiesByName[key] else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
            }
            guard let attribute = property as? AttributeDescription, !attribute.isTransient,
                  case .attribute(let column, _) = entity.storage[entity.slotByName[key]!] else {
                throw ObjectGraphError.invalidRequest(
                    "'\(entity.name).\(key)' is a relationship or transient; a batch update changes stored attributes only")
            }
            let (sql, arguments) = try BatchValueCompiler.compile(propertiesToUpdate[key] as Any, for: attribute,
                                                                  entity: entity, model: model)
            assignments.append((column, sql, arguments))
        }
        let compiled = try PredicateSQLCompiler.compile(model: model, entity: entity, predicate: predicate, sortDescriptors: [])
        let whereSQL = BatchFilter.whereClause(entity: entity, includesSubentities: includesSubentities,
                                               predicateSQL: compiled.whereClause)
        let outcome = try store.batchUpdate(entity: entity, assignments: assignments, fromClause: compiled.fromClause,
                                            whereSQL: whereSQL, filterArguments: compiled.arguments,
                                            returningIDs: resultType == .objectIDs)
        coordinator.rowCache.removeAll()
        return BatchResult(resultType: resultType, count: outcome.count, objectIDs: outcome.ids)
    }
}

extension BatchDeleteRequest: ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let model = coordinator.managedObjectModel
        let store = try coordinator.primaryStore()
        let outcome: (count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID])
        if let ids = objectIDs {
            guard let first = ids.first else { return BatchResult(resultType: resultType, count: 0, objectIDs: []) }
            outcome = try store.batchDelete(initial: ids, entity: first.entity, fromClause: "", whereSQL: "",
                                            filterArguments: [])
        } else if let fetchRequest {
            guard let entity = model.entitiesByName[fetchRequest.entityName] else {
                throw ObjectGraphError.unknownEntity(fetchRequest.entityName)
            }
            let compiled = try PredicateSQLCompiler.compile(model: model, entity: entity, predicate: fetchRequest.predicate,
                                                            sortDescriptors: [])
            let whereSQL = BatchFilter.whereClause(entity: entity, includesSubentities: fetchRequest.includesSubentities,
                                                   predicateSQL: compiled.whereClause)
            outcome = try store.batchDelete(initial: nil, entity: entity, fromClause: compiled.fromClause,
                                            whereSQL: whereSQL, filterArguments: compiled.arguments,
                                            needsIDs: resultType == .objectIDs)
        } else {
            throw ObjectGraphError.invalidRequest("a batch delete needs a fetch request or object IDs")
        }
        coordinator.rowCache.removeAll()
        lastNullifiedObjectIDs = outcome.updated
        return BatchResult(resultType: resultType, count: outcome.count,
                           objectIDs: resultType == .objectIDs ? outcome.deleted : [])
    }
}

extension BatchInsertRequest: ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        guard let entity = coordinator.managedObjectModel.entitiesByName[entityName] else {
            throw ObjectGraphError.unknownEntity(entityName)
        }
        guard !entity.isAbstract else {
            throw ObjectGraphError.invalidRequest("entity '\(entityName)' is abstract; batch-insert one of its sub-entities")
        }
        let store = try coordinator.primaryStore()
        guard let table = store.schema.table(named: entity.tableName) else { throw ObjectGraphError.unknownEntity(entityName) }
        let template = BatchRowTemplate(entity: entity, columnCount: table.columns.count)
        let outcome: (count: Int, ids: [ManagedObjectID])
        do {
            if let objects = objectsToInsert {
                // Rows are made and written one at a time inside the transaction: a bad row throws and
                // the transaction rolls back, so nothing is inserted, without holding every row at once.
                outcome = try store.batchInsert(entity: entity, count: objects.count, returningIDs: resultType == .objectIDs) {
                    try template.row(from: objects[$0], index: $0)
                }
            } else {
                var rows: [RowValues] = []
                if let handler = dictionaryHandler {
                    var index = 0
                    while true {
                        var dictionary: [String: Any] = [:]
                        if handler(&dictionary) { break }
                        rows.append(try template.row(from: dictionary, index: index))
                        index += 1
                    }
                } else if let handler = managedObjectHandler {
                    let scratch = ManagedObjectContext(concurrencyType: .confinement)
                    scratch.persistentStoreCoordinator = coordinator
                    var index = 0
                    while true {
                        let object = entity.managedObjectClass.init(entity: entity, id: ManagedObjectID(temporaryFor: entity))
                        scratch.insert(object)
                        if handler(object) { break }
                        rows.append(try template.row(from: object, index: index))
                        scratch.reset()
                        index += 1
                    }
                }
                outcome = try store.batchInsert(entity: entity, count: rows.count, returningIDs: resultType == .objectIDs) { rows[$0] }
            }
        } catch let error as StoreError {
            if case .sqlite(let code, let message, _) = error, code & 0xff == 19 {
                throw ObjectGraphError.validationFailed([ValidationFailure(
                    objectID: ManagedObjectID(temporaryFor: entity), entity: entity.name, key: "",
                    rule: .uniquenessViolation, message: message)])
            }
            throw error
        }
        return BatchResult(resultType: resultType, count: outcome.count, objectIDs: outcome.ids)
    }
}

/// The WHERE clause a batch request runs with: the entity filter for shared tables, and the predicate.
enum BatchFilter {
    static func whereClause(entity: EntityDescription, includesSubentities: Bool, predicateSQL: String?) -> String {
        var conditions: [String] = []
        if entity.superentity != nil || !entity.subentities.isEmpty {
            let numbers = includesSubentities ? entity.entityNumbersIncludingSubentities : [entity.entityNumber]
            conditions.append("t0.Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))")
        }
        if let predicateSQL { conditions.append("(\(predicateSQL))") }
        return conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
    }
}

/// Builds checked rows for a batch insert.
struct BatchRowTemplate {
    let entity: EntityDescription
    let columnCount: Int
    let defaults: RowValues
    /// Key → (column, attribute) for stored attributes: one lookup per value instead of three.
    private let columns: [String: (column: Int, attribute: AttributeDescription)]
    /// Required attributes' columns, checked on every row.
    private let required: [(column: Int, name: String)]

    init(entity: EntityDescription, columnCount: Int) {
        self.entity = entity
        self.columnCount = columnCount
        var row = RowValues(repeating: .null, count: columnCount)
        row[1] = entity.entityNumber.databaseValue
        row[2] = 1.databaseValue
        var columns: [String: (column: Int, attribute: AttributeDescription)] = [:]
        var required: [(column: Int, name: String)] = []
        for (slot, property) in entity.allProperties.enumerated() {
            guard let attribute = property as? AttributeDescription,
                  case .attribute(_, let column) = entity.storage[slot] else { continue }
            columns[attribute.name] = (column, attribute)
            if !attribute.isOptional { required.append((column, attribute.name)) }
            if let value = attribute.defaultValue, let stored = try? ValueConversion.storeValue(value, for: attribute) {
                row[column] = stored
            }
        }
        defaults = row
        self.columns = columns
        self.required = required
    }

    func row(from dictionary: [String: Any], index: Int) throws -> RowValues {
        var row = defaults
        for (key, value) in dictionary {
            guard let target = columns[key] else {
                if entity.slotByName[key] == nil { throw ObjectGraphError.unknownKey(entity: entity.name, key: key) }
                throw ObjectGraphError.invalidRequest("row \(index): '\(entity.name).\(key)' is not a stored attribute; a batch insert sets attributes only")
            }
            row[target.column] = try ValueConversion.storeValue(value, for: target.attribute)
        }
        try checkRequired(row, index: index)
        return row
    }

    func row(from object: ManagedObject, index: Int) throws -> RowValues {
        var row = defaults
        for (slot, change) in object.changes {
            if case .attribute(let value) = change, case .attribute(_, let column) = entity.storage[slot] {
                row[column] = value
            } else {
                throw ObjectGraphError.invalidRequest("row \(index): '\(entity.name).\(entity.allProperties[slot].name)' is not a stored attribute; a batch insert sets attributes only")
            }
        }
        try checkRequired(row, index: index)
        return row
    }

    private func checkRequired(_ row: RowValues, index: Int) throws {
        for (column, name) in required where row[column].isNull {
            throw ObjectGraphError.validationFailed([ValidationFailure(
                objectID: ManagedObjectID(temporaryFor: entity), entity: entity.name, key: name,
                rule: .missingRequiredValue, message: "row \(index): a value is required")])
        }
    }
}
