import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// `ocd copy SOURCE DESTINATION [--model M] [--from-type T] [--to-type T] [--replace]`: every object of one
/// store copied into a new store of another type (Core Data's `migratePersistentStore`), e.g. an XML store
/// into SQLite, a file into a new PostgreSQL store (a `postgresql://` URL), or a PostgreSQL store out into a
/// file. A file destination appears only
/// once complete; an existing one is refused unless `--replace`, which swaps the new file in only after the
/// copy succeeded. A PostgreSQL destination is filled in one transaction and must be new.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy every object of a store into a new store of another type (SQLite, XML, PostgreSQL).",
        discussion: "Types come from the extensions (.xml is Core Data's XML store, anything else SQLite) or "
            + "--from-type/--to-type; a postgresql:// URL is a PostgreSQL store, as source or destination. "
            + "Without --model, an XML store's own objects give the model, an SQLite store's model cache "
            + "(Z_MODELCACHE), and a PostgreSQL store the model it carries. Values kept in _EXTERNAL_DATA "
            + "go with their rows. A file destination is written under a temporary name and renamed: a "
            + "failure leaves nothing behind.")

    @Argument(help: "The store file to copy from, or a postgresql:// URL.")
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
        let sourceLocation = try StoreLocation(source)
        if case .postgreSQL(let configuration) = try StoreLocation(destination) {
            try copy(from: sourceLocation, to: configuration)
            return
        }
        let destinationURL = URL(fileURLWithPath: destination)
        let destinationType = try Self.storeType(toType, of: destinationURL)
        let exists = FileManager.default.fileExists(atPath: destinationURL.path)
        if exists && !replace { throw OCDError("\(destination) exists; pass --replace to replace it") }
        if case .file(let path) = sourceLocation,
           URL(fileURLWithPath: path).standardizedFileURL == destinationURL.standardizedFileURL {
            throw OCDError("\(source) is both the source and the destination")
        }
        let opened = try openSource(sourceLocation)
        defer { opened.close() }
        do {
            // Written under a temporary name beside the destination, then renamed into place with its
            // _EXTERNAL_DATA files: what `migratePersistentStore` writes, without opening the copy.
            let temporary = destinationURL.deletingLastPathComponent()
                .appendingPathComponent(".\(destinationURL.lastPathComponent).\(UUID().uuidString).new")
            do {
                try SQLiteStore.copyContents(of: opened.store.backend, model: opened.coordinator.managedObjectModel,
                                             toNewStoreAt: temporary, type: destinationType)
                if exists { StoreFileCopy.removeStore(at: destinationURL) }
                try StoreFileCopy.moveStore(at: temporary, to: destinationURL)
            } catch {
                StoreFileCopy.removeStore(at: temporary)
                throw error
            }
            let counts = try Self.objectCounts(of: destinationURL, type: destinationType, model: opened.coordinator.managedObjectModel)
            Console.line("Copied \(counts.total) objects (\(counts.entities) entities) from \(opened.name) (\(opened.store.typeName)) to \(destination) (\(destinationType.rawValue)).")
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("\(error)")
        }
    }

    /// The source opened read-only: a file of the type `--from-type` or its extension names, or a
    /// PostgreSQL store, with `--model` or the model it carries.
    private func openSource(_ location: StoreLocation) throws -> (coordinator: PersistentStoreCoordinator, store: PersistentStore,
                                                                   name: String, close: @Sendable () -> Void) {
        switch location {
        case .postgreSQL:
            guard fromType == nil else { throw OCDError("--from-type is for a store file; a postgresql:// URL is a PostgreSQL store") }
            let (opened, _) = try OpenedStore.openFindingModel(location, modelPath: model, readOnly: true)
            guard let store = opened.coordinator.persistentStores.first else { throw OCDError("\(opened.displayName): no store opened") }
            return (opened.coordinator, store, opened.displayName, { opened.close() })
        case .file(let path):
            let sourceURL = URL(fileURLWithPath: path)
            let sourceType = try Self.storeType(fromType, of: sourceURL)
            guard FileManager.default.fileExists(atPath: sourceURL.path) else { throw OCDError("\(source): no such file") }
            do {
                let coordinator = PersistentStoreCoordinator(managedObjectModel: try loadModel(sourceURL, type: sourceType))
                let store = try coordinator.addPersistentStore(type: sourceType, at: sourceURL, options: StoreOptions(readOnly: true))
                return (coordinator, store, source, {})
            } catch let error as OCDError {
                throw error
            } catch {
                throw OCDError("cannot open \(source): \(error)")
            }
        }
    }

    /// Copies the source into a new PostgreSQL store, in one transaction of the server.
    private func copy(from location: StoreLocation, to configuration: PostgreSQLStoreConfiguration) throws {
        let server = configuration.redactedURL
        guard !replace else { throw OCDError("\(server): a PostgreSQL store is never replaced; give a new schema (?schema=…)") }
        guard let url = URL(string: destination) else { throw OCDError("\(server) is not a URL") }
        let opened = try openSource(location)
        defer { opened.close() }
        do {
            let copied = try opened.coordinator.migratePersistentStore(opened.store, to: url, type: .postgreSQL)
            defer { opened.coordinator.remove(copied) }
            let counts = try Self.objectCounts(in: opened.coordinator)
            Console.line("Copied \(counts.total) objects (\(counts.entities) entities) from \(opened.name) (\(opened.store.typeName)) to \(server) (PostgreSQL).")
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
