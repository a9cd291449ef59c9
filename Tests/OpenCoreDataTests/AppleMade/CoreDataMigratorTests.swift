import Testing
import OpenCoreData   // and nothing else: it brings Foundation's names, as `import CoreData` does

// A progressive migrator written as a Core Data app writes one, in Core Data's words with the `NS` prefix
// dropped: it finds the model version that wrote a store from the store's metadata, walks the versions one
// step at a time through the app's own mapping models (inferring the steps that have none), each step into a
// new file with `MigrationManager`, and puts the result in place of the store. It runs over the stores the
// public apps wibosco/CoreDataMigration-Example and wibosco/CoreDataMigrationRevised-Example ship with their
// tests, the one whose data is still in its `-wal` included. What a port still changes is `try` where this
// library throws and Core Data raises or crashes (PortingFromCoreData.md).

/// The app's migration policy from version 2 to 3 (both apps name it `Post2ToPost3MigrationPolicy`): the
/// revised app gives each post one section holding its content, the original one a `Color` made from its hex
/// colour.
final class Post2ToPost3MigrationPolicy: EntityMigrationPolicy {
    struct NoPost: Error {}

    override func createDestinationInstances(forSource sInstance: ManagedObject, in mapping: EntityMapping,
                                             manager: MigrationManager) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard let destinationPost = try manager.destinationInstances(forEntityMappingName: mapping.name,
                                                                     sourceInstances: [sInstance]).first,
              let context = destinationPost.managedObjectContext else {
            throw NoPost()
        }
        if destinationPost.entity.relationshipsByName["sections"] != nil {
            let sourceBody = try sInstance.value(forKey: "content") as? String
            let sourceTitle = sourceBody.map { $0.prefix(4).appending("...") }
            let section = try EntityDescription.insertNewObject(forEntityName: "Section", into: context)
            try section.setValue(sourceTitle, forKey: "title")
            try section.setValue(sourceBody, forKey: "body")
            try section.setValue(destinationPost, forKey: "post")
            try section.setValue(0, forKey: "index")
            try destinationPost.setValue(Set([section]), forKey: "sections")
        } else {
            let color = try EntityDescription.insertNewObject(forEntityName: "Color", into: context)
            try color.setValue(UUID().uuidString, forKey: "colorID")
            try color.setValue(try sInstance.value(forKey: "hexColor"), forKey: "hex")
            try destinationPost.setValue(color, forKey: "color")
        }
    }

    /// Registers the class under the name both apps' mapping models give (Swift has no `NSClassFromString`).
    static func register() {
        MigrationManager.register(policy: Post2ToPost3MigrationPolicy.self,
                                  forClassName: "CoreDataMigration_Example.Post2ToPost3MigrationPolicy")
    }
}

/// The model versions of an app, oldest first, in a folder of resources (its `Bundle`).
struct CoreDataMigrationVersions {
    enum MigrationError: Error {
        case versionUnknown
        case mappingModelNotFound
    }

    let bundle: Bundle
    let modelName: String
    let versions: [String]

    var current: String { versions[versions.count - 1] }

    func managedObjectModel(forVersion version: String) throws -> ManagedObjectModel {
        let url = bundle.bundleURL.appendingPathComponent("\(modelName).xcdatamodeld")
        return try ManagedObjectModel(contentsOf: url, version: version)
    }

    /// The version whose model wrote the store whose metadata is `metadata`.
    func compatibleVersion(forStoreMetadata metadata: [String: Any]) throws -> String {
        for version in versions {
            if try managedObjectModel(forVersion: version).isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
                return version
            }
        }
        throw MigrationError.versionUnknown
    }
}

/// One step of the walk: two neighbouring versions and the mapping model between them.
struct CoreDataMigrationStep {
    let sourceModel: ManagedObjectModel
    let destinationModel: ManagedObjectModel
    let mappingModel: MappingModel

    init(sourceVersion: String, destinationVersion: String, in versions: CoreDataMigrationVersions) throws {
        sourceModel = try versions.managedObjectModel(forVersion: sourceVersion)
        destinationModel = try versions.managedObjectModel(forVersion: destinationVersion)
        // The app's own mapping model where it ships one, else the inferred one.
        if let custom = MappingModel(from: [versions.bundle], forSourceModel: sourceModel, destinationModel: destinationModel) {
            mappingModel = custom
        } else {
            mappingModel = try MappingModel.inferredMappingModel(forSourceModel: sourceModel, destinationModel: destinationModel)
        }
    }
}

/// The migrator.
struct CoreDataMigrator {
    let versions: CoreDataMigrationVersions

