import Foundation

/// One run of a mapping model migration (Core Data's `NSMigrationManager`): the two contexts, the mapping
/// model, and which destination object each entity mapping made from which source object. Made by
/// ``MappingModelMigration``; the ``EntityMigrationPolicy`` steps get it to read the source, make and find
/// destination objects.
///
/// Made by an app as Core Data's is (``init(sourceModel:destinationModel:)``), it runs a migration with
/// ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)`` and
/// reports ``migrationProgress`` and ``currentEntityMapping`` while it does.
///
/// Not thread-safe, as the contexts it holds are confined to the migration's thread: use it only inside the
/// policy step that was given it, or on the thread that runs its migration; ``migrationProgress`` and
/// ``cancelMigrationWithError(_:)`` may be used from any thread.
public final class MigrationManager {
    /// The model of the store being migrated.
    public let sourceModel: ManagedObjectModel
    /// The model of the store being made.
    public let destinationModel: ManagedObjectModel
    /// The mapping model being run.
    public var mappingModel: MappingModel { plan.mapping }
    /// A context on the source store (opened read-only).
    public let sourceContext: ManagedObjectContext
    /// A context on the new store; saved and reset by the migration after each batch of source objects.
    public let destinationContext: ManagedObjectContext
    /// The entity mapping whose step is running (of the migration this manager runs, for a manager an app made).
    public var currentEntityMapping: EntityMapping? { runningMapping }
    /// Free for the policies' use across steps and mappings; what an app sets before
    /// ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``
    /// reaches the policies, and what they leave is there afterwards.
    public var userInfo: [String: Any] = [:]
    /// How far the migration it runs is, from 0 to 1 (Core Data's `migrationProgress`); safe to read from any thread.
    public var migrationProgress: Float { state.progress }
    /// Called with ``migrationProgress`` each time it moves, on the migrating thread (Core Data apps observe
    /// the property with KVO, which Linux lacks).
    public var progressHandler: ((Float) -> Void)?

    private var runningMapping: EntityMapping?
    /// The manager an app made, which this run reports to (nil: this is that manager, or no one asked).
    private let observer: MigrationManager?
    let state = MigrationRunState()

    let plan: MappingPlan
    let destinationPath: String
    let batchSize: Int
    private(set) var associations = MappingAssociations()
    /// The source store's identity, taken from the IDs pass 1 reads, for IDs pass 2 makes from keys.
    private var sourceStoreIndex: UInt32?
    /// Associations of objects not saved yet (their IDs are temporary): recorded after the batch is saved.
    private var pending: [(mapping: String, source: ManagedObject, destination: ManagedObject)] = []
    private var currentEntity: MappingPlan.Entity?
    /// In pass 2, the source object whose destination objects are getting their relationships.
    private var currentSource: ManagedObject?
    /// One policy per entity mapping, made when the migration starts.
    private let policies: [String: EntityMigrationPolicy]

    init(plan: MappingPlan, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel,
         source: PersistentStoreCoordinator, destination: PersistentStoreCoordinator, destinationPath: String, batchSize: Int,
         observer: MigrationManager? = nil) {
        self.observer = observer
        if let observer { userInfo = observer.userInfo }
        self.plan = plan
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        sourceContext = ManagedObjectContext(concurrencyType: .confinement)
        sourceContext.persistentStoreCoordinator = source
        destinationContext = ManagedObjectContext(concurrencyType: .confinement)
        destinationContext.persistentStoreCoordinator = destination
        self.destinationPath = destinationPath
        self.batchSize = batchSize
        var policies: [String: EntityMigrationPolicy] = [:]
        for entity in plan.entities {
            associations.register(mapping: entity.name, source: entity.source, destination: entity.destination)
            policies[entity.name] = (entity.policy ?? EntityMigrationPolicy.self).init()
        }
        self.policies = policies
    }

