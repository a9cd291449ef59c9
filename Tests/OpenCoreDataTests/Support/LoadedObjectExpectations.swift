import Foundation
import Testing
@testable import OpenCoreData

/// What a batch load must hand out at a position, against a plain fetch's `(ID, name)` there: the same
/// object the context has registered, and either the name or (for a row deleted behind the context's back)
/// a fault that reports the row gone.
func expectLoadedObject(_ object: ManagedObject, in context: ManagedObjectContext,
                        matching expected: (id: ManagedObjectID, name: String), deleted: Set<ManagedObjectID>,
                        position: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(object.objectID == expected.id, "position \(position)", sourceLocation: sourceLocation)
    #expect(context.registeredObject(for: object.objectID) === object, sourceLocation: sourceLocation)
    if deleted.contains(object.objectID) {
        #expect(object.isFault, sourceLocation: sourceLocation)
        #expect(throws: ObjectGraphError.self, sourceLocation: sourceLocation) { try object.value(forKey: "name") }
    } else {
        #expect(try object.value(forKey: "name") as? String == expected.name, "position \(position)",
                sourceLocation: sourceLocation)
    }
}
