import Foundation
import OpenCoreData

/// An open store behind a coordinator, a file or a PostgreSQL database (``open(_:model:readOnly:history:watch:)``),
/// handing out contexts on it.
struct OpenedStore: Sendable {
    let coordinator: PersistentStoreCoordinator
    /// The store file's URL, or the PostgreSQL store's URL without its password.
    let url: URL
    /// The store as messages name it: the file's path, or the URL without its password.
    let displayName: String

    /// Opens (creating if needed, unless read-only) the store at `path` for `model`: an XML store when the
    /// file's extension is `xml`, SQLite otherwise. A writable SQLite open tracks
    /// persistent history when `history` asks for it or the store already has history, so every writer
    /// keeps it complete; `watch` turns on remote-change notifications.
    static func open(path: String, model: ManagedObjectModel, readOnly: Bool = false, history: Bool = false,
                     watch: Bool = false) throws -> OpenedStore {
        let url = URL(fileURLWithPath: path)
        if readOnly {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
                throw OCDError("\(path): no such file")
            }
            guard !isDirectory.boolValue else { throw OCDError("\(path) is a folder, not a store file") }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        // Core Data's XML store: loaded whole, written whole, with no history or other process to watch.
        let isXML = url.pathExtension.lowercased() == "xml"
        do {
            let tracking = readOnly || isXML ? false : try history || SQLiteStore.hasPersistentHistory(at: url)
            try coordinator.addPersistentStore(type: isXML ? .xml : .sqlite, at: url, options: StoreOptions(
                readOnly: readOnly, persistentHistoryTracking: tracking, remoteChangeNotifications: watch))
        } catch {
            throw OCDError("cannot open \(path): \(error)")
        }
        return OpenedStore(coordinator: coordinator, url: url, displayName: path)
    }

    /// A new private-queue context on the store (ocd's commands run off the main thread).
    func newContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }
}
