import Foundation

extension EntityDescription {
    /// A new object of the entity named `entityName`, inserted into `context` (Core Data's
    /// `NSEntityDescription.insertNewObject(forEntityName:into:)`; the same as
    /// ``ManagedObjectContext/insertNewObject(forEntityName:)``).
    ///
    /// - Throws: what ``ManagedObjectContext/insertNewObject(forEntityName:)`` throws: an unknown entity name,
    ///   an abstract entity, a context without a model.
    public static func insertNewObject(forEntityName entityName: String, into context: ManagedObjectContext) throws -> ManagedObject {
        try context.insertNewObject(forEntityName: entityName)
    }
}
