import Foundation
import Testing
@testable import OpenCoreData

/// A mapping-model migration carries values kept in `_EXTERNAL_DATA` files to the new store: every value
/// reads back after migrating, into a new file or in place; the folder then holds exactly the files the
/// rows name, and a failed migration leaves the original and its files as they were.
@Suite struct ExternalBinaryStorageMigrationTests {
    static let sourceXML = InteropFixtures.modelXML("""
    <entity name="Photo" representedClassName="Photo">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="price" optional="YES" attributeType="Double"/>
        <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
    </entity>
    """)
    static let destinationXML = InteropFixtures.modelXML("""
    <entity name="Picture" representedClassName="Picture">
        <attribute name="title" optional="YES" attributeType="String"/>
        <attribute name="cents" optional="YES" attributeType="Integer 64"/>
        <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
    </entity>
    """)

    static func models() throws -> (source: ManagedObjectModel, destination: ManagedObjectModel) {
        (try ManagedObjectModel(xmlData: sourceXML, source: "photos"), try ManagedObjectModel(xmlData: destinationXML, source: "pictures"))
    }

    /// Photo → Picture: the name as the title, the price in whole cents (a price of 0.125 fails), the image.
    static func mapping() throws -> MappingModel {
        MappingModel(entityMappings: [EntityMapping(
            name: "PhotoToPicture", mappingType: .transform, sourceEntityName: "Photo", destinationEntityName: "Picture",
            attributeMappings: [
                PropertyMapping(name: "title", valueExpression: try MappingExpression(format: "$source.name")),
                PropertyMapping(name: "cents", valueExpression: try MappingExpression(format: "$source.price * 100")),
                PropertyMapping(name: "image", valueExpression: try MappingExpression(format: "$source.image")),
            ])])
    }

    static func bytes(_ count: Int, seed: UInt8) -> Data { ExternalBinaryStorageTests.bytes(count, seed: seed) }

    /// Two values in files, one inline, one nil.
    static let images: [String: Data?] = [
        "a": bytes(200_000, seed: 31), "b": bytes(20, seed: 32), "c": bytes(300_000, seed: 33), "d": nil,
    ]

