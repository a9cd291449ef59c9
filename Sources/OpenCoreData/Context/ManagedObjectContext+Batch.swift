import Foundation

/// Executing batch requests: they go straight to the store and do not touch the context's objects;
/// merge their object IDs into live contexts with `mergeChanges(fromRemoteContextSave:into:)`.
extension BatchUpdateRequest: ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let model = coordinator.managedObjectModel
        guard let entity = model.entitiesByName[entityName] else { throw ObjectGraphError.unknownEntity(entityName) }
        guard !propertiesToUpdate.isEmpty else {
            throw ObjectGraphError.emptyBatchUpdate(entity: entityName)
        }
        // Once per request: the store is held through the boundary.
        let store: any StoreBackend = try coordinator.primaryBackend()
        // Everything is checked before any row changes.
        var assignments: [(column: String, sql: String, arguments: [StoreValue])] = []
        for key in propertiesToUpdate.keys.sorted() {
            guard let property = entity.propertiesByName[key] else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
            }
            guard let attribute = property as? AttributeDescription, !attribute.isTransient,
                  case .attribute(let column, _) = entity.storage[entity.slotByName[key]!] else {
                throw ObjectGraphError.notABatchAttribute(entity: entity.name, key: key, row: nil)
            }
            var (sql, arguments) = try BatchValueCompiler.compile(propertiesToUpdate[key] as Any, for: attribute,
                                                                  entity: entity, model: model, dialect: store.dialect)
            if store.externalStorage != nil, ExternalBinaryStorage.usesExternalStorage(attribute) {
                // Kept in external binary storage form: a new value is written inline with its marker; an
                // expression would compute over the stored form, so only constants are taken.
                guard sql == "?", arguments.count == 1 else {
                    throw ObjectGraphError.unsupportedBatchValue(
                        entity: entity.name, key: key,
                        reason: "it allows external storage; a batch update sets it to a constant value only")
                }
                arguments = [ExternalBinaryStorage.inlineForm(arguments[0])]
            }
            assignments.append((column, sql, arguments))
        }
        // Derived attributes that read what changes are rewritten in the same transaction (BatchDerivations).
        assignments += try BatchDerivations.assignments(entity: entity, includesSubentities: includesSubentities,
                                                        updates: propertiesToUpdate, model: model, dialect: store.dialect)
        let related = try BatchDerivations.relatedStatements(entity: entity, updatedKeys: Set(propertiesToUpdate.keys),
                                                             model: model, dialect: store.dialect)
        let returningIDs = resultType == .objectIDs
        func update(_ selection: BatchSelection) throws -> (count: Int, ids: [ManagedObjectID]) {
            do {
                return try store.batchUpdate(entity: entity, assignments: assignments, selection: selection,
                                             returningIDs: returningIDs, followUps: related)
            } catch let error as StoreError {
                throw BatchUniquenessViolation.failure(for: error, entity: entity, model: model) ?? error
            }
        }
        let outcome: (count: Int, ids: [ManagedObjectID])
        if let residual = try ResidualQuery.selectionQuery(store: store, model: model, entity: entity, predicate: predicate,
                                                           includesSubentities: includesSubentities) {
            // The store's SQL could not say the predicate: the rows are selected in the app, then updated by key,
            // in one snapshot and transaction, so a row another session changes in between is not updated as
            // it was selected (the store selects again on a new snapshot).
            outcome = try store.inOneSnapshot(writing: true, request: "a batch update of '\(entity.name)'") {
                let keys = try ResidualKeySelection(reading: residual)
                ResidualSelectionHook.run(forStore: store.identifier)
                return try update(BatchSelection(entity: entity, keys: keys))
            }
        } else {
            let compiled = try PredicateSQLCompiler.compile(model: model, entity: entity, predicate: predicate, sortDescriptors: [],
                                                            dialect: store.dialect)
            outcome = try update(BatchSelection(entity: entity, includesSubentities: includesSubentities, compiled: compiled))
        }
        coordinator.rowCache.removeAll()
        return BatchResult(resultType: resultType, count: outcome.count, objectIDs: resultType == .objectIDs ? outcome.ids : [])
    }
}

