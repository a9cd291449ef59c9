import Foundation

/// Why an object-graph operation failed. Each case names the culprit: entity, key, object, or request.
public enum ObjectGraphError: Error, CustomStringConvertible, LocalizedError, @unchecked Sendable {
    // @unchecked Sendable: the associated values are value types or Sendable IDs; `Any` never appears.

    /// A key that the entity does not have.
    case unknownKey(entity: String, key: String)
    /// A value whose type does not fit the property.
    case typeMismatch(entity: String, key: String, expected: String, actual: String)
    /// A number that does not fit the attribute's integer width.
    case valueOutOfRange(entity: String, key: String, value: String)
    /// A read-only property was set.
    case readOnlyProperty(entity: String, key: String)
    /// A derived attribute was set directly; its value is computed at save from its derivation expression.
    case derivedAttribute(entity: String, key: String)
    /// A batch request would leave a derived attribute stale: its derivation cannot be recomputed in the
    /// store's SQL for the rows the request writes (the reason says why). Nothing was written.
    case derivedAttributeNotRecomputable(entity: String, key: String, reason: String)
    /// An object of another context, or of an entity the relationship does not accept.
    case invalidRelationshipTarget(entity: String, key: String, reason: String)
    /// An entity name the model does not have.
    case unknownEntity(String)
    /// The object's row is gone from the store (the fault cannot be filled).
    case objectNotFound(ManagedObjectID)
    /// One or more validation failures, reported together at save.
    case validationFailed([ValidationFailure])
    /// Optimistic locking conflicts that the merge policy refused.
    case mergeConflict([MergeConflict])
    /// Uniqueness-constraint conflicts the merge policy (``MergePolicy/error``) refused, each naming the
    /// entity, the keys and values, and the objects (Core Data's `NSConstraintConflict`s).
    case constraintConflict([ConstraintConflict])
    /// A context without a coordinator (or a coordinator without a store).
    case noPersistentStore
    /// The context's concurrency type cannot run the request.
    case unsupportedConcurrencyType(context: String, request: String)
    /// An insert (or batch insert) names an abstract entity, which has no objects of its own.
    case abstractEntity(name: String)
    /// A fetch's `fetchLimit`, `fetchOffset` or `fetchBatchSize` (`bound`) is negative.
    case negativeFetchBound(entity: String, bound: String, value: Int)
    /// `propertiesToFetch` or `propertiesToGroupBy` (`list`) holds an item that is neither a key name, a
    /// property description nor an expression description (`itemType` is its type).
    case unsupportedFetchItem(entity: String, list: String, itemType: String)
    /// A fetch's result type gives `returns` (`ManagedObjectID`, `[String: Any]`, `Int`), not the requested type.
    case fetchResultTypeMismatch(entity: String, returns: String, requested: String)
    /// A request of a type the context cannot execute (`requestType` is its type).
    case unsupportedRequest(requestType: String)
    /// An object ID of another model than the coordinator's.
    case foreignObjectID(ManagedObjectID)
    /// A batch update's key, or a batch insert row's key (`row` is its index), is a relationship, a transient
    /// or another property that is not a stored attribute: batch requests write stored attributes only.
    case notABatchAttribute(entity: String, key: String, row: Int?)
    /// A batch update's new value for the attribute cannot be written by the store's SQL (the reason says why).
    case unsupportedBatchValue(entity: String, key: String, reason: String)
    /// A batch update without `propertiesToUpdate`.
    case emptyBatchUpdate(entity: String)
    /// A batch delete with neither a fetch request nor object IDs.
    case batchDeleteWithoutSelection
    /// A key that names no stored Transformable attribute, where only one is accepted.
    case notATransformableAttribute(entity: String, key: String)
    /// A fetched property read from stored rows (it is evaluated on objects only).
    case fetchedPropertyOnStoredRows(entity: String, key: String)
    /// A store option name the library does not read: an option an app relies on is never ignored silently.
    case unknownStoreOption(name: String)
    /// A store option (or SQLite pragma) given a value it does not take: `value` describes what was given,
    /// `expected` what is taken.
    case invalidStoreOption(name: String, value: String, expected: String)
    /// A store type name that is not supported (`operation` nil), or a store type that an operation does not
    /// work on (`operation` names it, such as "replacing store files").
    case unsupportedStoreType(name: String, operation: String?)
    /// A store metadata key the library keeps was given another value.
    case libraryMetadataKey(String)
    /// Store metadata holding a value a property list cannot (the reason is the serializer's).
    case invalidStoreMetadata(reason: String)
    /// A configuration name the model does not have (a model here has only the default one).
    case unknownConfiguration(String)
    /// An SQLite or XML store added without a file URL.
    case missingStoreURL
    /// The store at `path` was opened with another model than the coordinator's.
    case storeModelMismatch(path: String)
    /// A store handed to the coordinator (to migrate or copy) that is not one of its stores.
    case storeNotInCoordinator(path: String)
    /// A copy of the store at `source` into `destination` was refused before anything was written: the
    /// destination exists already or has given out keys, or the source keeps values the copy cannot carry.
    case storeCopyRefused(source: String, destination: String, reason: String)
    /// A typed fetch (`FetchRequest<Person>`) of an entity whose objects (or a sub-entity's) are of
    /// another class, such as an entity whose model file names a class that was not found.
    case resultTypeMismatch(entity: String, objectClass: String, resultType: String)
    /// The operation was cancelled.
    case cancelled
    /// The store refused the operation.
    case store(StoreError)
    /// A Transformable attribute names a value transformer that is not registered
    /// (``ValueTransformer/setValueTransformer(_:forName:)``).
    case unknownValueTransformer(entity: String, key: String, name: String)
    /// A Transformable attribute's stored bytes of one object that its transformer cannot turn back into a
    /// value (damaged or hostile bytes, or a value of another class than the model names).
    case undecodableValue(entity: String, key: String, object: ManagedObjectID, reason: String)
    /// A composite attribute's value has a key that names none of its elements (`element` is the key's path
    /// below the attribute, `inner.x` in a nested composite).
    case unknownCompositeElement(entity: String, key: String, element: String)
    /// A composite attribute's value lacks a non-optional element (`element` is its path below the attribute).
    case missingCompositeElement(entity: String, key: String, element: String)
    /// A composite attribute's value holds a value of the wrong type for one element.
    case compositeElementTypeMismatch(entity: String, key: String, element: String, expected: String, actual: String)

