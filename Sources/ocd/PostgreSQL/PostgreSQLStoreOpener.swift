import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// Opens a PostgreSQL store for ocd's commands. The model must be given (the store's `Z_METADATA` holds the
/// model's version hashes, not the model); the commands that only read never create a store in an empty
/// schema.
enum PostgreSQLStoreOpener {
    /// The `--model` a PostgreSQL store is opened with, and the name messages give it.
    ///
    /// - Throws: ``OCDError`` when no `--model` is given or it cannot be read.
    static func model(_ modelPath: String?) throws -> (model: ManagedObjectModel, name: String) {
        guard let modelPath else {
            throw OCDError("--model is required for a PostgreSQL store (its Z_METADATA holds the model's version hashes, not the model)")
        }
        return (try ModelLocator.load(modelPath: modelPath), URL(fileURLWithPath: modelPath).lastPathComponent)
    }

    /// Opens the store at `configuration` for `model`, on its own (`ocd watch` reads its change feed).
    /// A store that keeps persistent history is opened recording it, whatever `options` say, so every
    /// writer keeps it complete; `requiringHistory` refuses a store without history (a read-only open cannot
    /// add it). `creating` lets an empty schema get a new store (writers such as `ocd import`); otherwise a
    /// schema without one is refused.
    ///
    /// - Throws: ``OCDError`` naming what is missing or wrong: no store (or no history) in the schema, a
    ///   server that cannot be reached, a store of another model.
    static func store(_ configuration: PostgreSQLStoreConfiguration, model: ManagedObjectModel, options: StoreOptions = StoreOptions(),
                      requiringHistory: Bool = false, creating: Bool = false) throws -> PostgreSQLStore {
        var settings = configuration
        settings.poolSize = min(settings.poolSize, 2)
        let server = configuration.redactedURL
        do {
            let presence = try PostgreSQLStorePresence.find(configuration: settings)
            guard presence.hasStore || creating else {
                throw OCDError("\(server) holds no store (no Z_METADATA in schema \(configuration.schema ?? "public"))")
            }
            if requiringHistory && !presence.hasHistory {
                throw OCDError("\(server) keeps no persistent history, so there is no feed of other instances' saves to follow")
            }
            return try PostgreSQLStore(model: model, configuration: settings,
                                       recordsHistory: options.persistentHistoryTracking || presence.hasHistory, options: options)
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("cannot open \(server): \(error)")
        }
    }

    /// Opens the store at `configuration` behind a coordinator, as ``OpenedStore/open(path:model:readOnly:history:watch:)``
    /// opens a file: `readOnly` refuses saves (and never creates a store), `history` records persistent
    /// history (kept on for a store that has it), `watch` merges other processes' saves as they commit.
    ///
    /// - Throws: as ``store(_:model:options:requiringHistory:creating:)``; ``OCDError`` when the change feed cannot start.
    static func open(_ configuration: PostgreSQLStoreConfiguration, model: ManagedObjectModel, readOnly: Bool,
                     history: Bool = false, watch: Bool = false) throws -> OpenedStore {
        // Following other instances needs the history tables: a writer adds them, a reader needs them there.
        let options = StoreOptions(readOnly: readOnly, persistentHistoryTracking: history || watch,
                                   remoteChangeNotifications: watch)
        let store = try Self.store(configuration, model: model, options: options, requiringHistory: watch && readOnly,
                                   creating: !readOnly)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.add(store)
        } catch {
            store.close()
            throw OCDError("cannot open \(configuration.redactedURL): \(error)")
        }
        return OpenedStore(coordinator: coordinator, url: URL(string: configuration.redactedURL) ?? URL(fileURLWithPath: "/"),
                           displayName: configuration.redactedURL)
    }
}