extension BatchDeleteRequest: ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else { throw ObjectGraphError.noPersistentStore }
        let model = coordinator.managedObjectModel
        // Once per request: the store is held through the boundary.
        let store: any StoreBackend = try coordinator.primaryBackend()
        let derivations = try BatchDerivations.statementsAfterDelete(model: model, dialect: store.dialect)
        let outcome: (count: Int, deleted: [ManagedObjectID], updated: [ManagedObjectID])
        if let ids = objectIDs {
            guard let first = ids.first else { return BatchResult(resultType: resultType, count: 0, objectIDs: []) }
            outcome = try store.batchDelete(initial: ids, entity: first.entity, selection: .none, needsIDs: true,
                                            followUps: derivations)
        } else if let fetchRequest {
            guard let entity = model.entitiesByName[fetchRequest.entityName] else {
                throw ObjectGraphError.unknownEntity(fetchRequest.entityName)
            }
            if let residual = try ResidualQuery.selectionQuery(store: store, model: model, entity: entity,
                                                               predicate: fetchRequest.predicate,
                                                               includesSubentities: fetchRequest.includesSubentities) {
                // The store's SQL could not say the predicate: the rows are selected in the app, then deleted by
                // key, in one snapshot and transaction, so a row another session changes in between is not
                // deleted as it was selected (the store selects again on a new snapshot).
                outcome = try store.inOneSnapshot(writing: true, request: "a batch delete of '\(entity.name)'") {
                    let selected = try residual.readIDs()
                    ResidualSelectionHook.run(forStore: store.identifier)
                    guard !selected.isEmpty else { return (0, [], []) }
                    return try store.batchDelete(initial: selected, entity: entity, selection: .none, needsIDs: true,
                                                 followUps: derivations)
                }
            } else {
                let compiled = try PredicateSQLCompiler.compile(model: model, entity: entity, predicate: fetchRequest.predicate,
                                                                sortDescriptors: [], dialect: store.dialect)
                let selection = BatchSelection(entity: entity, includesSubentities: fetchRequest.includesSubentities,
                                               compiled: compiled)
                outcome = try store.batchDelete(initial: nil, entity: entity, selection: selection,
                                                needsIDs: resultType == .objectIDs, followUps: derivations)
            }
        } else {
            throw ObjectGraphError.batchDeleteWithoutSelection
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
            throw ObjectGraphError.abstractEntity(name: entityName)
        }
        // Once per request: the store is held through the boundary.
        let store: any StoreBackend = try coordinator.primaryBackend()
        guard let table = store.schema.table(named: entity.tableName) else { throw ObjectGraphError.unknownEntity(entityName) }
        let template = BatchRowTemplate(entity: entity, columnCount: table.columns.count)
        // New rows get their derived attributes computed here, as a save would (BatchDerivations).
        let derived = try BatchDerivations.derivedAttributes(of: entity)
        func complete(_ row: [String: Any]) throws -> [String: Any] {
            try BatchDerivations.completing(row, entity: entity, derived: derived)
        }
        let outcome: (count: Int, ids: [ManagedObjectID])
        do {
            if let objects = objectsToInsert {
                // Rows are made and written one at a time inside the transaction: a bad row throws and
                // the transaction rolls back, so nothing is inserted, without holding every row at once.
                // Rows with values in external binary storage form are encoded as rows (SQLiteStore+Batch).
                if template.bindsDirectly && store.bindsValuesDirectly
                    && store.externalStorage?.columns(forTable: entity.tableName) == nil {
                    // Values go from the dictionaries straight to the statement: no row in between.
                    outcome = try store.batchInsert(entity: entity, count: objects.count,
                                                    returningIDs: resultType == .objectIDs) { index, key, insert in
                        try template.bind(complete(objects[index]), key: key, to: insert, index: index)
                    }
                } else {
                    outcome = try store.batchInsert(entity: entity, count: objects.count,
                                                    returningIDs: resultType == .objectIDs) {
                        try template.fill(&$1, from: complete(objects[$0]), index: $0)
                    }
                }
            } else {
                var rows: [RowValues] = []
                if let handler = dictionaryHandler {
                    var index = 0
                    while true {
                        var dictionary: [String: Any] = [:]
                        if handler(&dictionary) { break }
                        rows.append(try template.row(from: complete(dictionary), index: index))
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
                        try BatchDerivations.complete(object, derived: derived)
                        rows.append(try template.row(from: object, index: index))
                        scratch.reset()
                        index += 1
                    }
                }
                outcome = try store.batchInsert(entity: entity, count: rows.count, returningIDs: resultType == .objectIDs) {
                    $1 = rows[$0]
                }
            }
        } catch let error as StoreError {
            if let failure = BatchUniquenessViolation.failure(for: error, entity: entity, model: coordinator.managedObjectModel) {
                throw failure
            }
            throw error
        }
        return BatchResult(resultType: resultType, count: outcome.count, objectIDs: resultType == .objectIDs ? outcome.ids : [])
    }
}