    /// A manager for migrating stores of `sourceModel` into stores of `destinationModel` (Core Data's
    /// `NSMigrationManager(sourceModel:destinationModel:)`). Its contexts have no store until a migration runs.
    public init(sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        plan = MappingPlan()
        sourceContext = ManagedObjectContext(concurrencyType: .confinement)
        destinationContext = ManagedObjectContext(concurrencyType: .confinement)
        destinationPath = ""
        batchSize = MappingModelMigration.defaultBatchSize
        policies = [:]
        observer = nil
    }

    // MARK: What policies call

    /// The destination objects the entity mapping `name` made from `sources` (objects of
    /// ``sourceContext``), in their order; those it made none from give none. An empty `name` looks each
    /// object up in the mappings that read its entity.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when an object cannot be read back.
    public func destinationInstances(forEntityMappingName name: String, sourceInstances sources: [ManagedObject]) throws -> [ManagedObject] {
        var result: [ManagedObject] = []
        for source in sources {
            let saved = associations.destinationInstances(forEntityMappingName: name, sourceInstances: [source])
            result += try saved.map { try destinationObject($0) }
            result += pending.filter { ($0.mapping == name || name.isEmpty) && $0.source.objectID == source.objectID }.map(\.destination)
        }
        return result
    }

    /// The source objects the entity mapping `name` made `destinations` from, in their order. Looks
    /// through the mapping's whole table: meant for a policy's occasional question, not every object.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when an object cannot be read back.
    public func sourceInstances(forEntityMappingName name: String, destinationInstances destinations: [ManagedObject]) throws -> [ManagedObject] {
        guard let entity = plan.entities.first(where: { $0.name == name }) else { return [] }
        var result: [ManagedObject] = []
        for destination in destinations {
            if let found = pending.first(where: { $0.mapping == name && $0.destination === destination }) {
                result.append(found.source)
            } else if let source = entity.source, let storeIndex = sourceStoreIndex, !destination.objectID.isTemporaryID,
                      let key = associations.sourceKey(mapping: name, destinationKey: destination.objectID.primaryKey) {
                result.append(try sourceObject(ManagedObjectID(entity: source, primaryKey: key, storeIndex: storeIndex)))
            }
        }
        return result
    }

    /// Records that `mapping` made `destination` (an object of ``destinationContext`` of the mapping's
    /// destination entity) from `source` (an object of ``sourceContext`` of its source entity): the
    /// relationship step then reaches it, and ``destinationInstances(forEntityMappingName:sourceInstances:)``
    /// finds it. One source object may have several destination objects.
    ///
    /// - Throws: ``MigrationError/mappingFailed(entityMapping:object:reason:)`` when either object is not of
    ///   the mapping's entities or contexts.
    public func associate(sourceInstance source: ManagedObject, withDestinationInstance destination: ManagedObject,
                          for mapping: EntityMapping) throws {
        func refuse(_ reason: String) -> MigrationError {
            .mappingFailed(entityMapping: mapping.name, object: source.objectID.uriRepresentation().absoluteString, reason: reason)
        }
        guard let entity = plan.entities.first(where: { $0.name == mapping.name }) else {
            throw refuse("the mapping model has no entity mapping '\(mapping.name)' that runs")
        }
        guard source.managedObjectContext === sourceContext, source.entity === entity.source else {
            throw refuse("the source instance is not an object of the source context's entity '\(entity.source?.name ?? "-")'")
        }
        guard destination.managedObjectContext === destinationContext, destination.entity === entity.destination else {
            throw refuse("the destination instance is not an object of the destination context's entity '\(entity.destination?.name ?? "-")'")
        }
        sourceStoreIndex = source.objectID.storeIndex
        if destination.objectID.isTemporaryID {
            pending.append((mapping.name, source, destination))
        } else {
            associations.associate(mapping: mapping.name, source: source.objectID.primaryKey, destination: destination.objectID)
        }
    }

    // MARK: The run

