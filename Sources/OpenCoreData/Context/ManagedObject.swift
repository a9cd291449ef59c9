import Foundation
import OrderedCollections

/// The value a property has in memory, before it is saved.
enum SlotValue {
    case attribute(StoreValue)
    case toOne(ManagedObjectID?)
    case toMany(OrderedSet<ManagedObjectID>)
}

/// An object of the graph: an instance of an entity, owned by one context and used on its queue only.
///
/// Read and write values by key, or subclass with typed properties (see ``Managed``):
///
/// ```swift
/// final class Item: ManagedObject {
///     @Managed("name") var name: String?
///     @Managed("list") var list: TodoList?
/// }
/// let item = try context.insertNewObject(forEntityName: "Item") as! Item
/// item.name = "Buy milk"
/// try item.setValue(Date(), forKey: "createdAt")
/// ```
///
/// Objects fetched from the store may be *faults*: their values are read from the store (a batch at a
/// time when they came from one fetch) the first time a value is asked for.
///
/// As in Core Data, set an object up in ``awakeFromFetch()`` or ``awakeFromInsert()``, not in an initializer
/// or `deinit`: an object of a subclass that opts in (``allowsInstanceReuse``) that the context lets go of,
/// and that nobody holds strongly any more, may be given another row of its entity instead of being freed. A
/// results controller moving through a long list does this with each batch.
open class ManagedObject: KeyValueCoding, Hashable, CustomStringConvertible {
    /// The object's entity (its ID's: one reference kept, not two).
    public var entity: EntityDescription { objectID.entity }
    // Unchecked (every stored field below): an object is used by one thread at a time (its context's queue,
    // or the thread that makes it before it is registered), and no access to a field stays open while code
    // that could reach the same field runs (awake hooks and observers run between accesses). Skips a
    // `swift_beginAccess`, about 80 instructions, per access, several per object fetched (`load-batch-by-id`:
    // 122.6 M → 109.5 M instructions with the context's, results' and model's fields).
    /// The object's identity. Temporary until the object is first saved.
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// Declared right after `objectID` so the byte lands in the ID's tail padding: with the 16-byte row
    /// reference, the one-reference `SlotChanges` and rare state in `extras`, an object is 88 bytes, a
    /// 96-byte malloc chunk (`ManagedObjectSizeTests`).
    @exclusivity(unchecked) var flags: Flags = []
    /// The context that owns the object (nil once the object is deleted and saved, the context reset, or
    /// the context gone).
    public internal(set) var managedObjectContext: ManagedObjectContext? {
        get { contextReference?.context }
        set { contextReference = newValue?.reference }
    }
    /// Shared by every object of a context: a plain reference instead of a weak one per object (weak
    /// references give the context a side table and make every retain of it slow).
    @exclusivity(unchecked) var contextReference: ContextReference?

    /// The committed row; nil while a fault, and for a new object.
    @exclusivity(unchecked) var row: RowValues?
    /// Values changed in memory since the row was read, by slot.
    @exclusivity(unchecked) var changes = SlotChanges()
    /// What few objects need (to-many contents, transient values, a fault batch), made on first use: a
    /// fetched object is smaller and quicker to make without three fields it mostly never sets.
    @exclusivity(unchecked) private var extras: ManagedObjectExtras?

    /// To-many contents as last read from the store, by slot.
    var committedToMany: [Int: OrderedSet<ManagedObjectID>] {
        get { extras?.committedToMany ?? [:] }
        set {
            if let extras { extras.committedToMany = newValue } else if !newValue.isEmpty { madeExtras().committedToMany = newValue }
        }
        _modify { yield &madeExtras().committedToMany }
    }

    /// Transient values, by slot.
    var transientValues: [Int: Any] {
        get { extras?.transientValues ?? [:] }
        set {
            if let extras { extras.transientValues = newValue } else if !newValue.isEmpty { madeExtras().transientValues = newValue }
        }
        _modify { yield &madeExtras().transientValues }
    }

    /// The batch this fault belongs to, so firing it loads its neighbours too.
    var faultBatch: FaultBatch? {
        get { extras?.faultBatch }
        set {
            if let extras { extras.faultBatch = newValue } else if newValue != nil { madeExtras().faultBatch = newValue }
        }
    }

