import Foundation

/// The kinds of store a coordinator can hold. All are SQLite underneath: one code path.
public enum StoreType: String, Sendable, Hashable {
    /// A file on disk, in WAL mode.
    case sqlite = "SQLite"
    /// An SQLite database in memory, gone when the store is.
    case inMemory = "InMemory"
    /// Core Data's XML store (`NSXMLStoreType`), an atomic store: the file's objects are loaded into an
    /// SQLite database in memory when it opens, and the whole file is written again at each save
    /// (``XMLStoreError``; docs/INTEROP.md, "XML stores").
    case xml = "XML"
}
