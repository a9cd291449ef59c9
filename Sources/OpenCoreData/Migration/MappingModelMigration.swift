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
    /// Entity mappings that name a migration policy class run its steps (``EntityMigrationPolicy``); the
    /// class must be registered (``MigrationManager/register(policy:forClassName:)``).
    ///
    /// - Throws: ``MigrationError/unregisteredMigrationPolicy(entityMapping:className:)`` for a policy class
    ///   no one registered, ``MigrationError/unsupportedMapping(entityMapping:reason:)`` for a custom mapping
    ///   without a policy or an expression the migrator does not run (named), ``MigrationError/mappingDoesNotFitModels(entityMapping:reason:)`` for
    ///   an entity, attribute, relationship or entity mapping the models do not have,
    ///   ``MigrationError/stepFailed(path:step:reason:)`` when `destination` already exists or a batch fails
    ///   (the destination file is then removed), ``MigrationError/mappingFailed(entityMapping:object:reason:)``
    ///   when an expression or a policy step fails on an object (a policy's own ``MigrationError`` passes
    ///   unchanged; a step not about one object fails as `stepFailed`), and the ``StoreError`` opening the
    ///   source store throws.
    public static func migrate(storeAt source: URL, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel,
                               mapping: MappingModel, into destination: URL, batchSize: Int = defaultBatchSize) throws {
        try migrate(storeAt: source, sourceModel: sourceModel, destinationModel: destinationModel, mapping: mapping,
                    into: destination, batchSize: batchSize, externalData: nil)
    }

    /// ``migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)`` with both stores' values kept
    /// outside their rows in `externalData` instead of the folders next to their files (nil: those): a
    /// migration in place works on copies of the store, whose values live in the original's folder. A
    /// failed migration removes the files the destination wrote.
    ///
    /// - Throws: what the public `migrate` throws.
    static func migrate(storeAt source: URL, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel,
                        mapping: MappingModel, into destination: URL, batchSize: Int, externalData: URL?,
                        reportingTo observer: MigrationManager? = nil) throws {
        let plan = try MappingPlan(mapping: mapping, sourceModel: sourceModel, destinationModel: destinationModel)
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw MigrationError.stepFailed(path: destination.path, step: "create the destination store",
                                            reason: "a file is already there")
        }
        let sourceCoordinator = PersistentStoreCoordinator(managedObjectModel: sourceModel)
        var sourceOptions = StoreOptions(readOnly: true)
        sourceOptions.externalDataDirectory = externalData
        try sourceCoordinator.addPersistentStore(type: .sqlite, at: source, options: sourceOptions)
        defer { sourceCoordinator.persistentStores.forEach(sourceCoordinator.remove) }
        let destinationCoordinator = PersistentStoreCoordinator(managedObjectModel: destinationModel)
        do {
            var destinationOptions = StoreOptions()
            destinationOptions.externalDataDirectory = externalData
            try destinationCoordinator.addPersistentStore(type: .sqlite, at: destination, options: destinationOptions)
            // A store with persistent history keeps it (docs/HISTORY.md, "Migrations").
            let history = try MappingMigrationHistory.read(sourceAt: source.path)
            try history?.reserveKeys(inDestinationAt: destination.path)
            let manager = MigrationManager(plan: plan, sourceModel: sourceModel, destinationModel: destinationModel,
                                           source: sourceCoordinator, destination: destinationCoordinator,
                                           destinationPath: destination.path, batchSize: max(1, batchSize),
                                           observer: observer)
            try manager.run()
            destinationCoordinator.persistentStores.forEach(destinationCoordinator.remove)
            try history?.carry(into: destination.path, run: MappingRun(plan: plan, associations: manager.associations,
                                                                       sourceModel: sourceModel, destinationModel: destinationModel))
        } catch {
            destinationCoordinator.persistentStores.forEach(destinationCoordinator.remove)
            // The batches saved before the failure wrote files of their large values: they go with the store.
            ExternalBinaryStorage.removeFiles(ofStoreAt: destination, model: destinationModel, directory: externalData)
            for suffix in ["", "-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: destination.path + suffix)
            }
            throw error
        }
    }
}

extension MappingModelMigration {
    /// Checks `mapping` against both models (what the migration would refuse before making anything).
    ///
    /// - Throws: the refusals of ``migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)``
    ///   about the mapping itself (unregistered policies, unsupported mappings, mappings that do not fit).
    package static func check(_ mapping: MappingModel, sourceModel: ManagedObjectModel,
                              destinationModel: ManagedObjectModel) throws {
        _ = try MappingPlan(mapping: mapping, sourceModel: sourceModel, destinationModel: destinationModel)
    }