    func requiresMigration(at storeURL: URL) throws -> Bool {
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: storeURL, options: nil)
        return try versions.compatibleVersion(forStoreMetadata: metadata) != versions.current
    }

    func migrateStore(at storeURL: URL) throws {
        try forceWALCheckpointingForStore(at: storeURL)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: storeURL, options: nil)
        var version = try versions.compatibleVersion(forStoreMetadata: metadata)
        var currentURL = storeURL
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        while let index = versions.versions.firstIndex(of: version), index + 1 < versions.versions.count {
            let next = versions.versions[index + 1]
            let step = try CoreDataMigrationStep(sourceVersion: version, destinationVersion: next, in: versions)
            let manager = MigrationManager(sourceModel: step.sourceModel, destinationModel: step.destinationModel)
            let destinationURL = temporary.appendingPathComponent(UUID().uuidString)
            try manager.migrateStore(from: currentURL, sourceType: SQLiteStoreType, options: nil, with: step.mappingModel,
                                     toDestinationURL: destinationURL, destinationType: SQLiteStoreType, destinationOptions: nil)
            if currentURL != storeURL { try destroyStore(at: currentURL) }
            currentURL = destinationURL
            version = next
        }
        guard currentURL != storeURL else { return }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        try coordinator.replacePersistentStore(at: storeURL, destinationOptions: nil, withPersistentStoreFrom: currentURL,
                                               sourceOptions: nil, ofType: SQLiteStoreType)
        try destroyStore(at: currentURL)
    }

    func destroyStore(at storeURL: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        try coordinator.destroyPersistentStore(at: storeURL, ofType: SQLiteStoreType, options: nil)
    }

    /// Moves a store's `-wal` into its file by opening it in rollback-journal mode, as the app does before
    /// migrating: the migration then reads the file alone.
    func forceWALCheckpointingForStore(at storeURL: URL) throws {
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: storeURL, options: nil)
        let currentModel = try versions.managedObjectModel(forVersion: try versions.compatibleVersion(forStoreMetadata: metadata))
        let persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: currentModel)
        let options = [SQLitePragmasOption: ["journal_mode": "DELETE"]]
        let store = try persistentStoreCoordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil,
                                                                      at: storeURL, options: options)
        persistentStoreCoordinator.remove(store)
    }
}

@Suite(.enabled(if: AppleMadeFixtures.available, AppleMadeFixtures.absentMessage))
struct CoreDataMigratorTests {
    static func versions(of app: String) throws -> CoreDataMigrationVersions {
        let folder = try AppleMadeFixtures.url(app)
        let bundle = try #require(Bundle(url: folder))
        return CoreDataMigrationVersions(bundle: bundle, modelName: "CoreDataMigration_Example",
                                         versions: ["CoreDataMigration_Example", "CoreDataMigration_Example 2",
                                                    "CoreDataMigration_Example 3", "CoreDataMigration_Example 4"])
    }

    /// A context on the store at `storeURL`, opened with `model`.
    static func context(model: ManagedObjectModel, storeURL: URL) throws -> ManagedObjectContext {
        let persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try persistentStoreCoordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: storeURL, options: nil)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    static let revised = "wibosco-CoreDataMigrationRevised-Example"
    static let original = "wibosco-CoreDataMigration-Example"

    @Test func aVersion1StoreMigratesToVersion4() throws {
        Post2ToPost3MigrationPolicy.register()
        let folder = TemporaryDirectory()
        let storeURL = try AppleMadeFixtures.copyOfStore("\(Self.revised)/SQLite/CoreDataMigration_Example_1.sqlite", into: folder.url)
        let migrator = CoreDataMigrator(versions: try Self.versions(of: Self.revised))
        #expect(try migrator.requiresMigration(at: storeURL))
        try migrator.migrateStore(at: storeURL)
        #expect(try !migrator.requiresMigration(at: storeURL))

        let context = try Self.context(model: try migrator.versions.managedObjectModel(forVersion: migrator.versions.current), storeURL: storeURL)
        let posts = try context.fetch(FetchRequest<ManagedObject>(entityName: "Post"))
        let sections = try context.fetch(FetchRequest<ManagedObject>(entityName: "Section"))
        #expect(posts.count == 10)
        #expect(sections.count == 10)
        for post in posts {
            let postSections = try post.value(forKey: "sections") as? Set<ManagedObject> ?? []
            #expect(postSections.count == 1)
            #expect(try postSections.first?.value(forKey: "post") as? ManagedObject === post)
            #expect(try post.value(forKey: "softDeleted") as? Bool == false)
        }
    }

