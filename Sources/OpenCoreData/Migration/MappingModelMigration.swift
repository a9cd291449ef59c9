import Foundation

/// Core Data's "heavy" migration: a new store file at the destination version, filled object by object
/// through a ``MappingModel`` (docs/MIGRATION.md, "Mapping models").
///
/// Two passes, as Core Data's migration manager makes them: the first makes a destination object for each
/// source object every entity mapping reads (its filter applied) and fills its attributes, remembering
/// which source object became which; the second sets the relationships through those associations. Both
/// work in batches, saving and resetting the contexts after each, so memory holds one batch of objects and
/// the association table (two integers per object), whatever the size of the store.
///
/// ```swift
/// try MappingModelMigration.migrate(storeAt: oldStore, sourceModel: v1, destinationModel: v2,
///                                   mapping: try MappingModel(contentsOf: mappingURL), into: newStore)
/// ```
public enum MappingModelMigration {
    /// How many source objects one batch reads before the destination is saved and both contexts reset.
    public static let defaultBatchSize = 500

    /// Creates a store of `destinationModel` at `destination` from the store of `sourceModel` at `source`,
    /// through `mapping`. The source store is opened read-only and never changed. The mapping is checked
    /// against both models before anything is created.
    ///
    /// - Throws: ``MigrationError/unsupportedMapping(entityMapping:reason:)`` for a custom mapping type or a
    ///   migration policy class (named), ``MigrationError/mappingDoesNotFitModels(entityMapping:reason:)`` for
    ///   an entity, attribute, relationship or entity mapping the models do not have,
    ///   ``MigrationError/stepFailed(path:step:reason:)`` when `destination` already exists or a batch fails
    ///   (the destination file is then removed), ``MigrationError/mappingFailed(entityMapping:object:reason:)``
    ///   when an expression fails on an object, and the ``StoreError`` opening the source store throws.
    public static func migrate(storeAt source: URL, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel,
                               mapping: MappingModel, into destination: URL, batchSize: Int = defaultBatchSize) throws {
        let plan = try MappingPlan(mapping: mapping, sourceModel: sourceModel, destinationModel: destinationModel)
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw MigrationError.stepFailed(path: destination.path, step: "create the destination store",
                                            reason: "a file is already there")
        }
        let sourceCoordinator = PersistentStoreCoordinator(managedObjectModel: sourceModel)
        try sourceCoordinator.addPersistentStore(type: .sqlite, at: source, options: StoreOptions(readOnly: true))
        defer { sourceCoordinator.persistentStores.forEach(sourceCoordinator.remove) }
        let destinationCoordinator = PersistentStoreCoordinator(managedObjectModel: destinationModel)
        do {
            try destinationCoordinator.addPersistentStore(type: .sqlite, at: destination)
            // A store with persistent history keeps it (docs/HISTORY.md, "Migrations").
            let history = try MappingMigrationHistory.read(sourceAt: source.path)
            try history?.reserveKeys(inDestinationAt: destination.path)
            var run = MappingRun(plan: plan, source: sourceCoordinator, destination: destinationCoordinator,
                                 destinationPath: destination.path, batchSize: max(1, batchSize))
            try run.createObjects()
            try run.setRelationships()
            destinationCoordinator.persistentStores.forEach(destinationCoordinator.remove)
            try history?.carry(into: destination.path, plan: plan, associations: run.associations,
                               sourceModel: sourceModel, destinationModel: destinationModel)
        } catch {
            destinationCoordinator.persistentStores.forEach(destinationCoordinator.remove)
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: destination.path + suffix)
            }
            throw error
        }
    }
}

/// A mapping model checked against its two models: every name resolved to an entity or property.
struct MappingPlan {
    struct Property {
        let name: String
        let expression: MappingExpression
    }

    struct Entity {
        let name: String
        let source: EntityDescription
        let destination: EntityDescription
        let predicate: QueryPredicate?
        let attributes: [(attribute: AttributeDescription, expression: QueryExpression)]
        let relationships: [(relationship: RelationshipDescription, mappingName: String, sourceInstances: QueryExpression)]
    }

    /// The mappings that make objects (copy and transform), in order.
    let entities: [Entity]