    /// A source store at `url` with `images`, and `extra` photos after them.
    static func sourceStore(at url: URL, extra: [(String, Double, Data)] = []) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try models().source)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for (name, image) in images.sorted(by: { $0.key < $1.key }) {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(1.0, forKey: "price")
            try photo.setValue(image, forKey: "image")
        }
        try context.save()
        for (name, price, image) in extra {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(price, forKey: "price")
            try photo.setValue(image, forKey: "image")
        }
        try context.save()
    }

    /// Each object's `key` and image, read through a coordinator of its own.
    static func images(ofStoreAt url: URL, model: ManagedObjectModel, entity: String, key: String) throws -> [String: Data?] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        var result: [String: Data?] = [:]
        for object in try context.fetch(OpenCoreData.FetchRequest<ManagedObject>(entityName: entity)) {
            result[try #require(try object.value(forKey: key) as? String)] = try object.value(forKey: "image") as? Data
        }
        return result
    }

    static func files(of store: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: ExternalBinaryStorage.directory(forStoreAt: store).path)) ?? [])
    }

    static func hiddenEntries(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }.sorted()
    }

    @Test func migratingIntoANewStoreCarriesTheFilesAndLeavesTheSourceAlone() throws {
        let directory = TemporaryDirectory()
        let (sourceModel, destinationModel) = try Self.models()
        let source = directory.file("photos.sqlite"), destination = directory.file("pictures.sqlite")
        try Self.sourceStore(at: source)
        let sourceFiles = Self.files(of: source)
        #expect(sourceFiles.count == 2)

        try MappingModelMigration.migrate(storeAt: source, sourceModel: sourceModel, destinationModel: destinationModel,
                                          mapping: try Self.mapping(), into: destination)
        #expect(try Self.images(ofStoreAt: destination, model: destinationModel, entity: "Picture", key: "title") == Self.images)
        #expect(Self.files(of: destination).count == 2)
        #expect(Self.files(of: destination) == (try ExternalBinaryStorage.referencedFiles(ofStoreAt: destination, model: destinationModel)))
        #expect(Self.files(of: source) == sourceFiles)
        #expect(try Self.images(ofStoreAt: source, model: sourceModel, entity: "Photo", key: "name") == Self.images)
    }

    @Test func migratingInPlaceKeepsEveryValueReadableAndOnlyTheNamedFiles() throws {
        let directory = TemporaryDirectory()
        let (sourceModel, destinationModel) = try Self.models()
        let store = directory.file("photos.sqlite")
        try Self.sourceStore(at: store)
        let before = Self.files(of: store)

        try MappingModelMigration.migrateInPlace(storeAt: store, sourceModel: sourceModel, destinationModel: destinationModel,
                                                 mapping: try Self.mapping())
        #expect(try Self.images(ofStoreAt: store, model: destinationModel, entity: "Picture", key: "title") == Self.images)
        let after = Self.files(of: store)
        #expect(after.count == 2)
        #expect(after.isDisjoint(with: before), "the values before the migration were let go")
        #expect(after == (try ExternalBinaryStorage.referencedFiles(ofStoreAt: store, model: destinationModel)))
        // The copies made on the way are gone, and so are their folders.
        #expect(try Self.hiddenEntries(in: directory) == [".photos_SUPPORT"])
    }

    @Test func aFailedMigrationLeavesTheStoreAndItsFilesAsTheyWere() throws {
        let directory = TemporaryDirectory()
        let (sourceModel, destinationModel) = try Self.models()
        let store = directory.file("photos.sqlite")
        // The last photo's price is not a whole number of cents: the mapping fails on it.
        try Self.sourceStore(at: store, extra: [("e", 2.0, Self.bytes(250_000, seed: 34)), ("z", 0.125, Data("z".utf8))])
        let before = Self.files(of: store)
        #expect(before.count == 3)
        let rows = try MigrationFixtures.bytes(store)

        // Into a new store, a batch at a time: the batches saved before the failure wrote files, removed with it.
        let destination = directory.file("pictures.sqlite")
        #expect(throws: MigrationError.self) {
            try MappingModelMigration.migrate(storeAt: store, sourceModel: sourceModel, destinationModel: destinationModel,
                                              mapping: try Self.mapping(), into: destination, batchSize: 1)
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(!FileManager.default.fileExists(atPath: ExternalBinaryStorage.directory(forStoreAt: destination)
            .deletingLastPathComponent().path))

        // In place: nothing written back, no file added or removed.
        #expect(throws: MigrationError.self) {
            try MappingModelMigration.migrateInPlace(storeAt: store, sourceModel: sourceModel, destinationModel: destinationModel,
                                                     mapping: try Self.mapping())
        }
        #expect(Self.files(of: store) == before)
        #expect(try MigrationFixtures.bytes(store) == rows)
        var expected = Self.images
        expected["e"] = Self.bytes(250_000, seed: 34)
        expected["z"] = Data("z".utf8)
        #expect(try Self.images(ofStoreAt: store, model: sourceModel, entity: "Photo", key: "name") == expected)
        #expect(try Self.hiddenEntries(in: directory) == [".photos_SUPPORT"])
    }

    @Test func anInferredMigrationOnOpenKeepsEveryValueAndFile() throws {
        let directory = TemporaryDirectory()
        let old = try ExternalBinaryStorageTests.model()
        let new = try ManagedObjectModel(xmlData: InteropFixtures.modelXML("""
            <entity name="Photo" representedClassName="Photo">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="plain" optional="YES" attributeType="Binary"/>
                <attribute name="info" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="caption" optional="YES" attributeType="String"/>
            </entity>
            """), source: "photos 2")
        let bundle = directory.file("Photos.xcdatamodeld")
        try ManagedObjectModel.writeModelBundle(versions: [("Photos", old), ("Photos 2", new)], currentVersion: "Photos 2", to: bundle)
        let store = directory.file("photos.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: old)
            try coordinator.addPersistentStore(type: .sqlite, at: store)
            defer { coordinator.persistentStores.forEach(coordinator.remove) }
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            for (name, image) in Self.images {
                let photo = try context.insertNewObject(forEntityName: "Photo")
                try photo.setValue(name, forKey: "name")
                try photo.setValue(image, forKey: "image")
            }
            try context.save()
        }
        let before = Self.files(of: store)
        #expect(before.count == 2)

        let current = try ManagedObjectModel(contentsOf: bundle)
        #expect(try Self.images(ofStoreAt: store, model: current, entity: "Photo", key: "name") == Self.images)
        #expect(try ModelVersionBundle(contentsOf: bundle).version(ofStoreAt: store)?.name == "Photos 2")
        #expect(Self.files(of: store) == before)
    }
}
