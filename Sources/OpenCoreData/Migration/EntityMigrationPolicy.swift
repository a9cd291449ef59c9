import Foundation

/// The code an entity mapping runs while a mapping model migrates a store (Core Data's
/// `NSEntityMigrationPolicy`, named by the mapping's `entityMigrationPolicyClassName`).
///
/// Subclass it, override the steps to change, and register the subclass under the class name the mapping
/// model writes (``MigrationManager/register(policy:forClassName:)``) before the migration runs: Swift has
/// no `NSClassFromString`, and a mapping that names an unregistered class is refused before anything is
/// written (``MigrationError/unregisteredMigrationPolicy(entityMapping:className:)``).
///
/// The steps run in Core Data's order, one policy instance per entity mapping and migration:
/// 1. for each mapping: ``begin(_:with:)``, ``createDestinationInstances(forSource:in:manager:)`` for each
///    source object the mapping reads, ``endInstanceCreation(forMapping:manager:)``;
/// 2. for each mapping: ``createRelationships(forDestination:in:manager:)`` for each object it made,
///    ``endRelationshipCreation(forMapping:manager:)``;
/// 3. for each mapping: ``performCustomValidation(forMapping:manager:)``, then ``end(_:manager:)``.
///
/// Objects handed to a step belong to the manager's contexts, which are saved and reset every
/// ``MappingModelMigration/defaultBatchSize`` objects: keep their `objectID`s across calls, not the objects.
/// An error thrown by a step stops the migration; the half-made store is removed and the source kept.
///
/// ```swift
/// final class CarPolicy: EntityMigrationPolicy {
///     override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
///                                              manager: MigrationManager) throws {
///         try super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
///         let made = try manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [source])
///         try made.first?.setValue("checked", forKey: "note")
///     }
/// }
/// MigrationManager.register(policy: CarPolicy.self, forClassName: "CarPolicy")
/// ```
open class EntityMigrationPolicy {
    /// A policy; the migration makes one per entity mapping that names the class.
    public required init() {}

    /// Called before the mapping makes any object.
    ///
    /// - Throws: whatever the override throws; the migration stops with it.
    open func begin(_ mapping: EntityMapping, with manager: MigrationManager) throws {}

    /// Makes the destination objects for one source object. By default: one object of the mapping's
    /// destination entity, its attributes set by the mapping's attribute mappings, associated with `source`
    /// (``MigrationManager/associate(sourceInstance:withDestinationInstance:for:)``). An override that makes
    /// objects itself inserts them into ``MigrationManager/destinationContext`` and associates each one, or
    /// the relationship step never sees them.
    ///
    /// - Throws: ``MigrationError/mappingFailed(entityMapping:object:reason:)`` when an attribute mapping
    ///   fails on `source`, and whatever an override throws.
    open func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
                                         manager: MigrationManager) throws {
        try manager.createDefaultDestinationInstance(forSource: source, policy: self)
    }

    /// Called after the mapping made an object for every source object it reads.
    ///
    /// - Throws: whatever the override throws; the migration stops with it.
    open func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Sets the relationships of one object the mapping made. By default: each relationship mapping
    /// evaluated on the source object it was made from.
    ///
    /// - Throws: ``MigrationError/mappingFailed(entityMapping:object:reason:)`` when a relationship mapping
    ///   fails, and whatever an override throws.
    open func createRelationships(forDestination destination: ManagedObject, in mapping: EntityMapping,
                                  manager: MigrationManager) throws {
        try manager.createDefaultRelationships(forDestination: destination, policy: self)
    }

    /// Called after the relationships of every object the mapping made were set.
    ///
    /// - Throws: whatever the override throws; the migration stops with it.
    open func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// Called once every mapping made its objects and relationships: a last check of the mapping's
    /// objects (fetch them through ``MigrationManager/destinationContext``) before the store is kept.
    ///
    /// - Throws: whatever the override throws; the migration stops with it.
    open func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {}

    /// The mapping's last step.
    ///
    /// - Throws: whatever the override throws; the migration stops with it.
    open func end(_ mapping: EntityMapping, manager: MigrationManager) throws {}

    /// The value of `FUNCTION($entityPolicy, "selector", arguments…)` in one of the mapping's value
    /// expressions: Core Data sends the selector to the policy; override this to answer the selectors the
    /// mapping model uses (`"centsFromDollars:"`), with `arguments` already evaluated on the source object.
    ///
    /// - Throws: by default ``MigrationError/unsupportedMapping(entityMapping:reason:)`` naming the selector
    ///   and the policy class: the policy does not answer it.
    open func callFunction(_ selector: String, arguments: [Any?], manager: MigrationManager) throws -> Any? {
        throw MigrationError.unsupportedMapping(
            entityMapping: manager.currentEntityMapping?.name ?? "?",
            reason: "the migration policy \(String(reflecting: type(of: self))) has no function '\(selector)'")
    }
}