    /// Runs `mapping` from the stores of `source` (read) into the stores of `destination` (filled), whatever
    /// kind of store they are: the two passes of the SQLite migration, without its file handling. The caller
    /// makes the destination empty beforehand and removes it on failure; `destinationName` names it in errors.
    /// `beforeObjects` runs once the mapping is checked, before any object is made (a store with history
    /// reserves keys there, ``MappingMigrationHistory/reserveKeys(in:)``); the returned run tells which
    /// object became which (``MappingMigrationHistory/carry(from:into:run:)``).
    ///
    /// - Throws: what ``migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)`` throws for
    ///   the mapping and its steps, and what `beforeObjects` throws.
    @discardableResult
    package static func run(_ mapping: MappingModel, from source: PersistentStoreCoordinator,
                            into destination: PersistentStoreCoordinator, destinationName: String,
                            batchSize: Int = defaultBatchSize, beforeObjects: () throws -> Void = {}) throws -> MappingRun {
        let plan = try MappingPlan(mapping: mapping, sourceModel: source.managedObjectModel,
                                   destinationModel: destination.managedObjectModel)
        try beforeObjects()
        let manager = MigrationManager(plan: plan, sourceModel: source.managedObjectModel,
                                       destinationModel: destination.managedObjectModel, source: source,
                                       destination: destination, destinationPath: destinationName, batchSize: max(1, batchSize))
        try manager.run()
        return MappingRun(plan: plan, associations: manager.associations, sourceModel: source.managedObjectModel,
                          destinationModel: destination.managedObjectModel)
    }
}

/// A mapping model checked against its two models: every name resolved to an entity, property or
/// migration policy class.
struct MappingPlan {
    /// What an attribute mapping gives: a query language expression over `$source`, or a function of the
    /// mapping's migration policy applied to such expressions' values.
    enum Value {
        case query(QueryExpression)
        case policyFunction(selector: String, arguments: [QueryExpression])
    }

    struct Entity {
        let mapping: EntityMapping
        var name: String { mapping.name }
        /// Nil for a mapping without source objects (a custom or add mapping its policy fills).
        let source: EntityDescription?
        /// Nil for a mapping that makes nothing by default (a custom or remove mapping).
        let destination: EntityDescription?
        let predicate: QueryPredicate?
        let attributes: [(attribute: AttributeDescription, value: Value)]
        let relationships: [(relationship: RelationshipDescription, mappingName: String, sourceInstances: QueryExpression)]
        /// The policy class the mapping names; nil for none (or Core Data's own), whose steps are the defaults.
        let policy: EntityMigrationPolicy.Type?
    }

    /// The mappings that run: those that make objects (copy, transform, custom) and those with a policy, in order.
    let entities: [Entity]
    let mapping: MappingModel

    /// A plan that maps nothing: a migration manager's before it runs a migration.
    init() {
        entities = []
        mapping = MappingModel(entityMappings: [])
    }

