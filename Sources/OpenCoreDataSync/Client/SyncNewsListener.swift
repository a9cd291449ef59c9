import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Listens to the server's `GET /v1/events` (server-sent events) and calls `onNews` for each `token`
/// event, so that a device pulls as soon as another one pushed instead of at its next poll. Reconnects after
/// a dropped stream, waiting longer each time up to 30 s; never throws (polling still runs without it).
///
/// A delegate rather than `URLSession.bytes(for:)`, which swift-corelibs-foundation does not have.
final class SyncNewsListener: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let server: URL
    private let token: @Sendable () async throws -> String
    private let onNews: @Sendable () -> Void
    private let state = Mutex<(buffer: String, task: URLSessionDataTask?, stopped: Bool, failures: Int)>(("", nil, false, 0))
    private var session: URLSession!

    init(server: URL, token: @escaping @Sendable () async throws -> String, onNews: @escaping @Sendable () -> Void) {
        self.server = server
        self.token = token
        self.onNews = onNews
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 3600
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Opens the stream (and keeps reopening it) until ``stop()``.
    func start() {
        Task { await connect() }
    }

    /// Closes the stream for good.
    func stop() {
        let task = state.withLock { state -> URLSessionDataTask? in
            state.stopped = true
            return state.task
        }
        task?.cancel()
        session.invalidateAndCancel()
    }

    private func connect() async {
        guard !state.withLock({ $0.stopped }) else { return }
        var request = URLRequest(url: server.appendingPathComponent("v1/events"))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let bearer = try? await token() { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let task = session.dataTask(with: request)
        let stopped = state.withLock { state -> Bool in
            state.buffer = ""
            state.task = task
            return state.stopped
        }
        if stopped { return }
        task.resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events = state.withLock { state -> Int in
            state.failures = 0
            state.buffer += String(decoding: data, as: UTF8.self)
            var count = 0
            while let end = state.buffer.range(of: "\n\n") {
                let event = state.buffer[..<end.lowerBound]
                if event.split(separator: "\n").contains(where: { $0.hasPrefix("event: token") || $0 == "event:token" }) { count += 1 }
                state.buffer.removeSubrange(..<end.upperBound)
            }
            if state.buffer.count > 65_536 { state.buffer = "" }   // no event is that long: not a stream of ours
            return count
        }
        if events > 0 { onNews() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let (stopped, failures) = state.withLock { state -> (Bool, Int) in
            state.failures += 1
            return (state.stopped, state.failures)
        }
        guard !stopped else { return }
        let delay = min(30.0, 0.5 * Double(1 << min(failures, 6)))
        Task {
            try? await Task.sleep(for: .seconds(delay))
            await self.connect()
        }
    }
}
