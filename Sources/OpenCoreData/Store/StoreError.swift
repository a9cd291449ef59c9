import Foundation

/// Why a store could not be opened, read or written.
public enum StoreError: Error, CustomStringConvertible, LocalizedError, Sendable {
    /// The file is not an SQLite database, or is corrupt.
    case notAStore(path: String, reason: String)
    /// The store was written with a different model; lists what differs.
    case incompatibleModel(path: String, differences: [String])
    /// The store is busy (another writer holds the lock) past the timeout.
    case busy(path: String)
    /// The store is read-only and the operation writes.
    case readOnly(path: String)
    /// SQLite reported an error.
    case sqlite(code: Int32, message: String, sql: String?)
    /// A write was refused by one of the store's unique indexes over `columns` (each `TABLE.COLUMN` in the
    /// layout's names, such as `ZTAG.ZLABEL`), with the store's own `message`. Whatever the backend, a context
    /// turns one made by a model's uniqueness constraint into ``ObjectGraphError/validationFailed(_:)``
    /// naming the objects; this reaches the app only for an index no object of the write explains.
    case uniqueConstraintFailed(path: String, columns: [String], message: String)
    /// The store's bookkeeping rows are inconsistent.
    case corrupt(path: String, reason: String)
    /// The store holds triggers, views or tables that neither this library nor Core Data's layout made
    /// (each named with its kind, e.g. "trigger EVIL on ZITEM"), or a model table declared with a clause
    /// that acts on writes ("ON CONFLICT IGNORE in the declaration of table ZITEM"); it was opened for writing without
    /// ``StoreOptions/allowsForeignSchemaObjects``.
    case foreignSchemaObjects(path: String, objects: [String])
    /// An entity's primary keys would pass 2^63 - 1 (its `Z_MAX` in `Z_PRIMARYKEY` is `maximum`, or not an
    /// integer); nothing was written.
    case primaryKeysExhausted(path: String, entity: String, maximum: String)
    /// The value of attribute `key` of `entity` in the row with primary key `primaryKey`, kept in Core
    /// Data's external binary storage form (docs/INTEROP.md), cannot be read: an unknown marker byte, a file
    /// reference that is not a plain UUID file name in `_EXTERNAL_DATA`, or a missing or unreadable file.
    case unreadableExternalData(path: String, entity: String, key: String, primaryKey: Int64, reason: String)
    /// A value of attribute `key` of `entity` too large for its row could not be written to its file in
    /// `_EXTERNAL_DATA`; the save wrote nothing.
    case externalDataNotWritten(path: String, entity: String, key: String, reason: String)

    // A store on a database server (the PostgreSQL store) fails in ways a file does not: its cases name the
    // server (`host:port/database`, never the password) where the file cases name the path.

    /// A store URL (or the environment standing in for one) that cannot be used, and why.
    case invalidURL(String, reason: String)
    /// The server could not be reached or refused the connection.
    case connectionFailed(server: String, reason: String)
    /// The server refused a statement: its error code (PostgreSQL's SQLSTATE), its message, and the
    /// statement's first words.
    case serverError(sqlState: String, message: String, statement: String)
    /// The connection dropped while a statement was running; the transaction did not commit.
    case connectionLost(server: String, reason: String)
    /// A value the store reads back has a type the layout does not use (column, type name).
    case unexpectedValue(column: String, type: String)
    /// A request the store cannot run yet, refused before anything runs; the request names its entity or
    /// operation.
    case unsupported(request: String, server: String)
    /// A request that selects its rows in the app and then writes them in one snapshot (a batch delete or
    /// update whose predicate the server cannot say) met rows other sessions changed after its snapshot on
    /// every one of `attempts` tries (PostgreSQL's SQLSTATE 40001); nothing was written. The request names
    /// its kind and entity.
    case serializationFailure(request: String, attempts: Int, server: String)

    /// The message naming the store's path and what went wrong.
    public var description: String {
        switch self {
        case .notAStore(let path, let reason): return "\(path) is not a store: \(reason)."
        case .incompatibleModel(let path, let differences):
            return "\(path) was written with a different model: " + differences.joined(separator: "; ") + "."
        case .busy(let path): return "\(path) is busy: another connection holds the write lock."
        case .readOnly(let path): return "\(path) is opened read-only."
        case .sqlite(let code, let message, let sql):
            return "SQLite error \(code): \(message)" + (sql.map { " (in \($0))" } ?? "")
        case .uniqueConstraintFailed(let path, let columns, let message):
            return "\(path): a unique index over \(columns.joined(separator: ", ")) refused the write: \(message)"
        case .corrupt(let path, let reason): return "\(path) is corrupt: \(reason)."
        case .foreignSchemaObjects(let path, let objects):
            return "\(path) holds schema objects this library did not make, which would act on its writes: "
                + objects.joined(separator: ", ")
                + ". Open it read-only, or set StoreOptions.allowsForeignSchemaObjects to write anyway."
        case .primaryKeysExhausted(let path, let entity, let maximum):
            return "\(path): entity '\(entity)' has no primary keys left (Z_PRIMARYKEY.Z_MAX is \(maximum)); nothing was written."
        case .unreadableExternalData(let path, let entity, let key, let primaryKey, let reason):
            return "\(path): the value of '\(entity).\(key)' in row \(primaryKey) cannot be read: \(reason)."
        case .externalDataNotWritten(let path, let entity, let key, let reason):
            return "\(path): a value of '\(entity).\(key)' could not be stored outside the row: \(reason); nothing was saved."
        case .invalidURL(let url, let reason): return "store URL \(url): \(reason)"
        case .connectionFailed(let server, let reason): return "cannot connect to the database server at \(server): \(reason)"
        case .serverError(let state, let message, let statement):
            return "the database server refused \(statement.prefix(60))…: \(message) (SQLSTATE \(state))"
        case .connectionLost(let server, let reason): return "lost the connection to the database server at \(server): \(reason)"
        case .unexpectedValue(let column, let type): return "column \(column) holds a value of type \(type), which the layout never writes"
        case .unsupported(let request, let server): return "\(request) is not supported on this store yet (\(server))"
        case .serializationFailure(let request, let attempts, let server):
            return "\(request) met rows other sessions changed after its snapshot on each of \(attempts) attempts; nothing was changed, run it again (\(server))"
        }
    }

    /// The same text as ``description``, for `LocalizedError`.
    public var errorDescription: String? { description }
}
