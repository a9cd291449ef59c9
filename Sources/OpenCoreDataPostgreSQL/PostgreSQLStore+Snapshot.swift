import Foundation
import OpenCoreData

/// One snapshot for a selection made in the app and the statement acting on it (``StoreBackend``'s
/// `inOneSnapshot`): a batch delete or update whose predicate the server cannot say, a dictionary fetch
/// restricted to the keys a residual predicate kept (``ResidualQuery``).
extension PostgreSQLStore {
    /// How many times a write in one snapshot is tried before ``PostgreSQLStoreError/serializationFailure(request:attempts:server:)``.
    static let snapshotAttempts = 5

    /// Runs `body` on one session pinned to this thread, in `REPEATABLE READ` (`READ ONLY` unless `writing`):
    /// its selection and the statement acting on it see one snapshot and commit together. A write that meets
    /// a row another transaction changed after the snapshot fails with SQLSTATE 40001 (or a deadlock, 40P01)
    /// instead of acting on the row as it was selected: everything rolls back and `body` runs again on a new
    /// snapshot, up to ``snapshotAttempts`` times, after a short random pause growing with each attempt (other
    /// writers' saves, which also move the history's transaction counter, commit in between rather than meet
    /// the retry in step). Inside a transaction already open on this thread (a nested call, a store borrowing a
    /// migration's session) `body` joins it as a savepoint and is not retried: its snapshot stands.
    ///
    /// - Throws: what `body` throws; ``PostgreSQLStoreError/serializationFailure(request:attempts:server:)``
    ///   naming `request` when every attempt met a concurrent change; ``PostgreSQLStoreError`` when BEGIN or
    ///   COMMIT is refused or the connection drops.
    package func inOneSnapshot<T>(writing: Bool, request: String, _ body: () throws -> T) throws -> T {
        let begin = writing ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
        var attempt = 1
        while true {
            var retryable = false
            do {
                return try pool.withPinnedSession { session in
                    retryable = !session.isInTransaction
                    return try session.transaction(beginning: begin, body)
                }
            } catch PostgreSQLStoreError.serverError(let state, _, _) where retryable && ["40001", "40P01"].contains(state) {
                guard attempt < Self.snapshotAttempts else {
                    throw PostgreSQLStoreError.serializationFailure(request: request, attempts: attempt, server: displayPath)
                }
                Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.02) * Double(attempt))
                attempt += 1
            }
        }
    }
}