    /// The three passes: objects, relationships, validation.
    ///
    /// - Throws: see ``MappingModelMigration/migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)``.
    func run() throws {
        defer { observer?.userInfo = userInfo }
        let passes = Float(max(1, plan.entities.count * 2))
        var passesDone: Float = 0
        progressInPass = { [unowned self] fraction in report((passesDone + fraction) / passes) }
        passDone = { passesDone += 1 }
        // Objects are saved batch by batch before their relationships are set: they are validated once
        // the relationship pass is over, as Core Data validates (a required to-one is set only then).
        destinationContext.validatesOnSave = false
        for entity in plan.entities { try createObjects(entity) }
        for entity in plan.entities where entity.policy != nil || !entity.relationships.isEmpty {
            try createRelationships(entity)
        }
        destinationContext.validatesOnSave = true
        try validateDestination()
        report(1)
        for entity in plan.entities where entity.policy != nil {
            try step(entity, "performCustomValidation") { try $0.performCustomValidation(forMapping: entity.mapping, manager: self) }
            try step(entity, "end") { try $0.end(entity.mapping, manager: self) }
            try saveAndReset(entity, step: "save what the policy's last steps made")
        }
        currentEntity = nil
        setCurrent(nil)
    }

    private var progressInPass: (Float) -> Void = { _ in }
    private var passDone: () -> Void = {}

    /// Records how far the run is, for this manager and the one it reports to.
    private func report(_ progress: Float) {
        for manager in [self, observer].compactMap({ $0 }) where manager.state.progress != progress {
            manager.state.progress = progress
            manager.progressHandler?(progress)
        }
    }

    private func setCurrent(_ mapping: EntityMapping?) {
        runningMapping = mapping
        observer?.runningMapping = mapping
    }

    /// Throws the error ``cancelMigrationWithError(_:)`` was given, on this manager or the one it reports to.
    private func checkCancellation() throws {
        for manager in [self, observer].compactMap({ $0 }) {
            if let error = manager.state.cancellation {
                manager.state.cancellation = nil
                throw error
            }
        }
    }

    /// Checks every object of the new store against the destination model's validation rules, a batch at a
    /// time.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` naming the entity and, in the reason,
    ///   each object and rule that failed.
    private func validateDestination() throws {
        for entity in destinationModel.entities where !entity.isAbstract
            && (entity.needsValidation || entity.managedObjectClass != ManagedObject.self) {
            let step = "validate the new '\(entity.name)' objects"
            func failed(_ reason: String) -> MigrationError { .stepFailed(path: destinationPath, step: step, reason: reason) }
            let request = FetchRequest<ManagedObjectID>(entityName: entity.name)
            request.resultType = .managedObjectID
            request.includesSubentities = false
            let ids: [ManagedObjectID]
            do { ids = Array(try destinationContext.fetch(request)) } catch { throw failed("\(error)") }
            var start = 0
            while start < ids.count {
                var failures: [ValidationFailure] = []
                for id in ids[start..<min(start + batchSize, ids.count)] {
                    do { failures += destinationContext.validate(try destinationObject(id), asNewObject: true) } catch { throw failed("\(error)") }
                }
                if !failures.isEmpty { throw failed("\(ObjectGraphError.validationFailed(failures))") }
                destinationContext.reset()
                start += batchSize
            }
        }
    }

    /// Pass 1 for one mapping: its policy makes the destination objects of each source object.
    private func createObjects(_ entity: MappingPlan.Entity) throws {
        currentEntity = entity
        setCurrent(entity.mapping)
        try step(entity, "begin") { try $0.begin(entity.mapping, with: self) }
        if let sourceEntity = entity.source {
            let request = FetchRequest<ManagedObjectID>(entityName: sourceEntity.name)
            request.resultType = .managedObjectID
            request.includesSubentities = false
            request.predicate = entity.predicate
            let ids = try failing(entity, step: "read the source objects") { Array(try sourceContext.fetch(request)) }
            if let id = ids.first { sourceStoreIndex = id.storeIndex }
            try inBatches(ids, entity, saving: "save a batch of new objects") { id in
                let source = try sourceObject(id)
                try failing(entity, object: source, step: "createDestinationInstances") {
                    try policy(entity).createDestinationInstances(forSource: source, in: entity.mapping, manager: self)
                }
            }
        }
        try step(entity, "endInstanceCreation") { try $0.endInstanceCreation(forMapping: entity.mapping, manager: self) }
        try saveAndReset(entity, step: "save a batch of new objects")
    }

