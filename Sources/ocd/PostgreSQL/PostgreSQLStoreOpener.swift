import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

/// Opens a PostgreSQL store for ocd's commands. The model must be given (the store's `Z_METADATA` holds the
/// model's version hashes, not the model), and the store must be there already: the commands that read
/// never create one in an empty schema.
enum PostgreSQLStoreOpener {
    /// Opens the store at `configuration` with the model at `modelPath`; `history` asks for a store that keeps
    /// persistent history (and refuses one without).
    ///
    /// - Throws: ``OCDError`` naming what is missing or wrong: no `--model`, a model that cannot be read, no
    ///   store (or no history) in the schema, a server that cannot be reached, a store of another model.
    static func open(_ configuration: PostgreSQLStoreConfiguration, modelPath: String?, history: Bool = false) throws
        -> (store: PostgreSQLStore, modelName: String) {
        guard let modelPath else {
            throw OCDError("--model is required for a PostgreSQL store (its Z_METADATA holds the model's version hashes, not the model)")
        }
        let model = try ModelLocator.load(modelPath: modelPath)
        var settings = configuration
        settings.poolSize = min(settings.poolSize, 2)
        let server = configuration.redactedURL
        do {
            let presence = try PostgreSQLStorePresence.find(configuration: settings)
            guard presence.hasStore else {
                throw OCDError("\(server) holds no store (no Z_METADATA in schema \(configuration.schema ?? "public"))")
            }
            if history && !presence.hasHistory {
                throw OCDError("\(server) keeps no persistent history, so there is no feed to watch")
            }
            let store = try PostgreSQLStore(model: model, configuration: settings, recordsHistory: history)
            return (store, URL(fileURLWithPath: modelPath).lastPathComponent)
        } catch let error as OCDError {
            throw error
        } catch {
            throw OCDError("cannot open \(server): \(error)")
        }
    }
}
