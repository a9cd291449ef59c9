import Foundation
import GRDB

extension MappingMigrationHistory.Store {
    /// The SQLite store file open as `db` at `path`.
    static func sqlite(_ db: Database, path: String) -> Self {
        Self(name: path, connection: SQLiteSession(db: db),
              columns: { table in try Row.fetchAll(db, sql: "PRAGMA table_info(\(table))").map { ($0["name"] as String).uppercased() } },
              hasReaderRegistry: { try HistoryReaderRegistry.exists(in: SQLiteSession(db: db)) },
              createTables: { model, registry in
                  try HistoryTables.create(in: db, model: model)
                  if registry { try HistoryReaderRegistry.create(in: db) }
              },
              recordMigration: { contextName in
                  try HistoryTransactionWriter.insertTransaction(author: PersistentHistoryTransaction.migrationAuthor,
                                                                contextName: contextName, in: SQLiteSession(db: db))
              })
    }
}

/// ``MappingMigrationHistory`` between SQLite store files, each opened for the step that needs it.
extension MappingMigrationHistory {
    /// Reads the source store at `path`; nil when it has no history tables.
    ///
    /// - Throws: the ``StoreError`` opening or reading the file throws.
    static func read(sourceAt path: String) throws -> MappingMigrationHistory? {
        try ReadOnlyStoreFile.read(path) { db -> MappingMigrationHistory? in
            guard try HistoryTables.exist(in: db) else { return nil }
            return try read(.sqlite(db, path: path))
        }
    }

    /// Before any object is made: every entity of the (new, empty) destination store gives keys above
    /// the highest the source ever gave, so the old keys kept by changes of objects the migration did not
    /// carry never name an object of the new store.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when the destination cannot be written.
    func reserveKeys(inDestinationAt path: String) throws {
        try writing(path, step: "reserve keys above the history's") { db in try reserveKeys(in: .sqlite(db, path: path)) }
    }

    /// After every object is made and the destination store closed: copies the history into it, changes
    /// following their objects through `run`'s associations, and records the migration's transaction.
    ///
    /// - Throws: ``MigrationError/stepFailed(path:step:reason:)`` when a table cannot be read or written.
    func carry(into destinationPath: String, run: MappingRun) throws {
        try writing(destinationPath, step: "carry the persistent history over") { destination in
            try ReadOnlyStoreFile.read(sourceName) { source in
                _ = try carry(from: .sqlite(source, path: sourceName), into: .sqlite(destination, path: destinationPath), run: run)
            }
        }
    }

    /// Runs `body` in one write transaction on the store file at `path`, turning SQLite's errors into
    /// ``MigrationError/stepFailed(path:step:reason:)``.
    private func writing(_ path: String, step: String, _ body: (Database) throws -> Void) throws {
        do {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            try queue.write(body)
        } catch let error as DatabaseError {
            throw MigrationError.stepFailed(path: path, step: step, reason: error.message ?? "SQLite error \(error.resultCode.rawValue)")
        }
    }
}