/// Builds checked rows for a batch insert. Everything that depends only on the entity (columns, converters,
/// defaults, required attributes) is resolved once per request, so a row costs a lookup and a conversion
/// per value.
struct BatchRowTemplate {
    let entity: EntityDescription
    let columnCount: Int
    let defaults: RowValues
    /// Stored attributes, in slot order.
    private let targets: [Target]
    /// Key → index in `targets`, for entities too wide for a linear search.
    private let targetIndexByName: [String: Int]
    /// Required attributes' columns, checked on every row.
    private let required: [(column: Int, name: String)]
    /// For direct binding (at most 64 stored attributes): bit i stands for `targets[i]`.
    /// Required attributes, and those of them without a default.
    private let requiredMask: UInt64
    private let requiredWithoutDefaultMask: UInt64
    /// Every target's bit.
    private let allTargetsMask: UInt64
    /// `Z_ENT` of the new rows.
    private let entityNumber: Int64

    /// Whether ``bind(_:key:to:index:)`` can be used (the masks have a bit for every attribute).
    var bindsDirectly: Bool { targets.count <= 64 }

    /// A stored attribute: its column, and the conversion its type needs.
    private struct Target {
        let name: String
        let nameLength: Int
        let column: Int
        let attribute: AttributeDescription
        let conversion: Conversion
    }

    /// The attribute types whose usual Swift type converts without the general conversion's casts.
    private enum Conversion {
        case string, date, boolean, double, integer64, general
    }

    /// Up to this many attributes, a key is found by comparing names (short strings compare faster than
    /// they hash).
    private static let linearSearchLimit = 8