    /// The message naming the culprit.
    public var description: String {
        switch self {
        case .unknownKey(let entity, let key): return "Entity '\(entity)' has no property '\(key)'."
        case .typeMismatch(let entity, let key, let expected, let actual):
            return "'\(entity).\(key)' takes \(expected), not \(actual)."
        case .valueOutOfRange(let entity, let key, let value):
            return "\(value) does not fit '\(entity).\(key)'."
        case .readOnlyProperty(let entity, let key): return "'\(entity).\(key)' is read-only."
        case .derivedAttribute(let entity, let key):
            return "'\(entity).\(key)' is a derived attribute: its value is computed at save and cannot be set."
        case .derivedAttributeNotRecomputable(let entity, let key, let reason):
            return "Derived attribute '\(entity).\(key)' cannot be recomputed for this batch request: \(reason)."
        case .invalidRelationshipTarget(let entity, let key, let reason):
            return "'\(entity).\(key)': \(reason)."
        case .unknownEntity(let name): return "The model has no entity named '\(name)'."
        case .objectNotFound(let id): return "The object \(id) no longer exists in the store."
        case .validationFailed(let failures):
            return "Validation failed: " + failures.map(\.description).joined(separator: "; ")
        case .mergeConflict(let conflicts):
            return "Optimistic locking failed for \(conflicts.count) object(s): "
                + conflicts.map(\.description).joined(separator: "; ")
        case .constraintConflict(let conflicts):
            return "Uniqueness constraint conflict: " + conflicts.map(\.description).joined(separator: "; ")
        case .noPersistentStore: return "The context has no persistent store to work with."
        case .unsupportedConcurrencyType(let context, let request):
            return "\(context) cannot support \(request)."
        case .abstractEntity(let name):
            return "Entity '\(name)' is abstract; insert one of its sub-entities."
        case .negativeFetchBound(let entity, let bound, let value):
            return "A fetch of '\(entity)' has a negative \(bound) (\(value))."
        case .unsupportedFetchItem(let entity, let list, let itemType):
            return "The \(list) of a fetch of '\(entity)' holds a \(itemType); use key names, property descriptions or "
                + "ExpressionDescriptions."
        case .fetchResultTypeMismatch(let entity, let returns, let requested):
            return "A fetch of '\(entity)' returns \(returns), not \(requested)."
        case .unsupportedRequest(let requestType): return "\(requestType) cannot be executed by a context."
        case .foreignObjectID(let id): return "\(id) belongs to another model than the coordinator's."
        case .notABatchAttribute(let entity, let key, let row):
            guard let row else {
                return "'\(entity).\(key)' is not a stored attribute; a batch update changes stored attributes only."
            }
            return "Row \(row): '\(entity).\(key)' is not a stored attribute; a batch insert sets attributes only."
        case .unsupportedBatchValue(let entity, let key, let reason):
            return "The batch update's new value of '\(entity).\(key)' cannot be written: \(reason)."
        case .emptyBatchUpdate(let entity): return "A batch update of '\(entity)' needs propertiesToUpdate."
        case .batchDeleteWithoutSelection: return "A batch delete needs a fetch request or object IDs."
        case .notATransformableAttribute(let entity, let key):
            return "'\(entity).\(key)' is not a stored Transformable attribute."
        case .fetchedPropertyOnStoredRows(let entity, let key):
            return "The fetched property '\(entity).\(key)' cannot be evaluated on stored rows; fetch the objects first."
        case .unknownStoreOption(let name): return "The store option '\(name)' is not supported."
        case .invalidStoreOption(let name, let value, let expected):
            return "The store option '\(name)' takes \(expected), not \(value)."
        case .unsupportedStoreType(let name, let operation):
            guard let operation else {
                return "The store type '\(name)' is not supported (\(SQLiteStoreType), \(InMemoryStoreType) or \(XMLStoreType))."
            }
            return "\(operation) works on \(SQLiteStoreType) stores only, not '\(name)'."
        case .libraryMetadataKey(let key): return "The store metadata key '\(key)' is the library's: it cannot be changed."
        case .invalidStoreMetadata(let reason): return "The store metadata holds a value a property list cannot: \(reason)."
        case .unknownConfiguration(let name): return "The model has no configuration '\(name)' (only the default one)."
        case .missingStoreURL: return "An SQLite or XML store needs a file URL."
        case .storeModelMismatch(let path):
            return "The store at \(path) was opened with another model than the coordinator's."
        case .storeNotInCoordinator(let path): return "The store at \(path) is not one of this coordinator's."
        case .storeCopyRefused(let source, let destination, let reason):
            return "\(source) was not copied into \(destination): \(reason)."

        case .resultTypeMismatch(let entity, let objectClass, let resultType):
            return "Objects of entity '\(entity)' are \(objectClass), not \(resultType)."
        case .cancelled: return "The operation was cancelled."
        case .store(let error): return error.description
        case .unknownValueTransformer(let entity, let key, let name):
            return "'\(entity).\(key)' names the value transformer '\(name)', which is not registered."
        case .unknownCompositeElement(let entity, let key, let element):
            return "Composite attribute '\(entity).\(key)' has no element '\(element)'."
        case .missingCompositeElement(let entity, let key, let element):
            return "Composite attribute '\(entity).\(key)' needs a value for its element '\(element)'."
        case .compositeElementTypeMismatch(let entity, let key, let element, let expected, let actual):
            return "Element '\(element)' of composite attribute '\(entity).\(key)' takes \(expected), not \(actual)."
        case .undecodableValue(let entity, let key, let object, let reason):
            return "The value of '\(entity).\(key)' of \(object) cannot be read: \(reason)."
        }
    }

