import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import OpenCoreData
@testable import OpenCoreDataSync
@testable import OpenCoreDataSyncServer

/// A real sync server on a loopback port, in this process, with its state in an SQLite file (or, given one,
/// a PostgreSQL URL), and plain HTTP calls to it.
final class SyncTestServer: @unchecked Sendable {
    let folder: URL
    let store: String
    let key: Data
    let model: ManagedObjectModel
    private(set) var server: SyncServer?
    private(set) var port = 0

    /// Starts a server on `store` (default: an SQLite file in a folder of its own), on `port` (0: any),
    /// signing with `key` (default: a new one).
    init(model: ManagedObjectModel, store: String? = nil, port: Int = 0, key: Data? = nil) async throws {
        self.key = key ?? Data((0..<32).map { _ in UInt8.random(in: .min ... .max) })
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-sync-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.store = store ?? folder.appendingPathComponent("sync.sqlite").path
        self.model = model
        try await start(port: port)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// Starts (again) on `port` (0: any; the same one after a stop, so clients keep their URL).
    func start(port: Int? = nil) async throws {
        let server = try await SyncServer(SyncServerConfiguration(store: store, model: model, key: key, port: port ?? self.port))
        self.port = try await server.start()
        self.server = server
    }

    /// Stops the server; clients find nobody there until ``start(port:)``.
    func stop() async {
        await server?.stop()
        server = nil
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A token for `user`, valid for `lifetime`, signed with this server's key (or `key`).
    func token(for user: String, lifetime: Duration = .seconds(3600), key: Data? = nil) async throws -> String {
        try await SyncTokens(key: key ?? self.key).token(for: user, lifetime: lifetime)
    }

    /// One HTTP call: status and body.
    func call(_ method: String, _ path: String, token: String?, body: Data? = nil) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.httpBody = body
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// Pushes `transactions` made with `model` (default: the server's) as `token`'s user.
    func push(_ transactions: [SyncTransaction], token: String, model fingerprint: String? = nil) async throws -> (status: Int, body: Data) {
        let request = SyncPushRequest(model: fingerprint ?? SyncModelFingerprint.of(model), transactions: transactions)
        return try await call("POST", "/v1/push", token: token, body: try JSONEncoder().encode(request))
    }

    /// The zone's records, as the server holds them.
    func records(token: String) async throws -> [SyncRecordState] {
        let (status, body) = try await call("GET", "/v1/records", token: token)
        guard status == 200 else { throw SyncError.refused(status: status, reason: "", message: String(decoding: body, as: UTF8.self)) }
        return try JSONDecoder().decode([SyncRecordState].self, from: body)
    }

    /// The server's copy in a replica snapshot's form: live records, attributes as sent, relationships as the
    /// record IDs of live destinations (a link to a deleted record is dropped, as each replica drops it).
    func snapshot(token: String) async throws -> [String: ReplicaObject] {
        let records = try await records(token: token)
        let live = Dictionary(uniqueKeysWithValues: records.filter { !$0.deleted }.map { ($0.recordID, $0) })
        var result: [String: ReplicaObject] = [:]
        for record in live.values {
            guard let entity = model.entitiesByName[record.entity] else { continue }
            var values: [String: SyncValue] = [:]
            for key in SyncedProperties.attributes(of: entity).keys { values[key] = record.values[key] ?? .null }
            for (key, relationship) in SyncedProperties.relationships(of: entity) {
                switch record.values[key] {
                case .reference(let id)?: values[key] = .string(live[id] != nil ? id.uuidString : "-")
                case .references(let ids)?: values[key] = .string(ids.filter { live[$0] != nil }.map(\.uuidString).sorted().joined(separator: ","))
                default: values[key] = .string(relationship.isToMany ? "" : "-")
                }
            }
            result[record.recordID.uuidString] = ReplicaObject(entity: record.entity, values: values)
        }
        return result
    }
}

/// The first few differences between two snapshots, for a failure message (empty when equal).
func differences(_ expected: [String: ReplicaObject], _ actual: [String: ReplicaObject]) -> String {
    let keys = Set(expected.keys).symmetricDifference(actual.keys).union(expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] })
    return keys.sorted().prefix(3).map {
        "\($0): \(expected[$0].map(String.init(describing:)) ?? "absent") vs \(actual[$0].map(String.init(describing:)) ?? "absent")"
    }.joined(separator: "; ")
}
