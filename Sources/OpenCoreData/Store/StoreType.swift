import Foundation

/// The kinds of store a coordinator can hold. Both are SQLite: one code path.
public enum StoreType: String, Sendable, Hashable {
    /// A file on disk, in WAL mode.
    case sqlite = "SQLite"
    /// An SQLite database in memory, gone when the store is.
    case inMemory = "InMemory"
}