    /// Pass 2 for one mapping: each object it made gets its relationships.
    private func createRelationships(_ entity: MappingPlan.Entity) throws {
        currentEntity = entity
        setCurrent(entity.mapping)
        if let sourceEntity = entity.source, let storeIndex = sourceStoreIndex {
            try inBatches(associations.sourceKeys(of: entity.name), entity, saving: "save a batch of relationships") { key in
                let source = try sourceObject(ManagedObjectID(entity: sourceEntity, primaryKey: key, storeIndex: storeIndex))
                currentSource = source
                defer { currentSource = nil }
                for id in associations.destinationIDs(mapping: entity.name, sourceKey: key) {
                    let destination = try destinationObject(id)
                    try failing(entity, object: source, step: "createRelationships") {
                        try policy(entity).createRelationships(forDestination: destination, in: entity.mapping, manager: self)
                    }
                }
            }
        }
        try step(entity, "endRelationshipCreation") { try $0.endRelationshipCreation(forMapping: entity.mapping, manager: self) }
        try saveAndReset(entity, step: "save a batch of relationships")
    }

    /// The default of ``EntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)``.
    func createDefaultDestinationInstance(forSource source: ManagedObject, policy: EntityMigrationPolicy) throws {
        guard let entity = currentEntity, let destinationEntity = entity.destination else { return }
        let object = try failing(entity, object: source, step: "make a '\(destinationEntity.name)'") {
            try destinationContext.insertNewObject(forEntityName: destinationEntity.name)
        }
        for (attribute, value) in entity.attributes {
            let newValue = try evaluate(value, source: source, entity, policy: policy)
            try failing(entity, object: source, step: "set '\(attribute.name)'") {
                try object.setValue(newValue, forKey: attribute.name)
            }
        }
        try associate(sourceInstance: source, withDestinationInstance: object, for: entity.mapping)
    }

    /// The default of ``EntityMigrationPolicy/createRelationships(forDestination:in:manager:)``.
    func createDefaultRelationships(forDestination object: ManagedObject, policy: EntityMigrationPolicy) throws {
        guard let entity = currentEntity, !entity.relationships.isEmpty else { return }
        guard let source = try currentSource ?? sourceInstances(forEntityMappingName: entity.name, destinationInstances: [object]).first else {
            return
        }
        for (relationship, mappingName, sourceInstances) in entity.relationships {
            let value = try evaluate(.query(sourceInstances), source: source, entity, policy: policy)
            let sources = try Self.objects(in: value, entity: entity, relationship: relationship.name, source: source)
            let targets = try associations.destinationInstances(forEntityMappingName: mappingName, sourceInstances: sources)
                .map { try destinationObject($0) }
            let newValue: Any?
            if !relationship.isToMany {
                guard targets.count <= 1 else {
                    throw MigrationError.mappingFailed(
                        entityMapping: entity.name, object: source.objectID.uriRepresentation().absoluteString,
                        reason: "to-one relationship '\(relationship.name)' is given \(targets.count) objects")
                }
                newValue = targets.first
            } else if relationship.isOrdered {
                newValue = targets
            } else {
                newValue = Set(targets)
            }
            try failing(entity, object: source, step: "set '\(relationship.name)'") {
                try object.setValue(newValue, forKey: relationship.name)
            }
        }
    }

    // MARK: Helpers