    /// The same text as ``description``, for `LocalizedError`.
    public var errorDescription: String? { description }
}

/// One failed validation rule.
public struct ValidationFailure: @unchecked Sendable, CustomStringConvertible, Equatable {
    // @unchecked Sendable: `underlyingError` is an error a validation hook threw, handed to the caller
    // with the save's failure and never mutated by the library.
    /// Which rule failed.
    public enum Rule: String, Sendable {
        /// `missingRequiredValue`: a required attribute or to-one is nil. `tooSmall`/`tooLarge`: a number
        /// below the attribute's minimum or above its maximum. `tooShort`/`tooLong`: a string of fewer or more
        /// characters than allowed. `patternMismatch`: a string the attribute's regular expression does not
        /// match. `dateTooEarly`/`dateTooLate`: a date outside the attribute's range. `tooFewObjects`/
        /// `tooManyObjects`: a to-many holding fewer or more objects than its counts allow. `deleteDenied`: a
        /// `deny` delete rule with related objects left. `uniquenessViolation`: another object has the same
        /// values for a uniqueness constraint. `custom`: a validation hook threw (see ``underlyingError``), or
        /// the library could not check the object.
        case missingRequiredValue, tooSmall, tooLarge, tooShort, tooLong, patternMismatch, dateTooEarly,
             dateTooLate, tooFewObjects, tooManyObjects, deleteDenied, uniquenessViolation, custom
    }
    /// The object that failed (a temporary ID for a batch insert's row).
    public var objectID: ManagedObjectID
    /// Its entity's name.
    public var entity: String
    /// The property that failed; "" for the object as a whole.
    public var key: String
    /// The rule that failed.
    public var rule: Rule
    /// What is wrong, in words.
    public var message: String
    /// The error a subclass's validation hook (`validateForInsert`, `validateValue(_:forKey:)`…) threw,
    /// as it was thrown (rule ``Rule/custom``); nil for the model's own rules.
    public var underlyingError: (any Error)?