    /// - Throws: see ``MappingModelMigration/migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)``.
    init(mapping: MappingModel, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws {
        let names = Set(mapping.entityMappings.map(\.name))
        var entities: [Entity] = []
        for entityMapping in mapping.entityMappings {
            let name = entityMapping.name
            func misfit(_ reason: String) -> MigrationError { .mappingDoesNotFitModels(entityMapping: name, reason: reason) }
            if let policy = entityMapping.entityMigrationPolicyClassName, policy != "NSEntityMigrationPolicy" {
                throw MigrationError.unsupportedMapping(
                    entityMapping: name, reason: "it needs the migration policy class '\(policy)', and custom policy classes are not supported")
            }
            if entityMapping.mappingType == .custom {
                throw MigrationError.unsupportedMapping(entityMapping: name, reason: "custom entity mappings are not supported")
            }
            guard entityMapping.mappingType == .copy || entityMapping.mappingType == .transform else { continue }
            guard let sourceName = entityMapping.sourceExpression?.entityName ?? entityMapping.sourceEntityName,
                  let source = sourceModel.entitiesByName[sourceName] else {
                throw misfit("the source model has no entity '\(entityMapping.sourceExpression?.entityName ?? entityMapping.sourceEntityName ?? "")'")
            }
            guard let destinationName = entityMapping.destinationEntityName,
                  let destination = destinationModel.entitiesByName[destinationName] else {
                throw misfit("the destination model has no entity '\(entityMapping.destinationEntityName ?? "")'")
            }
            if destination.isAbstract { throw misfit("the destination entity '\(destinationName)' is abstract") }
            var attributes: [(AttributeDescription, QueryExpression)] = []
            var mapped = Set<String>()
            for property in entityMapping.attributeMappings {
                guard let attribute = destination.attributesByName[property.name] else {
                    throw misfit("the destination entity '\(destinationName)' has no attribute '\(property.name)'")
                }
                mapped.insert(property.name)
                switch property.valueExpression {
                case .value(let expression)?: attributes.append((attribute, expression))
                case .destinationInstances?:
                    throw misfit("attribute '\(property.name)' is given destination instances, which only a relationship can hold")
                case nil: continue
                }
            }
            // A copy mapping without attribute mappings carries every attribute the two entities share.
            if entityMapping.mappingType == .copy, entityMapping.attributeMappings.isEmpty {
                for attribute in destination.attributesByName.values.sorted(by: { $0.name < $1.name })
                where !attribute.isTransient && source.attributesByName[attribute.name] != nil && !mapped.contains(attribute.name) {
                    attributes.append((attribute, .keyPath(base: .variable("source"), components: [attribute.name])))
                }
            }
            var relationships: [(RelationshipDescription, String, QueryExpression)] = []
            for property in entityMapping.relationshipMappings {
                guard let relationship = destination.relationshipsByName[property.name] else {
                    throw misfit("the destination entity '\(destinationName)' has no relationship '\(property.name)'")
                }
                switch property.valueExpression {
                case .destinationInstances(let target, let sourceInstances)?:
                    guard target.isEmpty || names.contains(target) else {
                        throw misfit("relationship '\(property.name)' names the entity mapping '\(target)', which the mapping model does not have")
                    }
                    relationships.append((relationship, target, sourceInstances))
                case .value?:
                    throw MigrationError.unsupportedMapping(
                        entityMapping: name,
                        reason: "relationship '\(property.name)' must be filled through \(MappingExpression.destinationInstancesSelector)")
                case nil: continue
                }
            }
            entities.append(Entity(name: name, source: source, destination: destination,
                                   predicate: entityMapping.sourceExpression?.predicate,
                                   attributes: attributes, relationships: relationships))
        }
        self.entities = entities
    }
}

/// One run of a ``MappingPlan``: the two contexts and the association table.
private struct MappingRun {
    let plan: MappingPlan
    let sourceContext: ManagedObjectContext
    let destinationContext: ManagedObjectContext
    let destinationPath: String
    let batchSize: Int
    var associations = MappingAssociations()
    /// The source store's identity, taken from the IDs pass 1 reads, for IDs pass 2 makes from keys.
    var sourceStoreIndex: UInt32?

    init(plan: MappingPlan, source: PersistentStoreCoordinator, destination: PersistentStoreCoordinator,
         destinationPath: String, batchSize: Int) {
        self.plan = plan
        sourceContext = ManagedObjectContext(concurrencyType: .confinement)
        sourceContext.persistentStoreCoordinator = source
        destinationContext = ManagedObjectContext(concurrencyType: .confinement)
        destinationContext.persistentStoreCoordinator = destination
        self.destinationPath = destinationPath
        self.batchSize = batchSize
        for entity in plan.entities {
            associations.register(mapping: entity.name, source: entity.source, destination: entity.destination)
        }
    }

