import Foundation

/// How an engine reaches the server's log: over HTTP (``SyncServerConnection``), or in memory in tests.
protocol SyncTransport: Sendable {
    /// Sends transactions; the answer acknowledges them.
    ///
    /// - Throws: ``SyncError``.
    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse
    /// The zone's transactions after `token`, at most `limit`.
    ///
    /// - Throws: ``SyncError``.
    func pull(after token: Int64, limit: Int) async throws -> SyncPullResponse
}