    /// Fetched properties' last results (see ``FetchedPropertyDescription``).
    var fetchedResults: [String: [ManagedObjectID]] {
        get { extras?.fetchedResults ?? [:] }
        set {
            if let extras { extras.fetchedResults = newValue } else if !newValue.isEmpty { madeExtras().fetchedResults = newValue }
        }
    }

    /// Whether the object holds anything beyond its row and changes (to-many contents, transient values, a
    /// fault batch).
    var hasExtras: Bool { extras != nil }

    private func madeExtras() -> ManagedObjectExtras {
        if let extras { return extras }
        let made = ManagedObjectExtras()
        extras = made
        return made
    }

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let inserted = Flags(rawValue: 1)
        static let deleted = Flags(rawValue: 2)
        static let registered = Flags(rawValue: 4)
        /// Write without the version check on the next save (overwrite merge policy).
        static let forceWrite = Flags(rawValue: 8)
        /// Listed in the context's insertion order (listed once, even if deleted and inserted again).
        static let listedForInsert = Flags(rawValue: 16)
    }

    /// Creates an object for the context (use ``ManagedObjectContext/insertNewObject(forEntityName:)`` or
    /// ``init(entity:insertInto:)``).
    public required init(entity: EntityDescription, id: ManagedObjectID) {
        // The entity is the ID's; the parameter stays for subclasses' required initializer. It is taken as
        // Swift takes initializer arguments by default (owned): lent (`__shared`) it saved a retain and a
        // release per object, but an override spelled the default way then released the entity once too
        // often (SubclassInitializerTests).
        assert(entity === id.entity, "ManagedObject(entity:id:) with an ID of another entity")
        self.objectID = id
    }

    /// Creates and inserts a new object, as `NSManagedObject(entity:insertInto:)` does.
    public convenience init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        self.init(entity: entity, id: ManagedObjectID(temporaryFor: entity))
        context?.insert(self)
    }

    /// The entity name a typed subclass uses by default (`FetchRequest<Item>()`): the entity a model binds
    /// the class to (see ``ManagedObjectClassRegistry``), else its Swift type name.
    open class var entityName: String { ManagedObjectClassRegistry.boundEntityName(of: self) ?? String(describing: self) }

    /// Whether the context may give an instance of this class that it lets go of, and that nobody holds
    /// strongly any more, another row of its entity instead of freeing it (a results controller moving
    /// through a long list does this with each batch, saving an allocation and a free per object). The
    /// instance then looks new to its class: its key, flags and row change, and ``awakeFromFetch()`` runs
    /// again for the new row; nothing else is reset.
    ///
    /// False unless a subclass overrides it to opt in (its subclasses inherit the answer). Opt in only for a
    /// class whose instances keep no state of their own (stored properties other than `@Managed` ones) but
    /// what `awakeFromFetch()` sets anew for each row, and whose instances the app reaches only through strong
    /// references: the library cannot see a weak or unowned reference, which would see the instance become
    /// another row's object.
    open class var allowsInstanceReuse: Bool { false }

    // MARK: State

    /// Whether the object's values have not been read from the store yet.
    public var isFault: Bool { row == nil && !flags.contains(.inserted) && !flags.contains(.deleted) }
    /// Whether the object is new in its context and not yet saved.
    public var isInserted: Bool { flags.contains(.inserted) }
    /// Whether the object is deleted in its context and not yet saved.
    public var isDeleted: Bool { flags.contains(.deleted) }
    /// Whether the object has unsaved changes to its values.
    public var isUpdated: Bool { !changes.isEmpty && !isInserted && !isDeleted }
    /// Whether the object has any unsaved change (new, deleted or changed).
    public var hasChanges: Bool { isInserted || isDeleted || !changes.isEmpty }
    /// The row version (`Z_OPT`) this object was read at; 0 for a new object.
    public var version: Int64 { row?.version ?? 0 }

    /// Keys whose values changed since the last save, with their new values.
    ///
    /// - Throws: what ``value(forKey:)`` throws for a changed to-one or to-many key whose related objects must
    ///   be read: ``ObjectGraphError/objectNotFound(_:)`` or ``StoreError`` when a fault cannot be filled.
    public func changedValues() throws -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in changes.keys {
            let key = entity.allProperties[slot].name
            result[key] = try value(forKey: key) ?? NSNull()
        }
        return result
    }

    /// Keys whose values changed since the last save.
    public var changedKeys: Set<String> { Set(changes.keys.map { entity.allProperties[$0].name }) }

    /// The committed values (as last read from the store) for some keys.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when a key in `keys` is not a property of the
    ///   entity; ``ObjectGraphError/objectNotFound(_:)`` when the object is a fault whose row is gone from the
    ///   store (or whose context is gone); ``StoreError`` when the store cannot be read.
    public func committedValues(forKeys keys: [String]? = nil) throws -> [String: Any] {
        var result: [String: Any] = [:]
        let wanted = keys ?? entity.allProperties.filter { !$0.isTransient }.map(\.name)
        for key in wanted {
            guard let slot = entity.slotByName[key] else {
                throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
            }
            let saved = changes.removeValue(forKey: slot)
            defer { if let saved { changes[slot] = saved } }
            result[key] = try value(forKey: key) ?? NSNull()
        }
        return result
    }

    // MARK: Key-value access

    /// The value of a property: the attribute's Swift value (see ``AttributeType``), the related object
    /// for a to-one, a `Set<ManagedObject>` for a to-many, an `[ManagedObject]` for an ordered to-many, and
    /// an `[ManagedObject]` for a fetched property (fetched on first read, kept until the object is refreshed).
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when `key` is not a property of the entity;
    ///   ``ObjectGraphError/objectNotFound(_:)`` when the object is a fault whose row is gone from the store,
    ///   or it has left its context; ``ObjectGraphError/noPersistentStore`` when its context has no store to
    ///   read; ``StoreError`` when the store cannot be read; for a Transformable attribute,
    ///   ``ObjectGraphError/undecodableValue(entity:key:object:reason:)`` when its stored bytes do not turn
    ///   back into a value and ``ObjectGraphError/unknownValueTransformer(entity:key:name:)``; for a fetched
    ///   property, what ``FetchedPropertyDescription/fetchRequest(for:)`` and the fetch throw (``QueryLanguageError``).
    public func value(forKey key: String) throws -> Any? {
        QueueCheck.access(to: self, key: key, writing: false)
        return try uncheckedValue(forKey: key)
    }

    /// ``value(forKey:)`` for a read whose queue was checked already (a `@Managed` property's, which
    /// checked in ``storedAttributeValue(forKey:)``), so a violation is reported once.
    @inline(__always)
    func uncheckedValue(forKey key: String) throws -> Any? {
        guard let slot = entity.slot(forKey: key) else {
            if let fetched = entity.fetchedProperty(named: key) { return try fetchedValue(fetched) }
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        // The common read, an unchanged attribute of a fetched object, straight from the row.
        if changes.isEmpty, !flags.contains(.inserted), slot < entity.attributeColumns.count,
           let attribute = entity.attributeColumns[slot], attribute.type != .transformable,
           let (cells, start) = row?.cellsInPlace {
            // A value left in its _EXTERNAL_DATA file by the fetch is read now, its failure reported.
            if attribute.type == .binaryData, cells.kinds[start &+ attribute.column] == RowCellKind.external.rawValue {
                return ValueConversion.swiftValue(try cells.loadedValue(at: start &+ attribute.column), for: .binaryData)
            }
            return cells.swiftValue(start: start, column: attribute.column, for: attribute.type)
        }
        return try value(atSlot: slot)
    }

    /// An unchanged attribute of a fetched, loaded object as its row stores it, for typed reads that skip
    /// `Any` (see ``Managed``); nil for anything else (a fault, a change, a relationship), which is then
    /// read through ``value(forKey:)``. The same test as that method's fast path, written out in both: a
    /// shared helper returning this value cost `value(forKey:)` about 1 % more instructions in load-batch-by-id.
    @usableFromInline
    func storedAttributeValue(forKey key: String) -> StoredAttributeValue? {
        QueueCheck.access(to: self, key: key, writing: false)
        guard changes.isEmpty, !flags.contains(.inserted), let slot = entity.slot(forKey: key),
              slot < entity.attributeColumns.count, let attribute = entity.attributeColumns[slot],
              attribute.type != .transformable, let (cells, start) = row?.cellsInPlace else { return nil }
        precondition(attribute.column < cells.header.pointee.width, "RowValues index out of range")
        // A value still in its _EXTERNAL_DATA file goes the general way, which reports a file that fails.
        guard cells.kinds[start &+ attribute.column] != RowCellKind.external.rawValue else { return nil }
        return StoredAttributeValue(value: cells.value(at: start &+ attribute.column), type: attribute.type)
    }

    /// Sets a property's value, keeping relationship inverses in step on both sides at once.
    ///
    /// - Throws: ``ObjectGraphError/unknownKey(entity:key:)`` when `key` is not a property of the entity;
    ///   ``ObjectGraphError/readOnlyProperty(entity:key:)`` for a read-only property;
    ///   ``ObjectGraphError/derivedAttribute(entity:key:)`` for a derived attribute (computed at save);
    ///   ``ObjectGraphError/noPersistentStore`` when the object is in no context;
    ///   ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` when the value does not fit the
    ///   attribute's type or is not an object of the relationship's destination;
    ///   ``ObjectGraphError/valueOutOfRange(entity:key:value:)`` for a number the attribute cannot keep (too
    ///   wide for its integer size, not finite, a decimal of more than 15 significant digits);
    ///   ``ObjectGraphError/invalidRelationshipTarget(entity:key:reason:)`` for an object of another context or
    ///   a deleted one; ``ObjectGraphError/unknownValueTransformer(entity:key:name:)`` for a Transformable
    ///   attribute whose transformer is not registered; and what reading the old relationship values throws
    ///   (``ObjectGraphError/objectNotFound(_:)``, ``StoreError``).
    public func setValue(_ value: Any?, forKey key: String) throws {
        QueueCheck.access(to: self, key: key, writing: true)
        guard let slot = entity.slot(forKey: key) else {
            throw ObjectGraphError.unknownKey(entity: entity.name, key: key)
        }
        try setValue(value, atSlot: slot)
    }

    func value(atSlot slot: Int) throws -> Any? {
        let property = entity.allProperties[slot]
        switch entity.storage[slot] {
        case .attribute:
            let attribute = property as! AttributeDescription
            if attribute.attributeType == .transformable {
                return try TransformableValue.value(try primitiveAttribute(atSlot: slot), for: attribute, of: objectID)
            }
            return ValueConversion.swiftValue(try primitiveAttribute(atSlot: slot), for: attribute.attributeType)
        case .toOne:
            guard let id = try relatedID(atSlot: slot) else { return nil }
            return try context().object(with: id)
        case .toManyByForeignKey, .toManyByJoinTable:
            let ids = try relatedIDs(atSlot: slot)
            let context = try context()
            let relationship = property as! RelationshipDescription
            if relationship.isOrdered { return try ids.map { try context.object(with: $0) } }
            var set = Set<ManagedObject>(minimumCapacity: ids.count)
            for id in ids { set.insert(try context.object(with: id)) }
            return set
        case .transient:
            if let composite = property as? CompositeAttributeDescription {
                return try CompositeValue.read(composite, of: self)
            }
            if let attribute = property as? AttributeDescription {
                return transientValues[slot] ?? attribute.defaultValue
            }
            return transientValues[slot]
        }
    }

    func setValue(_ value: Any?, atSlot slot: Int) throws {
        let property = entity.allProperties[slot]
        if property.isReadOnly { throw ObjectGraphError.readOnlyProperty(entity: entity.name, key: property.name) }
        guard let context = managedObjectContext else { throw ObjectGraphError.noPersistentStore }
        switch entity.storage[slot] {
        case .attribute:
            let attribute = property as! AttributeDescription
            if attribute.derivationExpression != nil {
                throw ObjectGraphError.derivedAttribute(entity: entity.name, key: property.name)
            }
            let stored = try ValueConversion.storeValue(value, for: attribute)
            context.willChange(self, slot: slot)
            changes[slot] = .attribute(stored)
        case .toOne:
            let relationship = property as! RelationshipDescription
            let target = try relationshipTarget(value, relationship: relationship, context: context)
            try context.setToOne(self, slot: slot, relationship: relationship, to: target)
        case .toManyByForeignKey, .toManyByJoinTable:
            let relationship = property as! RelationshipDescription
            let targets = try relationshipTargets(value, relationship: relationship, context: context)
            try context.setToMany(self, slot: slot, relationship: relationship, to: targets)
        case .transient:
            if let composite = property as? CompositeAttributeDescription {
                return try CompositeValue.write(value, to: composite, of: self)
            }
            if let attribute = property as? AttributeDescription {
                if attribute.attributeType == .transformable {
                    // Never stored, so never transformed: any value of the model's class is kept as it is.
                    if let value { try TransformableValue.checkClass(value, for: attribute) }
                } else {
                    _ = try ValueConversion.storeValue(value, for: attribute)
                }
            }
            transientValues[slot] = value
        }
    }

    /// The primitive (row) value of an attribute, firing the fault if needed.
    @inline(__always)
    func primitiveAttribute(atSlot slot: Int) throws -> StoreValue {
        if !changes.isEmpty, case .attribute(let value)? = changes[slot] { return value }
        if flags.contains(.inserted) { return .null }
        guard case .attribute(_, let column) = entity.storage[slot] else { return .null }
        if let row { return try row.loadedValue(at: column) }
        return try fulfilledRow().loadedValue(at: column)
    }

    /// The related object's ID of a to-one relationship.
    func relatedID(atSlot slot: Int) throws -> ManagedObjectID? {
        if !changes.isEmpty, case .toOne(let id)? = changes[slot] { return id }
        if flags.contains(.inserted) { return nil }
        guard case .toOne(_, let column, _, let entityColumn) = entity.storage[slot] else { return nil }
        let row = try self.row ?? fulfilledRow()
        guard case .int64(let key) = row[column].storage else { return nil }
        let relationship = entity.allProperties[slot] as! RelationshipDescription
        var destination: EntityDescription = relationship.destinationEntity
        if let entityColumn, case .int64(let number) = row[entityColumn].storage,
           let sub = entity.managedObjectModel?.entity(number: Int(number)) {
            destination = sub
        }
        return ManagedObjectID(entity: destination, primaryKey: key, storeIndex: objectID.storeIndex)
    }

    /// The related objects' IDs of a to-many relationship, reading them from the store the first time.
    func relatedIDs(atSlot slot: Int) throws -> OrderedSet<ManagedObjectID> {
        if !changes.isEmpty, case .toMany(let ids)? = changes[slot] { return ids }
        if let ids = committedToMany[slot] { return ids }
        if flags.contains(.inserted) { return [] }
        let ids = try context().loadToMany(of: self, slot: slot)
        committedToMany[slot] = ids
        return ids
    }

    /// Writes this object's unsaved attribute and to-one values into a row of its table.
    func applyChanges(to row: inout RowValues) {
        for (slot, change) in changes {
            switch (change, entity.storage[slot]) {
            case (.attribute(let value), .attribute(_, let column)):
                row[column] = value
            case (.toOne(let target), .toOne(_, let column, _, let entityColumn)):
                row[column] = target.map { $0.primaryKey.storeValue } ?? .null
                if let entityColumn { row[entityColumn] = target.map { $0.entity.entityNumber.storeValue } ?? .null }
            default:
                break
            }
        }
    }

    func fulfilledRow() throws -> RowValues {
        if let row { return row }
        let context = try context()
        do {
            try context.fulfillFault(self)
        } catch ObjectGraphError.objectNotFound(let id) where id == objectID && context.shouldDeleteInaccessibleFaults {
            // Its row is gone: it reads as deleted and empty, as Core Data's inaccessible faults do.
            var empty = RowValues(repeating: .null, count: entity.tableColumnCount)
            empty[0] = objectID.primaryKey.storeValue
            empty[1] = entity.entityNumber.storeValue
            empty[2] = 0.storeValue
            row = empty
            flags.insert(.deleted)
        }
        guard let row else { throw ObjectGraphError.objectNotFound(objectID) }
        return row
    }

    func context() throws -> ManagedObjectContext {
        guard let context = managedObjectContext else { throw ObjectGraphError.objectNotFound(objectID) }
        return context
    }

    private func relationshipTarget(_ value: Any?, relationship: RelationshipDescription,
                                    context: ManagedObjectContext) throws -> ManagedObject? {
        guard let value, !(value is NSNull) else { return nil }
        if let optional = value as? any OptionalProtocol {
            return try relationshipTarget(optional.wrappedAny, relationship: relationship, context: context)
        }
        guard let object = value as? ManagedObject else {
            throw ObjectGraphError.typeMismatch(entity: entity.name, key: relationship.name,
                                                expected: relationship.destinationEntityName,
                                                actual: String(describing: type(of: value)))
        }
        try checkTarget(object, relationship: relationship, context: context)
        return object
    }

    private func relationshipTargets(_ value: Any?, relationship: RelationshipDescription,
                                     context: ManagedObjectContext) throws -> [ManagedObject] {
        guard let value, !(value is NSNull) else { return [] }
        let objects: [ManagedObject]
        switch value {
        case let set as Set<ManagedObject>: objects = Array(set)
        case let array as [ManagedObject]: objects = array
        case let ordered as OrderedSet<ManagedObject>: objects = Array(ordered)
        case let sequence as any Sequence:
            var collected: [ManagedObject] = []
            for element in sequence {
                guard let object = element as? ManagedObject else {
                    throw ObjectGraphError.typeMismatch(entity: entity.name, key: relationship.name,
                                                        expected: "a collection of \(relationship.destinationEntityName)",
                                                        actual: String(describing: type(of: element)))
                }
                collected.append(object)
            }
            objects = collected
        default:
            throw ObjectGraphError.typeMismatch(entity: entity.name, key: relationship.name,
                                                expected: "a collection of \(relationship.destinationEntityName)",
                                                actual: String(describing: type(of: value)))
        }
        for object in objects { try checkTarget(object, relationship: relationship, context: context) }
        return objects
    }

    private func checkTarget(_ object: ManagedObject, relationship: RelationshipDescription,
                             context: ManagedObjectContext) throws {
        guard object.entity.isKind(of: relationship.destinationEntity) else {
            throw ObjectGraphError.typeMismatch(entity: entity.name, key: relationship.name,
                                                expected: relationship.destinationEntityName, actual: object.entity.name)
        }
        guard object.managedObjectContext === context else {
            throw ObjectGraphError.invalidRelationshipTarget(
                entity: entity.name, key: relationship.name,
                reason: "\(object.objectID) belongs to another context; pass object IDs between contexts")
        }
        guard !object.isDeleted else {
            throw ObjectGraphError.invalidRelationshipTarget(entity: entity.name, key: relationship.name,
                                                             reason: "\(object.objectID) is deleted")
        }
    }

    // MARK: Validation hooks
    //
    // An error a hook throws reaches the caller of `save()` as it was thrown when it is the save's only
    // failure; with others, it is the `underlyingError` of its `ValidationFailure`.

    /// Override to check values across properties before a save (called by the default
    /// ``validateForInsert()`` and ``validateForUpdate()``); throw to refuse the save.
    ///
    /// - Throws: whatever error the override chooses.
    open func validateForSave() throws {}

    /// Called at save for a new object, after its properties passed the model's rules; throw to refuse.
    ///
    /// - Throws: whatever error the override chooses (the default throws what ``validateForSave()`` throws).
    open func validateForInsert() throws { try validateForSave() }

    /// Called at save for a changed object, after its properties passed the model's rules; throw to refuse.
    ///
    /// - Throws: whatever error the override chooses (the default throws what ``validateForSave()`` throws).
    open func validateForUpdate() throws { try validateForSave() }

    /// Called at save for a deleted object; throw to refuse the save.
    ///
    /// - Throws: whatever error the override chooses (the default throws nothing).
    open func validateForDelete() throws {}

    /// Called at save for each key whose value changed (every key set or defaulted, for a new object), with
    /// that value; throw to refuse the save. (Core Data's version may replace the value; this one checks.)
    ///
    /// - Throws: whatever error the override chooses; the failure names `key`.
    open func validateValue(_ value: Any?, forKey key: String) throws {}

    // MARK: Lifecycle hooks

    /// Called after the object is inserted into a context; override to set up initial values.
    open func awakeFromInsert() {}

    /// Called after the object's values are first read from the store.
    open func awakeFromFetch() {}

    /// Called when a save begins, for each object it writes (new, changed or deleted), before validation:
    /// values set here are saved (and validated) with the rest.
    open func willSave() {}

    /// Called after a save has written the object (new, changed or deleted).
    open func didSave() {}

    /// Called when the object is deleted from its context, before the delete rules run: the related objects
    /// are still there.
    open func prepareForDeletion() {}

    /// Called before the object's values are let go of and it becomes a fault (a refresh without merging).
    open func willTurnIntoFault() {}

    /// Called after the object became a fault.
    open func didTurnIntoFault() {}

    // MARK: Identity

    /// Whether both are the same instance: an object is equal only to itself, as in Core Data.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    /// Hashes the instance's identity, in step with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The entity, the ID's URI and whether the object is a fault, new or deleted.
    public var description: String {
        let state = isFault ? " (fault)" : isInserted ? " (inserted)" : isDeleted ? " (deleted)" : ""
        return "<\(entity.name) \(objectID.uriRepresentation().absoluteString)\(state)>"
    }
}
