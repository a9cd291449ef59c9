import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// `ocd copy SOURCE DESTINATION [--model M] [--from-type T] [--to-type T] [--replace]`: every object of one
/// store file copied into a new store of another type (Core Data's `migratePersistentStore`), e.g. an XML
/// store into SQLite, or into a new PostgreSQL store (a `postgresql://` URL). A file destination appears only
/// once complete; an existing one is refused unless `--replace`, which swaps the new file in only after the
/// copy succeeded. A PostgreSQL destination is filled in one transaction and must be new.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy every object of a store into a new store file of another type (SQLite, XML).",
        discussion: "Types come from the extensions (.xml is Core Data's XML store, anything else SQLite) or "
            + "--from-type/--to-type. Without --model, an XML store's own objects give the model, and an "
            + "SQLite store's model cache (Z_MODELCACHE). The destination is written under a temporary name "
            + "and renamed: a failure leaves nothing behind.")

    @Argument(help: "The store to copy from.")
    var source: String

    @Argument(help: "The store file to create, or a postgresql:// URL of a new store.")
    var destination: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom, or an XML store whose objects describe it).")
    var model: String?

    @Option(name: .customLong("from-type"), help: "The source's type: sqlite or xml (default: from its extension).")
    var fromType: String?

    @Option(name: .customLong("to-type"), help: "The destination's type: sqlite or xml (default: from its extension).")
    var toType: String?

    @Flag(name: .long, help: "Replace an existing destination (only once the copy is complete).")
    var replace = false

    func run() throws {
        if case .postgreSQL = try StoreLocation(source) {
            throw StoreLocation.notOnPostgreSQL("copy", because: "copying out of a PostgreSQL store is not written yet (copy into one)")
        }
        if case .postgreSQL(let configuration) = try StoreLocation(destination) {
            try copy(to: configuration)
            return
        }
        let sourceURL = URL(fileURLWithPath: source)
        let destinationURL = URL(fileURLWithPath: destination)
        let sourceType = try Self.storeType(fromType, of: sourceURL)
        let destinationType = try Self.storeType(toType, of: destinationURL)
        guard FileManager.default.fileExists(atPath: sourceURL.path) else { throw OCDError("\(source): no such file") }
        let exists = FileManager.default.fileExists(atPath: destinationURL.path)
        if exists && !replace { throw OCDError("\(destination) exists; pass --replace to replace it") }
        guard sourceURL.standardizedFileURL != destinationURL.standardizedFileURL else {
            throw OCDError("\(source) is both the source and the destination")
        }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try loadModel(sourceURL, type: sourceType))
            let store = try coordinator.addPersistentStore(type: sourceType, at: sourceURL, options: StoreOptions(readOnly: true))
            // Written under a temporary name beside the destination, then renamed into place.
            let temporary = destinationURL.deletingLastPathComponent()
                .appendingPathComponent(".\(destinationURL.lastPathComponent).\(UUID().uuidString).new")
            do {
                // What `migratePersistentStore` writes, without opening the copy under its temporary name.
                try store.copyContents(toNewStoreAt: temporary, type: destinationType)
                if exists { try Self.removeStoreFiles(at: destinationURL) }
                try FileManager.default.moveItem(at: temporary, to: destinationURL)
            } catch {
                try? Self.removeStoreFiles(at: temporary)
                throw error
            }
            let counts = try Self.objectCounts(of: destinationURL, type: destinationType, model: coordinator.managedObjectModel)
            Console.line("Copied \(counts.total) objects (\(counts.entities) entities) from \(source) (\(sourceType.rawValue)) to \(destination) (\(destinationType.rawValue)).")
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("\(error)")
        }
    }

    /// Copies the source into a new PostgreSQL store, in one transaction of the server.
    private func copy(to configuration: PostgreSQLStoreConfiguration) throws {
        let server = configuration.redactedURL
        guard !replace else { throw OCDError("\(server): a PostgreSQL store is never replaced; give a new schema (?schema=…)") }
        let sourceURL = URL(fileURLWithPath: source)
        let sourceType = try Self.storeType(fromType, of: sourceURL)
        guard FileManager.default.fileExists(atPath: sourceURL.path) else { throw OCDError("\(source): no such file") }
        guard let url = URL(string: destination) else { throw OCDError("\(server) is not a URL") }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try loadModel(sourceURL, type: sourceType))
            let store = try coordinator.addPersistentStore(type: sourceType, at: sourceURL, options: StoreOptions(readOnly: true))
            let copied = try coordinator.migratePersistentStore(store, to: url, type: .postgreSQL)
            defer { coordinator.remove(copied) }
            let counts = try Self.objectCounts(in: coordinator)
            Console.line("Copied \(counts.total) objects (\(counts.entities) entities) from \(source) (\(sourceType.rawValue)) to \(server) (PostgreSQL).")
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("\(error)")
        }
    }

    private func loadModel(_ url: URL, type: StoreType) throws -> ManagedObjectModel {
        if let model { return try ModelLocator.load(modelPath: model) }
        if type == .xml { return try ManagedObjectModel.derivedModel(ofXMLStoreAt: url) }
        guard let cached = try ManagedObjectModel.cachedModel(ofStoreAt: url) else {
            throw OCDError("\(source) carries no model (Z_MODELCACHE); pass --model")
        }
        return cached
    }

    private static func storeType(_ name: String?, of url: URL) throws -> StoreType {
        switch name?.lowercased() ?? (url.pathExtension.lowercased() == "xml" ? "xml" : "sqlite") {
        case "xml": return .xml
        case "sqlite": return .sqlite
        case let other: throw OCDError("unknown store type '\(other)' (sqlite or xml)")
        }
    }

    private static func removeStoreFiles(at url: URL) throws {
        for suffix in ["-wal", "-shm", "-journal", ""] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    /// The objects of the new store, counted by opening it as any user would.
    private static func objectCounts(of url: URL, type: StoreType, model: ManagedObjectModel) throws -> (total: Int, entities: Int) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: type, at: url, options: StoreOptions(readOnly: true))
        return try objectCounts(in: coordinator)
    }

    /// The objects of the coordinator's store, counted entity by entity.
    private static func objectCounts(in coordinator: PersistentStoreCoordinator) throws -> (total: Int, entities: Int) {
        let model = coordinator.managedObjectModel
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        var total = 0
        for entity in model.entities where !entity.isAbstract {
            let request = FetchRequest<ManagedObject>(entityName: entity.name)
            request.includesSubentities = false
            total += try context.count(for: request)
        }
        return (total, model.entities.count)
    }
}
