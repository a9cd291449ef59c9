import Foundation
import Testing
@testable import OpenCoreData

/// A store with persistent history keeps it through a mapping-model migration (the Garage fixture: Owner
/// becomes Person, Car becomes Vehicle with scrapped cars left out, Brand is copied, Note dropped): the
/// transactions stay, numbered as they were; each change names the object the migration made of it (new
/// entity, new key); changes of objects the migration did not carry keep their old keys and tombstones
/// under the entity of the same name (or are left out when the new model has none), and no new object
/// takes one of those keys; the migration records its own transaction.
@Suite struct PersistentHistoryMappingMigrationTests {
    /// The Garage bundle, copied into `directory` with Brand's `name` kept in history after deletion (both
    /// versions), so deletes carry tombstones.
    static func bundle(in directory: TemporaryDirectory) throws -> ModelVersionBundle {
        let url = directory.file("Garage.xcdatamodeld")
        try FileManager.default.copyItem(at: InteropFixtures.url("Garage.xcdatamodeld"), to: url)
        for version in ["Garage.xcdatamodel", "Garage 2.xcdatamodel"] {
            let contents = url.appendingPathComponent(version).appendingPathComponent("contents")
            let brand = #"""
                <entity name="Brand" representedClassName="Brand" syncable="YES" codeGenerationType="class">
                        <attribute name="country" optional="YES" attributeType="String"/>
                        <attribute name="name" attributeType="String"/>
                """#
            let text = try String(contentsOf: contents, encoding: .utf8)
            try #require(text.contains(brand))
            try text.replacingOccurrences(of: brand, with: brand.replacingOccurrences(
                of: #"<attribute name="name" attributeType="String"/>"#,
                with: #"<attribute name="name" attributeType="String" preserveAfterDeletion="YES"/>"#))
                .write(to: contents, atomically: true, encoding: .utf8)
        }
        return try ModelVersionBundle(contentsOf: url)
    }

    static func context(_ coordinator: PersistentStoreCoordinator, author: String? = nil) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = author
        return context
    }

    /// A "Garage" store with three transactions: inserts (owners, cars, one scrapped, brands, a note), an
    /// update of a car, deletes of a brand and an owner. Returns the history, and what each object the
    /// migration should carry is called: entity key in the old store → (new entity, natural key).
    static func garageStore(at url: URL, model: ManagedObjectModel) throws
        -> (history: [PersistentHistoryTransaction], carried: [String: (entity: String, label: String)], deletedBrandKey: Int64) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(persistentHistoryTracking: true))
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = Self.context(coordinator, author: "garage")
        func insert(_ entity: String, _ values: [String: Any]) throws -> ManagedObject {
            let object = try context.insertNewObject(forEntityName: entity)
            for (key, value) in values { try object.setValue(value, forKey: key) }
            return object
        }
        let ann = try insert("Owner", ["name": "ann"]), bob = try insert("Owner", ["name": "bob"])
        let car = try insert("Car", ["plate": "P-1", "make": "volvo", "owner": ann])
        let scrapped = try insert("Car", ["plate": "P-2", "make": "fiat", "scrapped": true])
        let brands = try ["volvo", "saab", "fiat"].map { try insert("Brand", ["name": $0]) }
        _ = try insert("Note", ["text": "remember"])
        try context.save()
        try car.setValue("saab", forKey: "make")
        try car.setValue("240", forKey: "model")
        try context.save()
        let deletedBrandKey = brands[1].objectID.primaryKey
        context.delete(brands[1])
        context.delete(bob)
        try context.save()
        _ = scrapped

        var carried: [String: (String, String)] = [:]
        carried["Owner \(ann.objectID.primaryKey)"] = ("Person", "ann")
        carried["Car \(car.objectID.primaryKey)"] = ("Vehicle", "P-1")
        for (index, name) in ["volvo", "fiat"].enumerated() {
            carried["Brand \([brands[0], brands[2]][index].objectID.primaryKey)"] = ("Brand", name)
        }
        // The deleted brand keeps its old key, under the entity of the same name.
        carried["Brand \(deletedBrandKey)"] = ("Brand", "#\(deletedBrandKey)")
        return (try PersistentHistoryTests.history(context).transactions, carried, deletedBrandKey)
    }

    /// Each transaction as "author: type entity label, …", labels being an object's natural key (or "#key"
    /// for a key no object of the store has).
    static func summary(_ transactions: [PersistentHistoryTransaction], labels: (ManagedObjectID) -> String) -> [String] {
        transactions.map { transaction in
            "\(transaction.author ?? "-"): " + (transaction.changes ?? []).map {
                "\($0.changeType) \($0.changedObjectID.entity.name) \(labels($0.changedObjectID))"
            }.joined(separator: ", ")
        }
    }

    /// The natural key of the object `id` names in the store `context` reads, or "#key" when there is none.
    static func label(_ id: ManagedObjectID, in context: ManagedObjectContext) -> String {
        let keys = ["Person": "name", "Vehicle": "registration", "Brand": "name", "Garage": "name"]
        guard let key = keys[id.entity.name], let object = try? context.existingObject(with: id),
              let value = try? object.value(forKey: key) as? String else { return "#\(id.primaryKey)" }
        return value
    }

    @Test func theHistoryFollowsTheObjectsTheMigrationMadeAndRecordsTheMigration() throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle(in: directory)
        let old = try #require(bundle.version(named: "Garage")).model
        let new = try #require(bundle.version(named: "Garage 2")).model
        let source = directory.file("garage.sqlite")
        let (before, carried, deletedBrandKey) = try Self.garageStore(at: source, model: old)
        try #require(before.count == 3)
        #expect(before[1].changes?.first?.updatedProperties == ["make", "model"])

        let migrated = directory.file("migrated.sqlite")
        try MappingModelMigration.migrate(storeAt: source, sourceModel: old, destinationModel: new,
                                          mapping: try MappingModel(contentsOf: InteropFixtures.url("Garage1to2.xcmappingmodel")),
                                          into: migrated, batchSize: 2)

        let coordinator = PersistentStoreCoordinator(managedObjectModel: new)
        try coordinator.addPersistentStore(type: .sqlite, at: migrated, options: StoreOptions(persistentHistoryTracking: true))
        let context = Self.context(coordinator, author: "after")
        let after = try PersistentHistoryTests.history(context).transactions
        try #require(after.count == 4)
        #expect(after.prefix(3).map(\.transactionNumber) == before.map(\.transactionNumber))

        // What the old changes should say now: carried objects by their new entity and natural key; the
        // scrapped car, the note and the deleted owner (entities the new model does not have) left out.
        let expected = before.map { transaction in
            "\(transaction.author ?? "-"): " + (transaction.changes ?? []).compactMap { change -> String? in
                guard let now = carried["\(change.changedObjectID.entity.name) \(change.changedObjectID.primaryKey)"] else { return nil }
                return "\(change.changeType) \(now.entity) \(now.label)"
            }.joined(separator: ", ")
        }
        #expect(Self.summary(Array(after.prefix(3))) { Self.label($0, in: context) } == expected)
        #expect(expected[0] == "garage: insert Person ann, insert Vehicle P-1, insert Brand volvo, insert Brand #\(deletedBrandKey), insert Brand fiat")
        // Updated properties follow by name: Vehicle has `model`, not `make`.
        #expect(after[1].changes?.first?.updatedProperties == ["model"])
        // The deleted brand keeps its tombstone, and its old key names no brand of the new store.
        let deletion = try #require(after[2].changes?.first)
        #expect(deletion.changeType == .delete && deletion.tombstone == ["name": .text("saab")])
        #expect(try context.fetch(FetchRequest<ManagedObject>(entityName: "Brand")).allSatisfy { $0.objectID.primaryKey > deletedBrandKey })

        let migration = after[3]
        #expect(migration.author == PersistentHistoryTransaction.migrationAuthor)
        #expect(migration.contextName == "Garage → Garage 2")
        #expect(migration.changes == [])
        #expect(migration.transactionNumber > before[2].transactionNumber)

        // Saves go on recording, numbered after the migration's.
        let garage = try context.insertNewObject(forEntityName: "Garage")
        try garage.setValue("north", forKey: "name")
        try context.save()
        let next = try PersistentHistoryTests.history(context, after: migration.token).transactions
        #expect(Self.summary(next) { Self.label($0, in: context) } == ["after: insert Garage north"])
        #expect(next.first.map { $0.transactionNumber > migration.transactionNumber } == true)
    }

    @Test func openingThroughAMappingModelKeepsTheHistoryAndTheReaders() throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle(in: directory)
        let store = directory.file("garage.sqlite")
        let (before, _, _) = try Self.garageStore(at: store, model: try #require(bundle.version(named: "Garage")).model)
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try #require(bundle.version(named: "Garage")).model)
            try coordinator.addPersistentStore(type: .sqlite, at: store, options: StoreOptions(persistentHistoryTracking: true))
            try coordinator.registerPersistentHistoryReader(named: "indexer", seenThrough: before[0].token)
            coordinator.persistentStores.forEach(coordinator.remove)
        }

        let current = try ManagedObjectModel(contentsOf: bundle.url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: current)
        var options = StoreOptions(persistentHistoryTracking: true)
        options.mappingModels = [try MappingModel(contentsOf: InteropFixtures.url("Garage1to2.xcmappingmodel"))]
        try coordinator.addPersistentStore(type: .sqlite, at: store, options: options)
        let after = try PersistentHistoryTests.history(Self.context(coordinator)).transactions
        #expect(after.map(\.author) == before.map(\.author) + [PersistentHistoryTransaction.migrationAuthor])
        #expect(try coordinator.persistentHistoryReaders().map(\.name) == ["indexer"])
        #expect(try coordinator.persistentHistoryReaders().first?.seenThrough == before[0].token)
    }
}