    /// Pass 1: a destination object per source object, attributes filled.
    mutating func createObjects() throws {
        for entity in plan.entities {
            let request = FetchRequest<ManagedObjectID>(entityName: entity.source.name)
            request.resultType = .managedObjectID
            request.includesSubentities = false
            request.predicate = entity.predicate
            let ids = try failing(entity, step: "read the source objects") { try sourceContext.fetch(request) }
            if let id = ids.first { sourceStoreIndex = id.storeIndex }
            var start = 0
            while start < ids.count {
                let batch = ids[start..<min(start + batchSize, ids.count)]
                var made: [(Int64, ManagedObject)] = []
                for id in batch {
                    let source = try sourceContext.object(with: id)
                    let object = try destinationContext.insertNewObject(forEntityName: entity.destination.name)
                    for (attribute, expression) in entity.attributes {
                        let value = try evaluate(expression, source: source, entity)
                        try failing(entity, object: source, step: "set '\(attribute.name)'") {
                            try object.setValue(value, forKey: attribute.name)
                        }
                    }
                    made.append((id.primaryKey, object))
                }
                try failing(entity, step: "save a batch of new objects") { try destinationContext.save() }
                for (key, object) in made { associations.associate(mapping: entity.name, source: key, destination: object.objectID) }
                made.removeAll()
                sourceContext.reset()
                destinationContext.reset()
                start += batchSize
            }
        }
    }

    /// Pass 2: each destination object's relationships, through the associations.
    mutating func setRelationships() throws {
        for entity in plan.entities where !entity.relationships.isEmpty {
            guard let storeIndex = sourceStoreIndex else { return }
            let keys = associations.sourceKeys(of: entity.name)
            var start = 0
            while start < keys.count {
                for key in keys[start..<min(start + batchSize, keys.count)] {
                    let source = try sourceContext.object(
                        with: ManagedObjectID(entity: entity.source, primaryKey: key, storeIndex: storeIndex))
                    guard let id = associations.destinationID(mapping: entity.name, sourceKey: key) else { continue }
                    let object = try destinationContext.object(with: id)
                    for (relationship, mappingName, sourceInstances) in entity.relationships {
                        let value = try evaluate(sourceInstances, source: source, entity)
                        let sources = try Self.objects(in: value, entity: entity, relationship: relationship.name, source: source)
                        let targets = try associations.destinationInstances(forEntityMappingName: mappingName, sourceInstances: sources)
                            .map { try destinationContext.object(with: $0) }
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
                try failing(entity, step: "save a batch of relationships") { try destinationContext.save() }
                sourceContext.reset()
                destinationContext.reset()
                start += batchSize
            }
        }
    }

    /// The source objects a relationship expression gave: one object, a collection of them, or nil.
    private static func objects(in value: Any?, entity: MappingPlan.Entity, relationship: String,
                                source: ManagedObject) throws -> [ManagedObject] {
        switch value {
        case nil, is NSNull: return []
        case let object as ManagedObject: return [object]
        default:
            if let members = QueryEvaluator.collection(value) {
                var objects: [ManagedObject] = []
                for member in members {
                    guard let object = member as? ManagedObject else { continue }
                    objects.append(object)
                }
                if objects.count == members.count { return objects }
            }
            throw MigrationError.mappingFailed(
                entityMapping: entity.name, object: source.objectID.uriRepresentation().absoluteString,
                reason: "the source instances for '\(relationship)' are not objects of the source store")
        }
    }

    private func evaluate(_ expression: QueryExpression, source: ManagedObject, _ entity: MappingPlan.Entity) throws -> Any? {
        try failing(entity, object: source, step: "evaluate \(expression.expressionFormat)") {
            try expression.evaluate(with: source, context: ["source": source])
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

extension MappingModelMigration {
    /// Migrates the store at `url` through `mapping` and writes the result back into the same file, in one
    /// SQLite transaction: what opening a store does when a mapping model from the store's version to the
    /// model's is found. The migrated copy is made next to the store and removed afterwards; until the last
    /// step the original is untouched.
    ///
    /// - Throws: what ``migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)`` throws,
    ///   ``StoreError/busy(path:)`` when another connection holds the store's write lock past `busyTimeout`,
    ///   and ``MigrationError/stepFailed(path:step:reason:)`` when SQLite refuses to write the copy back.
    public static func migrateInPlace(storeAt url: URL, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel,
                                      mapping: MappingModel, busyTimeout: TimeInterval = 5) throws {
        let path = url.path
        // The source is read from a snapshot (one consistent state), the result made in a new file next to
        // the store, and written back only if no other connection committed meanwhile (StoreFileReplacement).
        let snapshot = try StoreFileReplacement.snapshot(of: path, busyTimeout: busyTimeout)
        defer { snapshot.discard() }
        // Not named like a snapshot copy, which another process's clean-up would take for an abandoned one.
        let migrated = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).mapped-\(UUID().uuidString)")
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: migrated.path + suffix) }
        }
        // Another connection may have migrated the store before the snapshot: its result is kept.
        guard try StoreMetadata.read(storeAt: snapshot.copyPath).versionHashes == sourceModel.entityVersionHashesByName else { return }
        try migrate(storeAt: URL(fileURLWithPath: snapshot.copyPath), sourceModel: sourceModel, destinationModel: destinationModel,
                    mapping: mapping, into: migrated)
        try StoreFileReplacement.replaceContents(of: path, with: snapshot, from: migrated.path)
    }
}
