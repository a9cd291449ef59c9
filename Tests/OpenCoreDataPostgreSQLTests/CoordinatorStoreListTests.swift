import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Core Data code that walks a coordinator's stores works whatever their kind: `persistentStores` lists
/// SQLite and PostgreSQL stores alike, and what such code does with each (its identifier, options, metadata,
/// removing it) works on either.
@Suite struct CoordinatorStoreListTests {
    @Test(arguments: agnosticKinds)
    func everyStoreIsListedWithItsIdentity(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        let coordinator = try location.coordinator()
        let stores = coordinator.persistentStores
        #expect(stores.count == 1)
        #expect(coordinator.persistentStoreCount == 1)
        let store = try #require(stores.first)
        #expect(store.typeName == (kind == .sqlite ? "SQLite" : "PostgreSQL"))
        #expect(store is SQLiteStore == (kind == .sqlite))
        #expect(store is PostgreSQLStore == (kind == .postgreSQL))
        // The identifier is the one the store's metadata carries, as Core Data's NSStoreUUID.
        let metadata = try coordinator.metadata(for: store)
        #expect(metadata["NSStoreUUID"] as? String == store.identifier)
        #expect(metadata["NSStoreType"] as? String == store.typeName)
        #expect(!store.isReadOnly)
    }

    @Test(arguments: agnosticKinds)
    func appMetadataRoundTripsThroughAnotherCoordinator(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        let writer = try location.coordinator()
        let store = try #require(writer.persistentStores.first)
        var metadata = try writer.metadata(for: store)
        metadata["AppSchemaNote"] = "seeded"
        try writer.setMetadata(metadata, for: store)
        let reader = try location.coordinator()
        let read = try reader.metadata(for: try #require(reader.persistentStores.first))
        #expect(read["AppSchemaNote"] as? String == "seeded")
        // A key the library keeps cannot be changed, on either kind.
        var changed = metadata
        changed["NSStoreUUID"] = "not-the-store"
        do {
            try writer.setMetadata(changed, for: store)
            Issue.record("a library key was changed")
        } catch ObjectGraphError.libraryMetadataKey(let key) {
            #expect(key == "NSStoreUUID")
        }
        #expect(try reader.metadata(for: try #require(reader.persistentStores.first))["NSStoreUUID"] as? String == store.identifier)
    }

    @Test(arguments: agnosticKinds)
    func aReadOnlyStoreRefusesMetadataWrites(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        _ = try location.coordinator()
        let reader = try location.coordinator(options: StoreOptions(readOnly: true))
        let store = try #require(reader.persistentStores.first)
        #expect(store.isReadOnly)
        #expect(throws: StoreError.self) { try reader.setMetadata(["AppKey": 1], for: store) }
    }

    @Test(arguments: agnosticKinds)
    func removingAnyStoreEmptiesTheList(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make())
        let coordinator = try location.coordinator()
        coordinator.persistentStores.forEach(coordinator.remove)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(coordinator.persistentStoreCount == 0)
        if kind == .postgreSQL {
            #expect(coordinator.postgreSQLStores.isEmpty)
        }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        #expect(throws: ObjectGraphError.self) { try context.fetch(FetchRequest<ManagedObject>(entityName: "Author")) }
    }
}
