import Foundation
import Synchronization
import Testing
@testable import OpenCoreData

/// A staged migration carries values kept in `_EXTERNAL_DATA` files: a custom stage's handlers read them
/// and write new ones at the stage's versions, lightweight stages keep them, the folder afterwards holds
/// exactly the files the rows name, and a failed migration leaves the store and its folder as they were.
@Suite struct ExternalBinaryStorageStagedMigrationTests {
    static func bytes(_ count: Int, seed: UInt8) -> Data { ExternalBinaryStorageTests.bytes(count, seed: seed) }

    /// "Photos" → "Photos 2" adds a thumbnail kept outside rows too; "Photos 3" adds a caption.
    static func models() throws -> [(name: String, model: ManagedObjectModel)] {
        let image = #"<attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>"#
        let thumbnail = #"<attribute name="thumbnail" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>"#
        let caption = #"<attribute name="caption" optional="YES" attributeType="String"/>"#
        func model(_ extra: String, _ source: String) throws -> ManagedObjectModel {
            try ManagedObjectModel(xmlData: InteropFixtures.modelXML("""
                <entity name="Photo" representedClassName="Photo">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    \(image)
                    \(extra)
                </entity>
                """), source: source)
        }
        return [("Photos", try model("", "photos")), ("Photos 2", try model(thumbnail, "photos 2")),
                ("Photos 3", try model(thumbnail + caption, "photos 3"))]
    }

    /// Two values in files, one inline, one nil.
    static let images: [String: Data?] = [
        "a": bytes(200_000, seed: 51), "b": bytes(20, seed: 52), "c": bytes(300_000, seed: 53), "d": nil,
    ]

    /// A bundle of the three versions and a store at "Photos" holding `images`.
    static func fixture(_ directory: TemporaryDirectory) throws -> (bundle: ModelVersionBundle, store: URL) {
        let versions = try models()
        let url = directory.file("Photos.xcdatamodeld")
        try ManagedObjectModel.writeModelBundle(versions: versions, currentVersion: "Photos 3", to: url)
        let store = directory.file("photos.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: versions[0].model)
        try coordinator.addPersistentStore(type: .sqlite, at: store)
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        for (name, image) in images.sorted(by: { $0.key < $1.key }) {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(image, forKey: "image")
        }
        try context.save()
        return (try ModelVersionBundle(contentsOf: url), store)
    }

    /// Each photo's `key` value by name, read through a coordinator of its own.
    static func values(_ key: String, ofStoreAt url: URL, model: ManagedObjectModel) throws -> [String: Data?] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return try photos(in: context, key)
    }

    static func photos(in context: ManagedObjectContext, _ key: String) throws -> [String: Data?] {
        var result: [String: Data?] = [:]
        for photo in try context.fetch(FetchRequest<ManagedObject>(entityName: "Photo")) {
            result[try #require(try photo.value(forKey: "name") as? String)] = try photo.value(forKey: key) as? Data
        }
        return result
    }

    /// The files of the store's folder with their contents.
    static func folder(of store: URL) -> [String: Data] {
        let folder = ExternalBinaryStorage.directory(forStoreAt: store)
        var result: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            result[name] = try? Data(contentsOf: folder.appendingPathComponent(name))
        }
        return result
    }

