import Foundation
import GRDB
import Testing
@testable import OpenCoreData

@Suite struct StoreMetadataOpeningTests {
    static func model(nameOptional: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Note") { Attribute("text", .string, optional: nameOptional) }
        }
    }

    @Test func newStoresCarryTheModelsVersionHashes() throws {
        let model = try Self.model(nameOptional: true)
        let stack = try TestStack(model: model)
        let queue = try DatabaseQueue(path: stack.url.path)
        let (uuid, plist) = try queue.read { db -> (String, Data) in
            let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA")!
            return (row[0], row[1])
        }
        let metadata = try StoreMetadata(plistData: plist)
        #expect(metadata.versionHashes == model.entityVersionHashesByName)
        #expect(metadata.uuidString == uuid)
        #expect(stack.coordinator.persistentStores[0].identifier == uuid)
        #expect(plist.starts(with: Data("bplist00".utf8)))
    }

    @Test func hashOnlyChangesOpenReadOnlyAndUpdateOnRequest() throws {
        let stack = try TestStack(model: Self.model(nameOptional: true))
        let context = stack.context()
        try context.insertNewObject(forEntityName: "Note").setValue("hello", forKey: "text")
        try context.save()
        let changed = try Self.model(nameOptional: false)
        #expect(changed.entityVersionHashesByName != stack.model.entityVersionHashesByName)

        let writable = PersistentStoreCoordinator(managedObjectModel: changed)
        #expect(throws: StoreError.self) { try writable.addPersistentStore(type: .sqlite, at: stack.url) }

        let readOnly = PersistentStoreCoordinator(managedObjectModel: changed)
        try readOnly.addPersistentStore(type: .sqlite, at: stack.url, options: StoreOptions(readOnly: true))

        let updating = PersistentStoreCoordinator(managedObjectModel: changed)
        try updating.addPersistentStore(type: .sqlite, at: stack.url,
                                        options: StoreOptions(updatesMetadataWhenSchemaMatches: true))
        // Now the store is the changed model's: a plain open works.
        let again = PersistentStoreCoordinator(managedObjectModel: changed)
        try again.addPersistentStore(type: .sqlite, at: stack.url)
        let reader = ManagedObjectContext(concurrencyType: .confinement)
        reader.persistentStoreCoordinator = again
        #expect(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Note"))[0].value(forKey: "text") as? String == "hello")
    }
}
