import Foundation
import Synchronization

/// Tells open `/v1/events` streams that their zone's token moved: after this instance's pushes at once, and
/// after another instance's or process's commits as the store's remote-change watch notices them.
final class SyncEventHub: Sendable {
    private let subscribers = Mutex<[UUID: (zone: String, continuation: AsyncStream<Int64>.Continuation)]>([:])
    /// The last token told per zone: the same commit can be noticed twice (this instance's push, then the
    /// store's change watch), and a zone whose token did not move has no news.
    private let told = Mutex<[String: Int64]>([:])

    /// A stream of `zone`'s tokens after `current` (which the stream's client has been told), until the
    /// client goes or ``finish()``.
    func subscribe(zone: String, current: Int64) -> AsyncStream<Int64> {
        told.withLock { $0[zone] = max($0[zone, default: -1], current) }
        let (stream, continuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        subscribers.withLock { $0[id] = (zone, continuation) }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    /// The zones someone listens to.
    var zones: Set<String> { subscribers.withLock { Set($0.values.map(\.zone)) } }

    /// Tells `zone`'s listeners its token is now `token`, unless they were told that token or a later one.
    func publish(zone: String, token: Int64) {
        let isNews = told.withLock { told in
            guard token > told[zone, default: -1] else { return false }
            told[zone] = token
            return true
        }
        guard isNews else { return }
        for entry in subscribers.withLock({ Array($0.values) }) where entry.zone == zone { entry.continuation.yield(token) }
    }

    /// Ends every stream (the server is stopping).
    func finish() {
        for entry in subscribers.withLock({ Array($0.values) }) { entry.continuation.finish() }
    }
}
