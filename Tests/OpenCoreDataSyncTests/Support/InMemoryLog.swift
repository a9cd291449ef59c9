import Foundation
import Synchronization
@testable import OpenCoreDataSync

/// A server's log in memory, for tests of the client's logic alone: transactions in arrival order, a
/// repeated ID acknowledged and not logged again, and a switch that makes it unreachable. It checks nothing
/// against the model; the suites under Server/ run the real server.
final class InMemoryLog: SyncTransport, Sendable {
    private let state = Mutex<(log: [SyncTransaction], ids: Set<String>, offline: Bool)>(([], [], false))

    /// Makes every call fail as unreachable (true) or work again (false).
    func setOffline(_ offline: Bool) { state.withLock { $0.offline = offline } }

    /// Every logged transaction, oldest first.
    var transactions: [SyncTransaction] { state.withLock { $0.log } }

    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        try state.withLock { state in
            if state.offline { throw SyncError.unreachable(server: "memory", reason: "offline") }
            for transaction in request.transactions where !state.ids.contains(transaction.id) {
                var logged = transaction
                logged.serverToken = Int64(state.log.count + 1)
                state.log.append(logged)
                state.ids.insert(transaction.id)
            }
            return SyncPushResponse(acknowledged: request.transactions.map(\.id), serverToken: Int64(state.log.count))
        }
    }

    func pull(after token: Int64, limit: Int) async throws -> SyncPullResponse {
        try state.withLock { state in
            if state.offline { throw SyncError.unreachable(server: "memory", reason: "offline") }
            let after = state.log.filter { $0.serverToken > token }
            let page = Array(after.prefix(limit))
            return SyncPullResponse(transactions: page, serverToken: page.last?.serverToken ?? token, hasMore: after.count > page.count)
        }
    }
}