    @Test func aVersion2StoreMigratesToVersion4KeepingItsValues() throws {
        Post2ToPost3MigrationPolicy.register()
        let folder = TemporaryDirectory()
        let storeURL = try AppleMadeFixtures.copyOfStore("\(Self.revised)/SQLite/CoreDataMigration_Example_2.sqlite", into: folder.url)
        let migrator = CoreDataMigrator(versions: try Self.versions(of: Self.revised))
        try migrator.migrateStore(at: storeURL)

        let context = try Self.context(model: try migrator.versions.managedObjectModel(forVersion: migrator.versions.current), storeURL: storeURL)
        let request = FetchRequest<ManagedObject>(entityName: "Post")
        request.sortDescriptors = [QuerySortDescriptor(key: "postID", ascending: false)]
        let posts = try context.fetch(request)
        #expect(posts.count == 10)
        let post = try #require(posts.first)
        #expect(try (post.value(forKey: "date") as? Date)?.timeIntervalSince1970 == 1547494150.058821)
        #expect(try post.value(forKey: "postID") as? String == "FFFECB21-6645-4FDD-B8B0-B960D0E61F5A")
        #expect(try post.value(forKey: "hexColor") as? String == "1BB732")
        let section = try #require((try post.value(forKey: "sections") as? Set<ManagedObject>)?.first)
        #expect(try section.value(forKey: "title") as? String == "Test...")
        #expect(try section.value(forKey: "body") as? String == "Test body")
        #expect(try (section.value(forKey: "index") as? NSNumber)?.intValue == 0)
    }

    @Test func aVersion3StoreMigratesToVersion4() throws {
        Post2ToPost3MigrationPolicy.register()
        let folder = TemporaryDirectory()
        let storeURL = try AppleMadeFixtures.copyOfStore("\(Self.revised)/SQLite/CoreDataMigration_Example_3.sqlite", into: folder.url)
        let migrator = CoreDataMigrator(versions: try Self.versions(of: Self.revised))
        try migrator.migrateStore(at: storeURL)

        let context = try Self.context(model: try migrator.versions.managedObjectModel(forVersion: migrator.versions.current), storeURL: storeURL)
        let request = FetchRequest<ManagedObject>(entityName: "Post")
        request.sortDescriptors = [QuerySortDescriptor(key: "date", ascending: false)]
        let posts = try context.fetch(request)
        #expect(posts.count == 12)
        let post = try #require(posts.first)
        #expect(try post.value(forKey: "postID") as? String == "7BC43935-3209-404E-836A-06F3C6518CB1")
        #expect(try post.value(forKey: "hexColor") as? String == "BAEFB6")
        let sections = try (post.value(forKey: "sections") as? Set<ManagedObject> ?? []).sorted {
            // An Integer 16 attribute reads as `Int16` here, where Core Data gives an `NSNumber` that `as? Int` takes.
            (try $0.value(forKey: "index") as? NSNumber)?.intValue ?? 0 < (try $1.value(forKey: "index") as? NSNumber)?.intValue ?? 0
        }
        #expect(sections.count == 2)
        #expect(try sections.first?.value(forKey: "title") as? String == "This post will have 2 sections")
        #expect(try context.fetch(FetchRequest<ManagedObject>(entityName: "Section")).count == 14)
    }

    /// The original app's stores, its WAL store among them: version 1 → 2 → 3 through its mapping models,
    /// 3 → 4 inferred. Every post keeps its colour, now a `Color` object.
    @Test(arguments: ["CoreDataMigration_Example_1.sqlite", "CoreDataMigration_Example_2.sqlite",
                      "CoreDataMigration_Example_3.sqlite", "CoreDataMigration_Example_WAL.sqlite"])
    func theOriginalAppsStoresMigrateToVersion4(_ name: String) throws {
        Post2ToPost3MigrationPolicy.register()
        let folder = TemporaryDirectory()
        let storeURL = try AppleMadeFixtures.copyOfStore("\(Self.original)/SQLite/\(name)", into: folder.url)
        let migrator = CoreDataMigrator(versions: try Self.versions(of: Self.original))
        let before = try Self.postsAndColors(storeURL, migrator: migrator)
        #expect(!before.isEmpty)
        if name.contains("WAL") {
            // The data is in the -wal: the file alone holds no post until the log is checkpointed.
            #expect(FileManager.default.fileExists(atPath: storeURL.path + "-wal"))
        }
        try migrator.migrateStore(at: storeURL)
        #expect(try !migrator.requiresMigration(at: storeURL))
        #expect(try Self.postsAndColors(storeURL, migrator: migrator) == before)
    }

    /// Post ID → colour, read with the model that wrote the store (version 1: `color`, 2: `hexColor`,
    /// 3 and 4: the `Color` object's `hex`).
    static func postsAndColors(_ storeURL: URL, migrator: CoreDataMigrator) throws -> [String: String] {
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: storeURL, options: nil)
        let model = try migrator.versions.managedObjectModel(forVersion: try migrator.versions.compatibleVersion(forStoreMetadata: metadata))
        let context = try context(model: model, storeURL: storeURL)
        var colors: [String: String] = [:]
        for post in try context.fetch(FetchRequest<ManagedObject>(entityName: "Post")) {
            let postID = try post.value(forKey: "postID") as? String ?? ""
            let color: Any?
            if post.entity.relationshipsByName["color"] != nil {
                color = try (post.value(forKey: "color") as? ManagedObject)?.value(forKey: "hex")
            } else if post.entity.attributesByName["hexColor"] != nil {
                color = try post.value(forKey: "hexColor")
            } else {
                color = try post.value(forKey: "color")
            }
            colors[postID] = color as? String ?? "-"
        }
        return colors
    }
}
