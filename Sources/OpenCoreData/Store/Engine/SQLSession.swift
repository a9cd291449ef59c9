import Foundation

/// What the engine's shared code needs from a backend's connection inside one transaction: run a statement
/// with its values bound, and read a statement's rows. SQL is written with `?` placeholders; a session whose
/// database numbers them (PostgreSQL's `$1`) renumbers them itself.
///
/// Fast paths (row blocks decoded in place, cached statements bound without arrays) stay behind each
/// backend's own readers; this is the surface for code written once for every store.
package protocol SQLSession {
    /// Where the session's database is, for messages: a file's path or a server's `host:port/database`,
    /// never a password.
    var location: String { get }

    /// Runs one statement and returns how many rows it wrote (0 for statements that write none).
    ///
    /// - Throws: the backend's error when the database refuses the statement or the connection fails (the
    ///   store's transaction reports it as a ``StoreError``).
    @discardableResult
    func execute(_ sql: String, _ arguments: [StoreValue]) throws -> Int

    /// Runs one query and returns its rows, each as its values in column order.
    ///
    /// - Throws: as ``execute(_:_:)``.
    func rows(_ sql: String, _ arguments: [StoreValue]) throws -> [[StoreValue]]
}
