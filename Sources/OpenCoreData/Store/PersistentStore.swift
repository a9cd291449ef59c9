import Foundation

/// A store a coordinator reads objects from and saves them to, whatever its backend (Core Data's
/// `NSPersistentStore`).
///
/// SQLite and in-memory stores are ``SQLiteStore``s; a PostgreSQL store (module `OpenCoreDataPostgreSQL`) is a
/// `PostgreSQLStore`. ``PersistentStoreCoordinator/persistentStores`` lists every one, and what Core Data code
/// does with a store there (its URL, identifier, options, metadata, removing it) works on any of them. The
/// class is open only so that the library's other modules can subclass it; its initialiser is the package's.
open class PersistentStore: @unchecked Sendable {
    // @unchecked Sendable: immutable; subclasses say why their own state is safe.

    /// Core Data's name for the store's kind (`NSStoreType`): "SQLite", "InMemory", "PostgreSQL".
    public let typeName: String
    /// The file of a file store; nil for a store in memory or on a server (a PostgreSQL store's
    /// `configuration` names its server).
    public let url: URL?
    /// The store's UUID (`NSStoreUUID`).
    public let identifier: String
    /// Whether the store was opened read-only.
    public let isReadOnly: Bool
    /// The options it was opened with.
    public let options: StoreOptions

    /// The parts every store has, set by the subclass once it has opened its store.
    package init(typeName: String, url: URL?, identifier: String, options: StoreOptions) {
        self.typeName = typeName
        self.url = url
        self.identifier = identifier
        self.isReadOnly = options.readOnly
        self.options = options
    }
}
