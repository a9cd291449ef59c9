import Foundation

/// What can go wrong between a PostgreSQL store and its server.
public enum PostgreSQLStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A store URL (or the environment standing in for one) that cannot be used, and why.
    case invalidURL(String, reason: String)
    /// The server could not be reached or refused the connection.
    case connectionFailed(server: String, reason: String)
    /// The server refused a statement: its SQLSTATE code, its message, and the statement's first words.
    case serverError(sqlState: String, message: String, statement: String)
    /// The connection dropped while a statement was running; the transaction did not commit.
    case connectionLost(server: String, reason: String)
    /// The database holds a store written with another model (each difference named), or tables of the
    /// layout that do not fit it.
    case incompatibleStore(server: String, differences: [String])
    /// A value the store reads back has a type the layout does not use (column, type name).
    case unexpectedValue(column: String, type: String)
    /// A request the PostgreSQL store cannot run yet (an asynchronous fetch, history
    /// readers), refused before anything runs; the request names its entity or operation.
    case unsupported(request: String, server: String)
    /// A request that selects its rows in the app and then writes them in one snapshot (a batch delete or update
    /// whose predicate the server cannot say) met rows other sessions changed after its snapshot on every one of
    /// `attempts` tries (SQLSTATE 40001); nothing was written. The request names its kind and entity.
    case serializationFailure(request: String, attempts: Int, server: String)

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .invalidURL(let url, let reason): "PostgreSQL store URL \(url): \(reason)"
        case .connectionFailed(let server, let reason): "cannot connect to PostgreSQL at \(server): \(reason)"
        case .serverError(let state, let message, let statement):
            "PostgreSQL refused \(statement.prefix(60))…: \(message) (SQLSTATE \(state))"
        case .connectionLost(let server, let reason): "lost the connection to PostgreSQL at \(server): \(reason)"
        case .incompatibleStore(let server, let differences):
            "the store at \(server) was written with a different model: \(differences.joined(separator: "; "))"
        case .unexpectedValue(let column, let type): "column \(column) holds a value of type \(type), which the layout never writes"
        case .unsupported(let request, let server): "\(request) is not supported on a PostgreSQL store yet (\(server))"
        case .serializationFailure(let request, let attempts, let server):
            "\(request) met rows other sessions changed after its snapshot on each of \(attempts) attempts; nothing was changed, run it again (\(server))"
        }
    }
}
