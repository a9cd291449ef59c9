import Foundation
import OpenCoreData

/// Persistent history through a mapping-model migration on PostgreSQL: the same copy SQLite makes
/// (``MappingMigrationHistory``), from the store's schema into the migration's working schema.
extension MappingMigrationHistory.Store {
    /// The PostgreSQL store in the schema `session` works in.
    static func postgreSQL(_ session: PostgreSQLSession) -> Self {
        Self(name: session.server,
             connection: session,
             columns: { table in
                 try session.rows("""
                     SELECT upper(column_name) FROM information_schema.columns
                     WHERE table_schema = current_schema() AND upper(table_name) = ? ORDER BY ordinal_position
                     """, [table.storeValue]).compactMap { String.fromStoreValue($0[0]) }
             },
             hasReaderRegistry: { try PostgreSQLHistory.presence(in: session).readerRegistry },
             createTables: { model, registry in try PostgreSQLHistory.create(in: session, model: model, readerRegistry: registry) },
             recordMigration: { contextName in
                 try HistoryTransactionWriter.insertTransaction(author: PersistentHistoryTransaction.migrationAuthor,
                                                                contextName: contextName, in: session)
             })
    }
}

extension PostgreSQLStore {
    /// Runs `body`, a step carrying the history over; a statement the server refuses names that step.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` for a refused statement; anything else
    ///   `body` throws, unchanged.
    static func carryingHistory<Result>(server: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch StoreError.serverError(let state, let message, _) {
            throw MigrationError.stepFailed(path: server, step: "carry the persistent history over",
                                            reason: "\(message) (SQLSTATE \(state))")
        }
    }
}
