import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client's side of the sync protocol (docs/SYNC.md): push and pull over HTTP with a bearer token.
struct SyncServerConnection: SyncTransport {
    /// The server's base URL (`http://127.0.0.1:8750`).
    let server: URL
    /// Gives the bearer token for each request (so that an app can renew it).
    let token: @Sendable () async throws -> String
    let session: URLSession

    init(server: URL, token: @escaping @Sendable () async throws -> String) {
        self.server = server
        self.token = token
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration)
    }

    /// Sends `request`; returns the server's acknowledgement.
    ///
    /// - Throws: ``SyncError/refused(status:reason:message:)``, ``SyncError/unreachable(server:reason:)``,
    ///   ``SyncError/malformedResponse(reason:)``.
    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        let body: Data
        do { body = try JSONEncoder().encode(request) } catch {
            throw SyncError.malformedResponse(reason: "the push cannot be written as JSON: \(error)")
        }
        return try await call("POST", path: "v1/push", query: [], body: body)
    }

    /// Asks for the zone's transactions after `token`.
    ///
    /// - Throws: as ``push(_:)``.
    func pull(after token: Int64, limit: Int) async throws -> SyncPullResponse {
        try await call("GET", path: "v1/pull", query: [URLQueryItem(name: "after", value: String(token)),
                                                       URLQueryItem(name: "limit", value: String(limit))], body: nil)
    }

    private func call<Answer: Decodable>(_ method: String, path: String, query: [URLQueryItem], body: Data?) async throws -> Answer {
        var components = URLComponents(url: server.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query }
        guard let url = components?.url else { throw SyncError.unreachable(server: server.absoluteString, reason: "not a URL") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(try await token())", forHTTPHeaderField: "Authorization")
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw SyncError.unreachable(server: server.absoluteString, reason: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw SyncError.malformedResponse(reason: "not an HTTP answer")
        }
        guard (200..<300).contains(http.statusCode) else {
            let refusal = try? JSONDecoder().decode(SyncErrorResponse.self, from: data)
            throw SyncError.refused(status: http.statusCode, reason: refusal?.reason ?? "unknown",
                                    message: refusal?.message ?? String(decoding: data.prefix(200), as: UTF8.self))
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw SyncError.malformedResponse(reason: "\(method) /\(path): \(error)")
        }
    }
}
