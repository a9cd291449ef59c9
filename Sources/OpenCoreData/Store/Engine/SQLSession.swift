import Foundation

/// What the engine's shared code needs from a backend's connection inside one transaction: run a statement
/// with its values bound, and read a statement's rows. SQL is written with `?` placeholders; a session whose
/// database numbers them (PostgreSQL's `$1`) renumbers them itself.
///
/// Fast paths (row blocks decoded in place, cached statements bound without arrays) stay behind each
/// backend's own readers; this is the surface for code written once for every store.
package protocol SQLSession {
    /// A statement prepared once and run with new values many times.
    associatedtype PreparedWrite: SQLPreparedWrite
    /// What takes a save's new rows for one table.
    associatedtype RowInserter: SQLRowInserter

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

    /// Whether the database has a table named `name` (compared without regard to case, as SQL names are).
    ///
    /// - Throws: as ``execute(_:_:)``.
    func tableExists(_ name: String) throws -> Bool

    /// A write statement to bind and run once per row (``ChangeSetWriter``'s updates and deletes).
    ///
    /// - Throws: as ``execute(_:_:)`` when the database refuses to prepare it.
    func prepareWrite(_ sql: String) throws -> PreparedWrite

    /// Takes new rows of `table`, every column in `columns`' order, and writes them by the time its
    /// ``SQLRowInserter/finish()`` returns: one row at a time, or many a statement where round trips cost.
    ///
    /// - Throws: as ``execute(_:_:)``.
    func rowInserter(table: String, columns: [String]) throws -> RowInserter

    /// Runs `body` in a savepoint inside the current transaction: kept when it returns, undone when it throws.
    ///
    /// - Throws: what `body` throws, or the database's refusal to open or close the savepoint.
    func savepoint<Outcome>(_ body: () throws -> Outcome) throws -> Outcome
}

/// A statement with `?` placeholders, bound value by value and then run; it can be bound and run again.
package protocol SQLPreparedWrite {
    /// Binds `value` to the 1-based placeholder `index`.
    ///
    /// - Throws: the backend's error when the value cannot be bound.
    func bind(_ value: StoreValue, at index: Int32) throws

    /// Runs the statement with the values bound since it last ran, and returns how many rows it wrote.
    ///
    /// - Throws: the backend's error when the database refuses the statement.
    @discardableResult
    func step() throws -> Int
}

/// New rows for one table, handed over one by one.
package protocol SQLRowInserter {
    /// Adds one row, its values in the inserter's column order.
    ///
    /// - Throws: the backend's error when the database refuses a statement that carries it.
    func insert(_ row: RowValues) throws

    /// Writes the rows not yet written.
    ///
    /// - Throws: as ``insert(_:)``.
    func finish() throws
}
