import Foundation
import OpenCoreData
import OpenCoreDataPostgreSQL

extension OpenedStore {
    /// Opens the store at `location` with `model`: a file as ``open(path:model:readOnly:history:watch:)``
    /// does, a PostgreSQL store as ``PostgreSQLStoreOpener/open(_:model:readOnly:history:watch:)`` does. The
    /// one place the commands that run contexts tell the two apart; what follows is the same for both.
    ///
    /// - Throws: ``OCDError`` naming the store and what is wrong.
    /// `creating: false` refuses an empty PostgreSQL schema rather than making a store in it (commands that
    /// only read, such as `ocd todo list`, though they open writable).
    static func open(_ location: StoreLocation, model: ManagedObjectModel, readOnly: Bool = false, history: Bool = false,
                     watch: Bool = false, creating: Bool = true) throws -> OpenedStore {
        switch location {
        case .file(let path): try open(path: path, model: model, readOnly: readOnly, history: history, watch: watch)
        case .postgreSQL(let configuration):
            try PostgreSQLStoreOpener.open(configuration, model: model, readOnly: readOnly, history: history, watch: watch,
                                           creating: creating)
        }
    }

    /// Opens the store at `location`, read-only unless `readOnly` is false: a file with `--model` or the
    /// model ``ModelLocator`` finds for it, a PostgreSQL store with `--model` or the built-in model it was
    /// written by. Returns the name messages give the model.
    ///
    /// - Throws: ``OCDError`` naming the store or model and what is wrong.
    static func openFindingModel(_ location: StoreLocation, modelPath: String?, watch: Bool = false, readOnly: Bool = true) throws
        -> (opened: OpenedStore, modelName: String) {
        switch location {
        case .file(let path):
            let (opened, name) = try ModelLocator.openFindingModel(storePath: path, modelPath: modelPath, watch: watch, readOnly: readOnly)
            return (opened, name)
        case .postgreSQL(let configuration):
            let (model, name) = try PostgreSQLStoreOpener.model(modelPath, for: configuration)
            return (try PostgreSQLStoreOpener.open(configuration, model: model, readOnly: readOnly, watch: watch, creating: false), name)
        }
    }

    /// Closes the coordinator's PostgreSQL stores (their connections and change feed); a file needs nothing
    /// of the kind.
    func close() {
        for store in coordinator.postgreSQLStores { coordinator.remove(store) }
    }

    /// Whether the store at `location` keeps persistent history tables, read without changing it.
    ///
    /// - Throws: the store's error when it cannot be read.
    func keepsHistory(at location: StoreLocation) throws -> Bool {
        switch location {
        case .file: try SQLiteStore.hasPersistentHistory(at: url)
        case .postgreSQL(let configuration): try PostgreSQLStorePresence.find(configuration: configuration).hasHistory
        }
    }
}
