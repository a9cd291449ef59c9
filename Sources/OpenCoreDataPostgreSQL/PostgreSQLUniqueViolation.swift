import Foundation
import OpenCoreData
import PostgresNIO

/// A write refused by a unique index (SQLSTATE 23505), with the index as the server names it.
///
/// A save's constraint lookup and its write are two steps; another instance may commit the same values in
/// between (or while the write waits for that instance's transaction). The index refuses the write, and the
/// context should hear it as it does on SQLite: a uniqueness violation naming the entity, the constraint's
/// keys and the objects (``StoreError/uniqueConstraintFailed(path:columns:message:)``), not a server error.
struct PostgreSQLUniqueViolation: Error {
    /// The index's name as PostgreSQL gives it (folded to lower case).
    let index: String
    let message: String
    let statement: String

    /// The violation `error` reports, or nil when it is not a unique violation naming its index.
    init?(_ error: any Error, statement: String) {
        guard let error = error as? PSQLError, error.code == .server, let info = error.serverInfo,
              info[.sqlState] == "23505", let index = info[.constraintName] else { return nil }
        self.index = index
        message = info[.message] ?? "duplicate key value violates unique constraint \"\(index)\""
        self.statement = statement
    }

    /// What the layers above are told: ``StoreError/uniqueConstraintFailed(path:columns:message:)`` for the
    /// index of one of the model's uniqueness constraints, else the server error it is (an index the layout
    /// did not make).
    func storeError(schema: StoreSchema, server: String) -> any Error {
        if let found = schema.indexes.first(where: { $0.unique && $0.name.lowercased() == index.lowercased() }) {
            return StoreError.uniqueConstraintFailed(path: server, columns: found.columns.map { "\(found.table).\($0)" },
                                                     message: message)
        }
        return StoreError.serverError(sqlState: "23505", message: message, statement: statement)
    }
}
