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

    /// Describes a store at a URL (a file store), or an in-memory store when `url` is nil.
    public init(url: URL?, type: StoreType? = nil, options: StoreOptions = StoreOptions()) {
        self.url = url
        self.type = type ?? (url == nil ? .inMemory : .sqlite)
        self.options = options
    }

    /// An in-memory store.
    public static func inMemory() -> PersistentStoreDescription { PersistentStoreDescription(url: nil, type: .inMemory) }

    public var description: String { "<PersistentStoreDescription \(type.rawValue) \(url?.path ?? ":memory:")>" }
}
