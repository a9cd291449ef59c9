import Foundation
@testable import OpenCoreData

// What this target checks, for any bytes given as the XML of a `.xcdatamodel`'s `contents` file:
// - `ManagedObjectModel(xmlData:source:)` returns a model or throws a `ModelError`; it never traps, overflows
//   the stack or throws another error type;
// - a model it returns is usable: its entities, properties and version hashes can be read, its store schema
//   can be mapped, and an in-memory SQLite store can be created for it (errors are fine, traps are not).
// A broken property calls `fuzzFailure`, which traps, so that libFuzzer saves the input as a crash.

/// Traps with a message; only this fuzz target does this, never the library.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property failed: " + message)
}

func checkModelXML(_ data: Data) {
    let model: ManagedObjectModel
    do {
        model = try ManagedObjectModel(xmlData: data, source: "fuzz input")
    } catch is ModelError {
        return
    } catch {
        fuzzFailure("ManagedObjectModel(xmlData:) threw \(type(of: error)), not a ModelError: \(error)")
    }
    var touched = 0
    for entity in model.entities {
        touched &+= entity.versionHash.count
        touched &+= entity.allProperties.count &+ entity.allSubentities.count
        for attribute in entity.attributesByName.values {
            touched &+= attribute.versionHash.count
        }
        for relationship in entity.relationshipsByName.values {
            touched &+= relationship.versionHash.count &+ (relationship.inverseRelationship == nil ? 0 : 1)
        }
        touched &+= model.schema.mapping(for: entity).storage.count
    }
    _ = model.entityVersionHashesByName.count &+ touched
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    _ = try? coordinator.addPersistentStore(type: .inMemory)
}