    static func hiddenEntries(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }.sorted()
    }

    /// What the handlers saw, shared with the `@Sendable` handlers.
    final class Seen: Sendable {
        let values = Mutex<[String: [String: Data?]]>([:])
        func record(_ handler: String, _ photos: [String: Data?]) { values.withLock { $0[handler] = photos } }
        subscript(handler: String) -> [String: Data?]? { values.withLock { $0[handler] } }
    }

    struct ToldToFail: Error {}

    /// A custom stage "Photos" → "Photos 2": `willMigrate` records the images and replaces "a" (with
    /// another file) and "b" (inline with a file); `didMigrate` records them and gives each photo with an
    /// image a thumbnail kept in a file, then throws when `failing`. Then lightweight to "Photos 3".
    static func manager(seen: Seen, failing: Bool = false) -> StagedMigrationManager {
        let stage = CustomMigrationStage(migratingFrom: "Photos", to: "Photos 2")
        stage.willMigrateHandler = { manager, _ in
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                seen.record("willMigrate", try photos(in: context, "image"))
                for photo in try context.fetch(FetchRequest<ManagedObject>(entityName: "Photo")) {
                    switch try photo.value(forKey: "name") as? String {
                    case "a": try photo.setValue(bytes(250_000, seed: 61), forKey: "image")
                    case "b": try photo.setValue(bytes(140_000, seed: 62), forKey: "image")
                    default: break
                    }
                }
                try context.save()
            }
        }
        stage.didMigrateHandler = { manager, _ in
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                seen.record("didMigrate", try photos(in: context, "image"))
                for photo in try context.fetch(FetchRequest<ManagedObject>(entityName: "Photo")) {
                    guard let image = try photo.value(forKey: "image") as? Data else { continue }
                    try photo.setValue(image.prefix(135_000) + Data([7]), forKey: "thumbnail")
                }
                try context.save()
            }
            if failing { throw ToldToFail() }
        }
        return StagedMigrationManager(stages: [stage, LightweightMigrationStage(["Photos 2", "Photos 3"])])
    }

    @Test func handlersReadAndWriteValuesKeptInFiles() throws {
        let directory = TemporaryDirectory()
        let (bundle, store) = try Self.fixture(directory)
        let before = Self.folder(of: store)
        #expect(before.count == 2)
        let seen = Seen()

        try StoreMigration.migrate(storeAt: store, to: bundle, stagedMigrationManager: Self.manager(seen: seen))

        #expect(seen["willMigrate"] == Self.images)
        var images = Self.images
        images["a"] = Self.bytes(250_000, seed: 61)
        images["b"] = Self.bytes(140_000, seed: 62)
        #expect(seen["didMigrate"] == images)
        let model = bundle.current.model
        #expect(try Self.values("image", ofStoreAt: store, model: model) == images)
        let thumbnails = try Self.values("thumbnail", ofStoreAt: store, model: model)
        for (name, image) in images {
            #expect(thumbnails[name] == image.map { $0.prefix(135_000) + Data([7]) }, "thumbnail of \(name)")
        }
        // The folder holds exactly the files the rows name: "c"'s image as it was, the new images and thumbnails.
        let after = Self.folder(of: store)
        #expect(after.count == 6)
        #expect(Set(after.keys) == (try ExternalBinaryStorage.referencedFiles(ofStoreAt: store, model: model)))
        let kept = Set(before.keys).intersection(after.keys)
        #expect(kept.count == 1)
        for name in kept { #expect(after[name] == before[name]) }
        #expect(try Self.hiddenEntries(in: directory) == [".photos_SUPPORT"])
    }

    @Test func aFailedStagedMigrationLeavesTheStoreAndItsFolderAsTheyWere() throws {
        let directory = TemporaryDirectory()
        let (bundle, store) = try Self.fixture(directory)
        let before = Self.folder(of: store)
        let rows = try MigrationFixtures.bytes(store)

        #expect(throws: MigrationError.self) {
            try StoreMigration.migrate(storeAt: store, to: bundle, stagedMigrationManager: Self.manager(seen: Seen(), failing: true))
        }
        #expect(try MigrationFixtures.bytes(store) == rows)
        #expect(Self.folder(of: store) == before)
        #expect(try Self.values("image", ofStoreAt: store, model: bundle.versions[0].model) == Self.images)
        #expect(try Self.hiddenEntries(in: directory) == [".photos_SUPPORT"])
    }

    @Test func lightweightStagesKeepEveryValueAndFile() throws {
        let directory = TemporaryDirectory()
        let (bundle, store) = try Self.fixture(directory)
        let before = Self.folder(of: store)

        try StoreMigration.migrate(storeAt: store, to: bundle,
                                   stagedMigrationManager: StagedMigrationManager(stages: [LightweightMigrationStage(["Photos", "Photos 2", "Photos 3"])]))
        #expect(try Self.values("image", ofStoreAt: store, model: bundle.current.model) == Self.images)
        #expect(Self.folder(of: store) == before)
        #expect(try Self.hiddenEntries(in: directory) == [".photos_SUPPORT"])
    }

    /// Opening with the manager runs the same migration: what the handlers wrote is readable at once.
    @Test func openingWithTheManagerMigratesTheFiles() throws {
        let directory = TemporaryDirectory()
        let (bundle, store) = try Self.fixture(directory)
        let seen = Seen()
        let container = PersistentContainer(name: "Photos", managedObjectModel: bundle.current.model)
        let description = PersistentStoreDescription(url: store)
        try description.setOption(Self.manager(seen: seen), forKey: StoreOptions.Key.stagedMigrationManager)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let images = try context.performAndWait { try Self.photos(in: context, "image") }
        let coordinator = container.persistentStoreCoordinator
        coordinator.persistentStores.forEach(coordinator.remove)

        #expect(seen["willMigrate"] == Self.images)
        #expect(images["a"] == Self.bytes(250_000, seed: 61))
        #expect(images["c"] == Self.images["c"])
        #expect(Set(Self.folder(of: store).keys) == (try ExternalBinaryStorage.referencedFiles(ofStoreAt: store, model: bundle.current.model)))
    }
}