    /// - Throws: see ``MappingModelMigration/migrate(storeAt:sourceModel:destinationModel:mapping:into:batchSize:)``.
    init(mapping: MappingModel, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel) throws {
        self.mapping = mapping
        let names = Set(mapping.entityMappings.map(\.name))
        var entities: [Entity] = []
        for entityMapping in mapping.entityMappings {
            let name = entityMapping.name
            func misfit(_ reason: String) -> MigrationError { .mappingDoesNotFitModels(entityMapping: name, reason: reason) }
            // A compiled mapping records the entity versions it was made for: another version is another entity.
            for (hash, entityName, model, side) in [
                (entityMapping.sourceEntityVersionHash, entityMapping.sourceEntityName, sourceModel, "source"),
                (entityMapping.destinationEntityVersionHash, entityMapping.destinationEntityName, destinationModel, "destination"),
            ] {
                guard let hash else { continue }
                guard let entityName, let actual = model.entityVersionHashesByName[entityName] else {
                    throw misfit("it records a \(side) entity version hash, but the \(side) model has no entity '\(entityName ?? "")'")
                }
                guard actual == hash else {
                    throw misfit("the \(side) entity '\(entityName)' is not the version the mapping was made for (its version hash differs)")
                }
            }
            var policy: EntityMigrationPolicy.Type?
            if let className = entityMapping.entityMigrationPolicyClassName, className != MigrationManager.defaultPolicyClassName {
                guard let registered = MigrationManager.policy(forClassName: className) else {
                    throw MigrationError.unregisteredMigrationPolicy(entityMapping: name, className: className)
                }
                policy = registered
            }
            if entityMapping.mappingType == .custom, policy == nil {
                throw MigrationError.unsupportedMapping(
                    entityMapping: name, reason: "a custom entity mapping needs a migration policy class, and it names none")
            }
            let makesObjects = [.copy, .transform, .custom].contains(entityMapping.mappingType)
            guard makesObjects || policy != nil else { continue }
            // Copy and transform mappings read one entity and make another; a custom mapping's policy may do
            // without either; add and remove mappings (here for their policy's steps) make nothing.
            let needsBoth = entityMapping.mappingType == .copy || entityMapping.mappingType == .transform
            var source: EntityDescription?
            var destination: EntityDescription?
            if makesObjects {
                let sourceName = entityMapping.sourceExpression?.entityName ?? entityMapping.sourceEntityName
                if let sourceName, let found = sourceModel.entitiesByName[sourceName] {
                    source = found
                } else if sourceName != nil || needsBoth {
                    throw misfit("the source model has no entity '\(sourceName ?? "")'")
                }
                let destinationName = entityMapping.destinationEntityName
                if let destinationName, let found = destinationModel.entitiesByName[destinationName] {
                    if found.isAbstract { throw misfit("the destination entity '\(found.name)' is abstract") }
                    destination = found
                } else if destinationName != nil || needsBoth {
                    throw misfit("the destination model has no entity '\(destinationName ?? "")'")
                }
            }
            var attributes: [(AttributeDescription, Value)] = []
            var relationships: [(RelationshipDescription, String, QueryExpression)] = []
            if let destination {
                let destinationName = destination.name
                var mapped = Set<String>()
                for property in entityMapping.attributeMappings {
                    guard let attribute = destination.attributesByName[property.name] else {
                        throw misfit("the destination entity '\(destinationName)' has no attribute '\(property.name)'")
                    }
                    mapped.insert(property.name)
                    switch property.effectiveExpression(readingFrom: source) {
                    case .value(let expression)?: attributes.append((attribute, .query(expression)))
                    case .policyFunction(let selector, let arguments)?:
                        guard policy != nil else {
                            throw MigrationError.unsupportedMapping(
                                entityMapping: name,
                                reason: "attribute '\(property.name)' calls FUNCTION($entityPolicy, \"\(selector)\"), but the mapping names no migration policy class")
                        }
                        attributes.append((attribute, .policyFunction(selector: selector, arguments: arguments)))
                    case .destinationInstances?, .destinationInstancesForSourceRelationship?:
                        throw misfit("attribute '\(property.name)' is given destination instances, which only a relationship can hold")
                    case nil: continue
                    }
                }
                // A copy mapping without attribute mappings carries every attribute the two entities share.
                if entityMapping.mappingType == .copy, entityMapping.attributeMappings.isEmpty, let source {
                    for attribute in destination.attributesByName.values.sorted(by: { $0.name < $1.name })
                    where !attribute.isTransient && source.attributesByName[attribute.name] != nil && !mapped.contains(attribute.name) {
                        attributes.append((attribute, .query(.keyPath(base: .variable("source"), components: [attribute.name]))))
                    }
                }
                for property in entityMapping.relationshipMappings {
                    guard let relationship = destination.relationshipsByName[property.name] else {
                        throw misfit("the destination entity '\(destinationName)' has no relationship '\(property.name)'")
                    }
                    switch property.effectiveExpression(readingFrom: source) {
                    case .destinationInstances(let target, let sourceInstances)?:
                        guard target.isEmpty || names.contains(target) else {
                            throw misfit("relationship '\(property.name)' names the entity mapping '\(target)', which the mapping model does not have")
                        }
                        relationships.append((relationship, target, sourceInstances))
                    case .destinationInstancesForSourceRelationship(let sourceRelationship, let sourceInstances)?:
                        guard let source, source.relationshipsByName[sourceRelationship] != nil else {
                            throw misfit("relationship '\(property.name)' reads the source relationship '\(sourceRelationship)', which the source entity '\(source?.name ?? "-")' does not have")
                        }
                        // Whichever mapping made each object the source relationship holds (an empty name).
                        relationships.append((relationship, "", sourceInstances))
                    case .value?, .policyFunction?:
                        throw MigrationError.unsupportedMapping(
                            entityMapping: name,
                            reason: "relationship '\(property.name)' must be filled through \(MappingExpression.destinationInstancesSelector)")
                    case nil: continue
                    }
                }
            }
            entities.append(Entity(mapping: entityMapping, source: source, destination: destination,
                                   predicate: entityMapping.sourceExpression?.predicate,
                                   attributes: attributes, relationships: relationships, policy: policy))
        }
        self.entities = entities
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
        // Named after the snapshot copy: in use while the copy's lock is held, and removed with the copy by
        // the next migration or open when this process dies.
        let migrated = URL(fileURLWithPath: StoreFileReplacement.derivedPath(of: snapshot.copyPath))
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: migrated.path + suffix) }
        }
        // Another connection may have migrated the store before the snapshot: its result is kept.
        guard try StoreMetadata.read(storeAt: snapshot.copyPath).versionHashes == sourceModel.entityVersionHashesByName else { return }
        // The copies read and write the values kept outside rows in the store's own folder: the migrated
        // values' files are there (under new names) before the rows naming them are written back.
        let folder = ExternalBinaryStorage.directory(forStoreAt: url)
        let copy = URL(fileURLWithPath: snapshot.copyPath)
        try migrate(storeAt: copy, sourceModel: sourceModel, destinationModel: destinationModel,
                    mapping: mapping, into: migrated, batchSize: defaultBatchSize, externalData: folder)
        do {
            try StoreFileReplacement.replaceContents(of: path, with: snapshot, from: migrated.path)
        } catch {
            ExternalBinaryStorage.removeFiles(ofStoreAt: migrated, model: destinationModel, directory: folder)
            throw error
        }
        // Written back: the files of the values before the migration are no longer named by any row.
        ExternalBinaryStorage.removeFiles(ofStoreAt: copy, model: sourceModel, directory: folder,
                                          keeping: migrated, model: destinationModel)
    }
}
