import Foundation
import OpenCoreData

/// One snapshot for a selection made in the app and the statement acting on it (``StoreBackend``'s
/// `inOneSnapshot`): a batch delete or update whose predicate the server cannot say, a dictionary fetch
/// restricted to the keys a residual predicate kept (``ResidualQuery``).
extension PostgreSQLStore {
    /// How many times a write in one snapshot is tried before ``StoreError/serializationFailure(request:attempts:server:)``.
    static let snapshotAttempts = 5

    /// Runs `body` on one session pinned to this thread, in `REPEATABLE READ` (`READ ONLY` unless `writing`):
    /// its selection and the statement acting on it see one snapshot and commit together. A write that meets
    /// a row another transaction changed after the snapshot fails with SQLSTATE 40001 (or a deadlock, 40P01, or
    /// the lock timeout below, 55P03) instead of acting on the row as it was selected: everything rolls back and
    /// `body` runs again on a new snapshot, up to ``snapshotAttempts`` times, after a short random pause growing
    /// with each attempt. With history on, attempts after the first hold off other writers' history commits and
    /// key reservations (both write `Z_PRIMARYKEY`) until they commit, so ordinary saves meanwhile do not keep
    /// the write from finishing. Inside a transaction already open on this thread (a nested call, a store
    /// borrowing a migration's session) `body` joins it as a savepoint and is not retried: its snapshot stands.
    ///
    /// - Throws: what `body` throws; ``StoreError/serializationFailure(request:attempts:server:)``
    ///   naming `request` when every attempt met a concurrent change; ``StoreError`` when BEGIN or
    ///   COMMIT is refused or the connection drops.
    package func inOneSnapshot<T>(writing: Bool, request: String, _ body: () throws -> T) throws -> T {
        let begin = writing ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
        var attempt = 1
        while true {
            var retryable = false
            do {
                let holdsHistory = writing && recordsHistory && attempt > 1
                return try pool.withPinnedSession { session in
                    retryable = !session.isInTransaction
                    return try session.transaction(beginning: begin) {
                        if holdsHistory && retryable {
                            // Every history-recording commit moves the transaction counter in Z_PRIMARYKEY, which
                            // this write moves too: under REPEATABLE READ any such commit during the attempt is a
                            // conflict, even on rows it never touched. After one conflict, the counter's table is
                            // locked against other writers before the snapshot is taken (LOCK takes none), so
                            // only changes to the rows themselves can conflict. Savers lock their rows first and
                            // the counter last: a short lock timeout makes this write, not theirs, give way when
                            // it would wait for one of their rows.
                            try session.execute("LOCK TABLE Z_PRIMARYKEY IN SHARE ROW EXCLUSIVE MODE")
                            try session.execute("SET LOCAL lock_timeout = '200ms'")
                        }
                        return try body()
                    }
                }
            } catch StoreError.serverError(let state, _, _) where retryable && ["40001", "40P01", "55P03"].contains(state) {
                guard attempt < Self.snapshotAttempts else {
                    throw StoreError.serializationFailure(request: request, attempts: attempt, server: displayPath)
                }
                Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.02) * Double(attempt))
                attempt += 1
            }
        }
    }
}
