import Foundation
import OpenCoreDataSync

/// A request the sync server refuses: the HTTP status and the body it answers with.
struct SyncRefusal: Error {
    let status: Int
    let body: SyncErrorResponse

    static func badRequest(_ message: String) -> SyncRefusal { .init(status: 400, body: .init(reason: "bad-request", message: message)) }
    static func unauthorized(_ message: String) -> SyncRefusal { .init(status: 401, body: .init(reason: "unauthorized", message: message)) }
    static func foreignRecord(_ id: UUID) -> SyncRefusal {
        .init(status: 403, body: .init(reason: "foreign-record", message: "record \(id) belongs to another zone"))
    }
    static func modelMismatch(server: String, client: String) -> SyncRefusal {
        .init(status: 409, body: .init(reason: "model-mismatch",
                                       message: "the client's model \(client) is not the server's \(server); update the app or the server"))
    }
    static func invalidChange(_ message: String) -> SyncRefusal { .init(status: 422, body: .init(reason: "invalid-change", message: message)) }
}
