import Foundation

extension ManagedObject {
    /// A fetched property's objects: fetched the first time, then the same objects (by ID) until the object
    /// is refreshed, as Core Data keeps them. Objects since deleted from the context are left out.
    func fetchedValue(_ property: FetchedPropertyDescription) throws -> [ManagedObject] {
        let context = try context()
        if let ids = fetchedResults[property.name] {
            return ids.compactMap { id in
                guard let object = try? context.object(with: id), !object.isDeleted else { return nil }
                return object
            }
        }
        let objects: [ManagedObject] = try context.fetch(property.fetchRequest(for: self))
        fetchedResults[property.name] = objects.map(\.objectID)
        return objects
    }
}
