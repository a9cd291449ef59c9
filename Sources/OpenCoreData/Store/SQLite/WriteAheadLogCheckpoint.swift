import Foundation
import GRDB

/// Moving a store's write-ahead log into its file (``StoreOptions/checkpointsWriteAheadLogOnOpen``, Core
/// Data's `journal_mode = DELETE` pragma option): afterwards the file alone holds every commit.
enum WriteAheadLogCheckpoint {
    /// Checkpoints the log of the SQLite file at `path` fully and empties it; nothing happens when the file
    /// has no `-wal` beside it.
    ///
    /// - Throws: the ``StoreError`` opening maps SQLite's error to (a file that is not SQLite included),
    ///   ``StoreError/busy(path:)`` when another connection keeps the log in use past `busyTimeout`.
    static func run(onStoreAt path: String, busyTimeout: TimeInterval) throws {
        guard FileManager.default.fileExists(atPath: path + "-wal") else { return }
        let queue = try MigrationRunner.openConnection(to: path, busyTimeout: busyTimeout, label: "OpenCoreData.checkpoint")
        defer { try? queue.close() }
        do {
            // (busy, log frames, checkpointed frames): busy is 1 when readers kept part of the log in use.
            let result = try queue.writeWithoutTransaction { try Row.fetchOne($0, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            if let busy = result?[0] as Int?, busy != 0 { throw StoreError.busy(path: path) }
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
    }
}
