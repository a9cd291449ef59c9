import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// Opens a PostgreSQL store for ocd's commands, with `--model` or, without one, with the model the store
/// carries or else whichever of ocd's own models (to-do, banks) it was written by, as a file store is
/// opened; the commands that only read never create a store in an empty schema.
enum PostgreSQLStoreOpener {
    /// The model to open the store at `configuration` with, and the name messages give it: `--model` when
    /// given, else the model the store carries (``PostgreSQLStore/cachedModel(configuration:)``), else the
    /// built-in model whose version hashes the store's `Z_METADATA` carries.
    ///
    /// - Throws: ``OCDError`` when `--model` cannot be read, when the schema holds no store, or when no
    ///   built-in model fits it (then `--model` is needed: the store's `Z_METADATA` holds the model's
    ///   version hashes, not the model).
    static func model(_ modelPath: String?, for configuration: PostgreSQLStoreConfiguration) throws
        -> (model: ManagedObjectModel, name: String) {
        if let modelPath { return (try ModelLocator.load(modelPath: modelPath), URL(fileURLWithPath: modelPath).lastPathComponent) }
        let server = configuration.redactedURL
        var settings = configuration
        settings.poolSize = 1
        do {
            guard try PostgreSQLStorePresence.find(configuration: settings).hasStore else {
                throw OCDError("\(server) holds no store (no Z_METADATA in schema \(configuration.schema ?? "public"))")
            }
            // The model the store carries, which every writable open records, then ocd's own.
            if let cached = try PostgreSQLStore.cachedModel(configuration: settings) {
                return (cached, "the store's model cache (Z_MODELCACHE)")
            }
            for (name, make) in BuiltInModels.all {
                let model = try make()
                do {
                    try PostgreSQLStore(model: model, configuration: settings, options: StoreOptions(readOnly: true)).close()
                    return (model, name)
                } catch StoreError.incompatibleModel {
                    continue
                }
            }
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("cannot open \(server): \(error)")
        }
        throw OCDError("\(server) was not written by one of ocd's models; pass --model <xcdatamodeld> "
            + "(a PostgreSQL store's Z_METADATA holds the model's version hashes, not the model)")
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
                     history: Bool = false, watch: Bool = false, creating: Bool = true) throws -> OpenedStore {
        // Following other instances needs the history tables: a writer adds them, a reader needs them there.
        let options = StoreOptions(readOnly: readOnly, persistentHistoryTracking: history || watch,
                                   remoteChangeNotifications: watch)
        let store = try Self.store(configuration, model: model, options: options, requiringHistory: watch && readOnly,
                                   creating: !readOnly && creating)
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