    private func policy(_ entity: MappingPlan.Entity) -> EntityMigrationPolicy {
        // Every entity of the plan got one in init.
        policies[entity.name]!
    }

    /// Runs one of a policy's per-mapping steps, naming the mapping and step when it fails.
    private func step(_ entity: MappingPlan.Entity, _ name: String, _ body: (EntityMigrationPolicy) throws -> Void) throws {
        try failing(entity, step: name) { try body(policy(entity)) }
    }

    /// Runs `body` on each of `items`, saving and resetting after every `batchSize` of them: what keeps a
    /// migration's memory to one batch of objects.
    private func inBatches<Item>(_ items: [Item], _ entity: MappingPlan.Entity, saving step: String,
                                 _ body: (Item) throws -> Void) throws {
        var start = 0
        while start < items.count {
            try checkCancellation()
            for item in items[start..<min(start + batchSize, items.count)] { try body(item) }
            try saveAndReset(entity, step: step)
            start += batchSize
            progressInPass(Float(min(start, items.count)) / Float(items.count))
        }
        try checkCancellation()
        passDone()
        progressInPass(0)
    }

    /// Saves the destination, records the associations of the objects just saved, and resets both contexts.
    private func saveAndReset(_ entity: MappingPlan.Entity, step: String) throws {
        if destinationContext.hasChanges {
            try failing(entity, step: step) { try destinationContext.save() }
        }
        for (mapping, source, destination) in pending {
            associations.associate(mapping: mapping, source: source.objectID.primaryKey, destination: destination.objectID)
        }
        pending.removeAll()
        sourceContext.reset()
        destinationContext.reset()
    }

    private func sourceObject(_ id: ManagedObjectID) throws -> ManagedObject {
        try sourceContext.object(with: id)
    }

    private func destinationObject(_ id: ManagedObjectID) throws -> ManagedObject {
        try destinationContext.object(with: id)
    }

    /// The source objects a relationship expression gave: one object, a collection of them, or nil.
    private static func objects(in value: Any?, entity: MappingPlan.Entity, relationship: String,
                                source: ManagedObject) throws -> [ManagedObject] {
        switch value {
        case nil, is NSNull: return []
        case let object as ManagedObject: return [object]
        default:
            if let members = QueryEvaluator.collection(value) {
                let objects = members.compactMap { $0 as? ManagedObject }
                if objects.count == members.count { return objects }
            }
            throw MigrationError.mappingFailed(
                entityMapping: entity.name, object: source.objectID.uriRepresentation().absoluteString,
                reason: "the source instances for '\(relationship)' are not objects of the source store")
        }
    }

    private func evaluate(_ value: MappingPlan.Value, source: ManagedObject, _ entity: MappingPlan.Entity,
                          policy: EntityMigrationPolicy) throws -> Any? {
        switch value {
        case .query(let expression):
            return try failing(entity, object: source, step: "evaluate \(expression.expressionFormat)") {
                try expression.evaluate(with: source, context: ["source": source])
            }
        case .policyFunction(let selector, let arguments):
            let values = try arguments.map { try evaluate(.query($0), source: source, entity, policy: policy) }
            return try failing(entity, object: source, step: "FUNCTION($entityPolicy, \"\(selector)\")") {
                try policy.callFunction(selector, arguments: values, manager: self)
            }
        }
    }

    /// Runs `body`, turning what it throws into a ``MigrationError`` naming the mapping (and the object).
    private func failing<T>(_ entity: MappingPlan.Entity, object: ManagedObject? = nil, step: String,
                            _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as MigrationError {
            throw error
        } catch {
            if let object {
                throw MigrationError.mappingFailed(entityMapping: entity.name,
                                                   object: object.objectID.uriRepresentation().absoluteString,
                                                   reason: "\(step): \(error)")
            }
            throw MigrationError.stepFailed(path: destinationPath, step: "\(entity.name): \(step)", reason: "\(error)")
        }
    }
}