    /// A failure of one of the model's rules.
    public init(objectID: ManagedObjectID, entity: String, key: String, rule: Rule, message: String) {
        self.objectID = objectID
        self.entity = entity
        self.key = key
        self.rule = rule
        self.message = message
    }

    /// A failure a validation hook of `object` threw, for `key` ("" for the object as a whole).
    init(thrownBy object: ManagedObject, key: String, error: any Error) {
        self.init(objectID: object.objectID, entity: object.entity.name, key: key, rule: .custom,
                  message: String(describing: error))
        underlyingError = error
    }

    /// `Entity.key: message`.
    public var description: String { "\(entity).\(key): \(message)" }

    /// Equal when they name the same object, key, rule and message (the underlying errors are not compared).
    public static func == (lhs: ValidationFailure, rhs: ValidationFailure) -> Bool {
        lhs.objectID == rhs.objectID && lhs.entity == rhs.entity && lhs.key == rhs.key && lhs.rule == rhs.rule
            && lhs.message == rhs.message
    }
}

/// An optimistic locking conflict: the object changed in the store since this context read it.
public struct MergeConflict: Sendable, CustomStringConvertible {
    /// The object in conflict.
    public var objectID: ManagedObjectID
    /// The row version this context read.
    public var expectedVersion: Int64
    /// The row version in the store now (0 when the row was deleted).
    public var storeVersion: Int64
    /// The values in the store now, by key (empty when deleted).
    public var storeValues: [String: String]
    /// This context's values, by key.
    public var objectValues: [String: String]

    /// The object and what happened to its row: deleted, or the two versions.
    public var description: String {
        storeVersion == 0
            ? "\(objectID) was deleted in the store"
            : "\(objectID) is at version \(storeVersion) in the store, this context read \(expectedVersion)"
    }
}