    init(entity: EntityDescription, columnCount: Int) {
        self.entity = entity
        self.columnCount = columnCount
        entityNumber = Int64(entity.entityNumber)
        var row = RowValues(repeating: .null, count: columnCount)
        row[1] = entity.entityNumber.storeValue
        row[2] = 1.storeValue
        var targets: [Target] = []
        var required: [(column: Int, name: String)] = []
        for (slot, property) in entity.allProperties.enumerated() {
            guard let attribute = property as? AttributeDescription,
                  case .attribute(_, let column) = entity.storage[slot] else { continue }
            let conversion: Conversion
            switch attribute.attributeType {
            case .string: conversion = .string
            case .date: conversion = .date
            case .boolean: conversion = .boolean
            case .double: conversion = .double
            case .integer64: conversion = .integer64
            default: conversion = .general
            }
            targets.append(Target(name: attribute.name, nameLength: attribute.name.utf8.count, column: column, attribute: attribute, conversion: conversion))
            if !attribute.isOptional { required.append((column, attribute.name)) }
            if let value = attribute.defaultValue, let stored = try? ValueConversion.storeValue(value, for: attribute) {
                row[column] = stored
            }
        }
        defaults = row
        var requiredMask: UInt64 = 0, requiredWithoutDefaultMask: UInt64 = 0
        for (index, target) in targets.enumerated().prefix(64) where !target.attribute.isOptional {
            requiredMask |= 1 << UInt64(index)
            if row[target.column].isNull { requiredWithoutDefaultMask |= 1 << UInt64(index) }
        }
        self.requiredMask = requiredMask
        self.requiredWithoutDefaultMask = requiredWithoutDefaultMask
        allTargetsMask = targets.count >= 64 ? .max : (1 << UInt64(targets.count)) - 1
        self.targets = targets
        targetIndexByName = Dictionary(targets.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.required = required
    }

    private func targetIndex(for key: String) -> Int? {
        guard targets.count <= Self.linearSearchLimit else { return targetIndexByName[key] }
        // Lengths first: most names differ in length, which is cheaper to see than by comparing them.
        let length = key.utf8.count
        for index in targets.indices where targets[index].nameLength == length && targets[index].name == key { return index }
        return nil
    }

    /// A new row from a dictionary.
    func row(from dictionary: [String: Any], index: Int) throws -> RowValues {
        var row = defaults
        try fill(&row, from: dictionary, index: index)
        return row
    }

    /// Overwrites `row` (of the table's width) with the defaults and a dictionary's values.
    func fill(_ row: inout RowValues, from dictionary: [String: Any], index: Int) throws {
        for column in 1..<columnCount { row[column] = defaults[column] }
        for (key, value) in dictionary {
            guard let found = targetIndex(for: key) else {
                if entity.slotByName[key] == nil { throw ObjectGraphError.unknownKey(entity: entity.name, key: key) }
                throw ObjectGraphError.notABatchAttribute(entity: entity.name, key: key, row: index)
            }
            let target = targets[found]
            row[target.column] = try convert(value, for: target)
        }
        try checkRequired(row, index: index)
    }

    /// The row value for one value: the attribute type's usual Swift type directly, anything else through
    /// the general conversion (which also refuses what does not fit).
    @inline(__always)
    private func convert(_ value: Any, for target: Target) throws -> StoreValue {
        if let stored = Self.withUsualValue(value, target.conversion, integer: { $0.storeValue },
                                            double: { $0.storeValue }, text: { $0.storeValue }) {
            return stored
        }
        // Anything else (other types, optionals, NSNull, bad values) through the general conversion, which
        // also refuses what does not fit and names it.
        return try ValueConversion.storeValue(value, for: target.attribute)
    }

    /// When `value` is exactly the usual Swift type for `conversion` and fits as it is (a String without
    /// NUL, a finite date, a double that is not NaN), its stored form handed to `integer`, `double` or
    /// `text`; nil otherwise, for the general conversion to decide. Types are compared by metadata, several
    /// times cheaper than `as?`.
    @inline(__always)
    private static func withUsualValue<Result>(_ value: Any, _ conversion: Conversion, integer: (Int64) throws -> Result,
                                               double: (Double) throws -> Result, text: (String) throws -> Result) rethrows -> Result? {
        switch conversion {
        case .string:
            if let v = exactly(value, String.self), !ValueConversion.containsNUL(v) { return try text(v) }
        case .date:
            if let v = exactly(value, Date.self), v.timeIntervalSinceReferenceDate.isFinite { return try double(v.timeIntervalSinceReferenceDate) }
        case .boolean:
            if let v = exactly(value, Bool.self) { return try integer(v ? 1 : 0) }
        case .double:
            if let v = exactly(value, Double.self), !v.isNaN { return try double(v) }
        case .integer64:
            if let v = exactly(value, Int64.self) { return try integer(v) }
            if let v = exactly(value, Int.self) { return try integer(Int64(v)) }
        case .general:
            break
        }
        return nil
    }

    /// Binds one dictionary's row straight to the table's INSERT: the key, `Z_ENT`, `Z_OPT`, every stored
    /// attribute (its value, else its default), with the same checks as ``fill(_:from:index:)``. Columns
    /// that are not this entity's stored attributes stay bound to NULL. Only when ``bindsDirectly``.
    func bind(_ dictionary: [String: Any], key: Int64, to insert: BoundWrite, index: Int) throws {
        try insert.bind(key, at: 1)
        try insert.bind(entityNumber, at: 2)
        try insert.bind(Int64(1), at: 3)
        var assigned: UInt64 = 0, assignedNull: UInt64 = 0
        for (key, value) in dictionary {
            guard let found = targetIndex(for: key) else {
                if entity.slotByName[key] == nil { throw ObjectGraphError.unknownKey(entity: entity.name, key: key) }
                throw ObjectGraphError.notABatchAttribute(entity: entity.name, key: key, row: index)
            }
            let bit: UInt64 = 1 << UInt64(found)
            assigned |= bit
            let parameter = Int32(targets[found].column + 1)
            // The usual Swift types straight to SQLite; anything else through the general conversion.
            if try Self.withUsualValue(value, targets[found].conversion, integer: { try insert.bind($0, at: parameter) },
                                       double: { try insert.bind($0, at: parameter) },
                                       text: { try insert.bind($0, at: parameter) }) == nil {
                let stored = try ValueConversion.storeValue(value, for: targets[found].attribute)
                if stored.isNull { assignedNull |= bit }
                try insert.bind(stored, at: parameter)
            }
        }
        // Required: set to a value, or left out with a default.
        let missing = requiredMask & (assignedNull | (~assigned & requiredWithoutDefaultMask))
        if missing != 0 {
            throw missingRequired(targets[missing.trailingZeroBitCount].name, index: index)
        }
        var unassigned = allTargetsMask & ~assigned
        while unassigned != 0 {
            let target = targets[unassigned.trailingZeroBitCount]
            try insert.bind(defaults[target.column], at: Int32(target.column + 1))
            unassigned &= unassigned - 1
        }
    }

    /// The value inside `value` when its dynamic type is exactly `T` (no bridging, no optionals): a
    /// comparison of type metadata, several times cheaper than `as?`, which first searches for a cast.
    @inline(__always)
    static func exactly<T>(_ value: Any, _ type: T.Type) -> T? {
        func project<Actual>(_ actual: Actual) -> T? {
            guard Actual.self == T.self else { return nil }
            // Safe: `Actual` is `T`, checked just above; the cast only tells the compiler (`batch-insert`).
            return unsafeBitCast(actual, to: T.self)
        }
        return _openExistential(value, do: project)
    }

    func row(from object: ManagedObject, index: Int) throws -> RowValues {
        var row = defaults
        for (slot, change) in object.changes {
            if case .attribute(let value) = change, case .attribute(_, let column) = entity.storage[slot] {
                row[column] = value
            } else {
                throw ObjectGraphError.notABatchAttribute(entity: entity.name, key: entity.allProperties[slot].name, row: index)
            }
        }
        try checkRequired(row, index: index)
        return row
    }

    private func checkRequired(_ row: RowValues, index: Int) throws {
        for (column, name) in required where row[column].isNull {
            throw missingRequired(name, index: index)
        }
    }

    private func missingRequired(_ name: String, index: Int) -> ObjectGraphError {
        .validationFailed([ValidationFailure(
            objectID: ManagedObjectID(temporaryFor: entity), entity: entity.name, key: name,
            rule: .missingRequiredValue, message: "row \(index): a value is required")])
    }
}
