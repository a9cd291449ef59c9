import Foundation

/// An object of the graph: an instance of an entity, owned by one context and used on its queue.
open class ManagedObject: KeyValueCoding {
    /// The object's entity.
    public let entity: EntityDescription
    /// The object's identity.
    public internal(set) var objectID: ManagedObjectID

    /// Creates an object of an entity (for subclasses and the context; use `context.insert`).
    public required init(entity: EntityDescription, id: ManagedObjectID) {
        self.entity = entity
        self.objectID = id
    }

    public func value(forKey key: String) throws -> Any? {
        nil
    }
}
