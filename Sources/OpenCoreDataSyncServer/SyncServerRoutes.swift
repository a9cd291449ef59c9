import Foundation
import Hummingbird
import OpenCoreData
import OpenCoreDataSync

/// The sync server's HTTP surface: `POST /v1/push`, `GET /v1/pull`, `GET /v1/records`, `GET /v1/events`,
/// each for the zone of the user the bearer token names. Every refusal is a ``SyncErrorResponse`` with its
/// status; nothing a client sends is echoed unescaped into a log.
struct SyncServerRoutes: Sendable {
    let server: SyncServer

    /// The largest push body accepted (a client sends at most a few hundred transactions at a time).
    static let maximumPushBytes = 32 * 1024 * 1024
    /// The most transactions one pull returns.
    static let maximumPullLimit = 1000

    /// The response to `request`; never throws: every failure becomes a refusal.
    func respond(to request: Request) async -> Response {
        do {
            let zone = try await user(of: request)
            switch (request.method, request.uri.path) {
            case (.post, "/v1/push"):
                let body = try await collect(request)
                let push: SyncPushRequest
                do { push = try JSONDecoder().decode(SyncPushRequest.self, from: body) } catch {
                    throw SyncRefusal.badRequest("the body is not a push: \(Self.describe(error))")
                }
                let answer = try server.store.push(push, zone: zone)
                server.hub.publish(zone: zone, token: answer.serverToken)
                return try json(answer)
            case (.get, "/v1/pull"):
                let query = request.uri.queryParameters
                guard let after = Int64(String(query["after"] ?? "0")), after >= 0 else {
                    throw SyncRefusal.badRequest("after is a token: a whole number from 0")
                }
                guard let limit = Int(String(query["limit"] ?? "500")), (1...Self.maximumPullLimit).contains(limit) else {
                    throw SyncRefusal.badRequest("limit is a whole number from 1 to \(Self.maximumPullLimit)")
                }
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                let body = try server.store.pullBody(zone: zone, after: after, limit: limit)
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: body)))
            case (.get, "/v1/records"):
                return try json(try server.store.records(zone: zone))
            case (.get, "/v1/events"):
                return events(zone: zone)
            default:
                return refusal(SyncRefusal(status: 404, body: .init(reason: "not-found", message: "no such endpoint")))
            }
        } catch let refusal as SyncRefusal {
            return self.refusal(refusal)
        } catch {
            return refusal(SyncRefusal(status: 500, body: .init(reason: "server-error", message: Self.describe(error))))
        }
    }

    /// The zone of the user the request's bearer token names.
    ///
    /// - Throws: ``SyncRefusal/unauthorized(_:)`` for a missing, malformed, forged or expired token.
    private func user(of request: Request) async throws -> String {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw SyncRefusal.unauthorized("a bearer token is required (ocd sync token makes one)")
        }
        guard let user = await server.tokens.user(of: String(header.dropFirst("Bearer ".count))) else {
            throw SyncRefusal.unauthorized("the token is malformed, signed with another key, or expired")
        }
        return user
    }

    private func collect(_ request: Request) async throws -> Data {
        do {
            return Data(buffer: try await request.body.collect(upTo: Self.maximumPushBytes))
        } catch {
            throw SyncRefusal(status: 413, body: .init(reason: "bad-request", message: "a push is at most \(Self.maximumPushBytes) bytes"))
        }
    }

    /// `/v1/events`: `event: token` with the zone's token whenever it moves, a comment line every 15 s so
    /// that a proxy keeps the stream and a gone client is noticed.
    private func events(zone: String) -> Response {
        let current = (try? server.store.token(zone: zone)) ?? 0
        let stream = server.hub.subscribe(zone: zone, current: current)
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            // Tokens and heartbeats merged into one stream, so that one loop writes them all.
            let (messages, continuation) = AsyncStream.makeStream(of: String.self)
            continuation.yield("retry: 1000\nevent: token\ndata: \(current)\n\n")
            let forward = Task {
                for await token in stream { continuation.yield("event: token\ndata: \(token)\n\n") }
                continuation.finish()
            }
            let heartbeat = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(15))
                    continuation.yield(": heartbeat\n\n")
                }
            }
            defer {
                forward.cancel()
                heartbeat.cancel()
            }
            for await message in messages {
                try await writer.write(ByteBuffer(string: message))
            }
            try await writer.finish(nil)
        })
    }

    private func json<Value: Encodable>(_ value: Value) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: try JSONEncoder().encode(value))))
    }

    private func refusal(_ refusal: SyncRefusal) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if refusal.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        let body = (try? JSONEncoder().encode(refusal.body)) ?? Data()
        return Response(status: HTTPResponse.Status(code: refusal.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: body)))
    }

    /// An error as one line with control characters escaped, for a refusal's message.
    static func describe(_ error: Error) -> String {
        String(describing: error).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }
            .joined().prefix(500).description
    }
}
