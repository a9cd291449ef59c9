import Foundation

extension ManagedObjectModel {
    /// The model a Core Data XML store's own objects describe (an XML store names each object's entity and
    /// each value's type, so it opens without the app's model): an entity per object type, spelled as the
    /// store's version hashes spell it; each attribute with the type its values carry; each relationship with
    /// its destination and to-many-ness, and its inverse where the file shows both sides. Property names are
    /// as the file writes them (Core Data writes them in lower case). Every property is optional.
    ///
    /// ```swift
    /// let url = URL(fileURLWithPath: "Notes.xml")
    /// let coordinator = PersistentStoreCoordinator(managedObjectModel: try .derivedModel(ofXMLStoreAt: url))
    /// try coordinator.addPersistentStore(type: .xml, at: url)
    /// ```
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` when the file cannot be read; ``XMLStoreError`` naming
    ///   the line, object and key when it is not a Core Data XML store or its objects contradict each other
    ///   (a key whose type changes between objects, a reference to no object, a destination that does not exist).
    public static func derivedModel(ofXMLStoreAt url: URL) throws -> ManagedObjectModel {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw StoreError.notAStore(path: url.path, reason: "it cannot be read (\(error.localizedDescription))")
        }
        return try XMLStoreModelDerivation.model(of: XMLStoreDocument.parse(data, path: url.path), path: url.path)
    }
}
