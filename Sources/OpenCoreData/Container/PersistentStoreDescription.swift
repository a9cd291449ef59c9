import Foundation

/// Describes a store for ``PersistentContainer`` to open.
public final class PersistentStoreDescription: @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: configured before `loadPersistentStores`, read-only after.

    /// The store type.
    public var type: StoreType
    /// The store file (ignored for in-memory stores).
    public var url: URL?
    /// Open options.
    public var options: StoreOptions

    /// Whether opening migrates a store written by another version of the model's bundle
    /// (``StoreOptions/migratesStoreAutomatically``; on by default, as in Core Data's containers).
    public var shouldMigrateStoreAutomatically: Bool {
        get { options.migratesStoreAutomatically }
        set { options.migratesStoreAutomatically = newValue }
    }
    /// Whether the mapping between versions may be inferred (``StoreOptions/infersMappingModelAutomatically``;
    /// on by default).
    public var shouldInferMappingModelAutomatically: Bool {
        get { options.infersMappingModelAutomatically }
        set { options.infersMappingModelAutomatically = newValue }
    }
    /// Whether the store is opened read-only (``StoreOptions/readOnly``).
    public var isReadOnly: Bool {
        get { options.readOnly }
        set { options.readOnly = newValue }
    }

    /// Sets an option by the name Core Data's options dictionary uses (``StoreOptions/Key``).
    ///
    /// - Throws: ``ObjectGraphError/unknownStoreOption(name:)`` for an unknown name.
    public func setOption(_ value: Bool, forKey key: String) throws {
        try options.setOption(value, forKey: key)
    }

    /// Describes a store at a URL (a file store: an XML store when the file's extension is `xml`, SQLite
    /// otherwise, unless `type` says), or an in-memory store when `url` is nil.
    public init(url: URL?, type: StoreType? = nil, options: StoreOptions = StoreOptions()) {
        self.url = url
        self.type = type ?? (url == nil ? .inMemory : url?.pathExtension.lowercased() == "xml" ? .xml : .sqlite)
        self.options = options
    }

    /// An in-memory store.
    public static func inMemory() -> PersistentStoreDescription { PersistentStoreDescription(url: nil, type: .inMemory) }

    /// The store type and path (`:memory:` for an in-memory store), for logs and debugging.
    public var description: String { "<PersistentStoreDescription \(type.rawValue) \(url?.path ?? ":memory:")>" }
}
