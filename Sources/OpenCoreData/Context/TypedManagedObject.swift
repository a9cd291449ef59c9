import Foundation

/// What every ``ManagedObject`` subclass can do by its type, as Core Data's generated classes do:
/// `Person(context:)`, `Person.fetchRequest()`, `Person.entity()`. `ManagedObject` conforms, so every
/// subclass has them.
///
/// The entity is the one bound to the class: in the context's model for `init(context:)`; for the others,
/// in the model built most recently that binds the class (with a class given in code, or found for a
/// model file's `representedClassName`, see ``ManagedObjectClassRegistry``).
public protocol TypedManagedObject: ManagedObject {}

extension ManagedObject: TypedManagedObject {}

extension TypedManagedObject {
    /// Creates an object of this class's entity and inserts it into `context`.
    ///
    /// - Throws: ``ObjectGraphError/noPersistentStore`` when the context has no coordinator;
    ///   ``ObjectGraphError/unknownEntity(_:)`` when no entity of its model makes objects of this class;
    ///   ``ObjectGraphError/abstractEntity(name:)`` when that entity is abstract.
    public init(context: ManagedObjectContext) throws {
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else {
            throw ObjectGraphError.noPersistentStore
        }
        guard let entity = model.entities.first(where: { $0.managedObjectClass == Self.self }) else {
            throw ObjectGraphError.unknownEntity(Self.entityName)
        }
        guard !entity.isAbstract else {
            throw ObjectGraphError.abstractEntity(name: entity.name)
        }
        self.init(entity: entity, id: ManagedObjectID(temporaryFor: entity))
        context.insert(self)
    }

    /// A request for this class's entity, typed: `let people = try context.fetch(Person.fetchRequest())`.
    public static func fetchRequest() -> FetchRequest<Self> {
        FetchRequest<Self>(entityName: entityName)
    }

    /// The entity bound to this class.
    ///
    /// - Throws: ``ObjectGraphError/unknownEntity(_:)`` when no model in use binds the class.
    public static func entity() throws -> EntityDescription {
        guard let entity = ManagedObjectClassRegistry.boundEntity(of: Self.self) else {
            throw ObjectGraphError.unknownEntity(entityName)
        }
        return entity
    }
}
