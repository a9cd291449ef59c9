import Foundation
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataSync
@testable import OpenCoreDataSyncServer

/// The sync server over real HTTP: what a push applies, what it refuses (naming the culprit), and whose
/// zone a token opens.
@Suite("Sync server: push, pull, refusals and zones over HTTP")
struct SyncServerProtocolTests {
    static func note(_ id: UUID, title: String?, folder: UUID? = nil) -> SyncRecordChange {
        var values: [String: SyncValue] = ["words": .integer(3), "pinned": .bool(false), "edited": .null, "price": .decimal("1.5"),
                                           "blob": .null, "folder": folder.map { .reference($0) } ?? .null, "tags": .references([])]
        values["title"] = title.map { .string($0) } ?? .null
        return SyncRecordChange(recordID: id, entity: "Note", kind: .upsert, values: values)
    }

    static func transaction(_ number: Int, _ changes: [SyncRecordChange]) -> SyncTransaction {
        SyncTransaction(id: "client:\(number)", origin: "client", changes: changes)
    }

    @Test func aPushIsPulledBackAndARepeatedTransactionAppliesOnce() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let token = try await server.token(for: "alice")
        let (folder, note) = (UUID(), UUID())
        let first = [Self.transaction(1, [SyncRecordChange(recordID: folder, entity: "Folder", kind: .upsert, values: ["name": .string("Work")]),
                                          Self.note(note, title: "a", folder: folder)])]
        #expect(try await server.push(first, token: token).status == 200)
        // The same transaction again, with a new one: the first is acknowledged, not applied twice.
        let again = first + [Self.transaction(2, [SyncRecordChange(recordID: note, entity: "Note", kind: .upsert, values: ["title": .string("b")])])]
        let answer = try await server.push(again, token: token)
        #expect(answer.status == 200)
        let acknowledged = try JSONDecoder().decode(SyncPushResponse.self, from: answer.body)
        #expect(acknowledged.acknowledged == ["client:1", "client:1", "client:2"] || Set(acknowledged.acknowledged) == ["client:1", "client:2"])
        #expect(acknowledged.serverToken == 2)
        let (status, body) = try await server.call("GET", "/v1/pull?after=0&limit=10", token: token)
        #expect(status == 200)
        let pulled = try JSONDecoder().decode(SyncPullResponse.self, from: body)
        #expect(pulled.transactions.map(\.id) == ["client:1", "client:2"])
        #expect(pulled.transactions.map(\.serverToken) == [1, 2])
        #expect(pulled.serverToken == 2 && !pulled.hasMore)
        let paged = try JSONDecoder().decode(SyncPullResponse.self, from: try await server.call("GET", "/v1/pull?after=0&limit=1", token: token).body)
        #expect(paged.transactions.map(\.id) == ["client:1"] && paged.hasMore && paged.serverToken == 1)
        let records = try await server.records(token: token)
        #expect(records.first { $0.recordID == note }?.values["title"] == .string("b"))
        #expect(records.first { $0.recordID == note }?.values["words"] == .integer(3), "a partial upsert merges into the record")
    }

    @Test func aDeleteWinsOverALaterUpsert() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let token = try await server.token(for: "alice")
        let note = UUID()
        _ = try await server.push([Self.transaction(1, [Self.note(note, title: "a")]),
                                   Self.transaction(2, [SyncRecordChange(recordID: note, entity: "Note", kind: .delete)]),
                                   Self.transaction(3, [SyncRecordChange(recordID: note, entity: "Note", kind: .upsert, values: ["title": .string("back")])])],
                                  token: token)
        let record = try #require(try await server.records(token: token).first)
        #expect(record.deleted && record.values.isEmpty)
    }

    @Test func aPushWithOneBadChangeIsRefusedWholeAndNamesIt() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let token = try await server.token(for: "alice")
        let (good, bad, folder) = (UUID(), UUID(), UUID())
        _ = try await server.push([Self.transaction(1, [SyncRecordChange(recordID: folder, entity: "Folder", kind: .upsert, values: ["name": .string("F")])])], token: token)
        let before = try await server.records(token: token)
        let cases: [(SyncRecordChange, [String])] = [
            (SyncRecordChange(recordID: bad, entity: "Nope", kind: .upsert, values: [:]), ["Nope", bad.uuidString, "no such entity"]),
            (SyncRecordChange(recordID: bad, entity: "Note", kind: .upsert, values: ["title": .string("x"), "colour": .string("red")]), ["Note.colour", bad.uuidString]),
            (SyncRecordChange(recordID: bad, entity: "Note", kind: .upsert, values: ["title": .integer(1)]), ["Note.title", "integer", "String"]),
            (SyncRecordChange(recordID: bad, entity: "Note", kind: .upsert, values: ["title": .string("x"), "words": .integer(1 << 40)]), ["Note.words", "Integer 32"]),
            (SyncRecordChange(recordID: bad, entity: "Note", kind: .upsert, values: ["title": .string("x"), "folder": .reference(UUID())]), ["Note.folder", "does not hold"]),
            (SyncRecordChange(recordID: bad, entity: "Note", kind: .upsert, values: ["title": .string("x"), "folder": .reference(good)]), ["Note.folder", "a Note, not a Folder"]),
            (SyncRecordChange(recordID: bad, entity: "Note", kind: .upsert, values: ["words": .integer(1)]), ["Note.title", bad.uuidString, "required"]),
            (SyncRecordChange(recordID: bad, entity: "Folder", kind: .upsert, values: ["notes": .references([])]), ["Folder.notes", "other side"]),
            (SyncRecordChange(recordID: bad, entity: "Note", kind: .upsert, values: ["title": .string("x"), "scratch": .string("s")]), ["Note.scratch", "transient"]),
        ]
        for (index, (change, words)) in cases.enumerated() {
            let answer = try await server.push([Self.transaction(10 * index + 2, [Self.note(good, title: "fine")]),
                                                Self.transaction(10 * index + 3, [Self.note(UUID(), title: "also fine", folder: folder)]),
                                                Self.transaction(10 * index + 4, [change])], token: token)
            #expect(answer.status == 422, "case \(index)")
            let refusal = try JSONDecoder().decode(SyncErrorResponse.self, from: answer.body)
            #expect(refusal.reason == "invalid-change")
            for word in words { #expect(refusal.message.contains(word), "case \(index): \(refusal.message)") }
            // Nothing of the push was applied: not the good transactions before the bad one either.
            #expect(try await server.records(token: token) == before, "case \(index)")
        }
        let pulled = try JSONDecoder().decode(SyncPullResponse.self, from: try await server.call("GET", "/v1/pull?after=0", token: token).body)
        #expect(pulled.transactions.count == 1)
    }

    /// A model whose notes need a folder: a note stored without one is refused, naming the key and record;
    /// with one (in the same push or an earlier one) it is stored.
    @Test func aRequiredToOneRelationshipMustHoldARecord() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-sync-required-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Notes.xcdatamodel")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        let required = SyncTestModel.xml.replacingOccurrences(of: #"<relationship name="folder" optional="YES" maxCount="1""#,
                                                              with: #"<relationship name="folder" maxCount="1""#)
        #expect(required != SyncTestModel.xml)
        try Data(required.utf8).write(to: file.appendingPathComponent("contents"))
        let server = try await SyncTestServer(model: try ManagedObjectModel(contentsOf: file))
        defer { Task { await server.stop() } }
        let token = try await server.token(for: "alice")
        let (home, note) = (UUID(), UUID())
        for missing in [SyncValue.null, nil] {
            var change = Self.note(note, title: "homeless")
            change.values["folder"] = missing
            let answer = try await server.push([Self.transaction(1, [change])], token: token)
            #expect(answer.status == 422)
            let refusal = try JSONDecoder().decode(SyncErrorResponse.self, from: answer.body)
            #expect(refusal.message.contains("Note.folder") && refusal.message.contains(note.uuidString)
                    && refusal.message.contains("required"), "\(refusal.message)")
        }
        #expect(try await server.records(token: token).isEmpty)
        let housed = [Self.transaction(2, [SyncRecordChange(recordID: home, entity: "Folder", kind: .upsert, values: ["name": .string("Home")]),
                                           Self.note(note, title: "housed", folder: home)])]
        #expect(try await server.push(housed, token: token).status == 200)
        // A later upsert that leaves the folder out keeps the stored one; one that empties it is refused.
        #expect(try await server.push([Self.transaction(3, [SyncRecordChange(recordID: note, entity: "Note", kind: .upsert,
                                                                             values: ["title": .string("renamed")])])], token: token).status == 200)
        #expect(try await server.push([Self.transaction(4, [SyncRecordChange(recordID: note, entity: "Note", kind: .upsert,
                                                                             values: ["folder": .null])])], token: token).status == 422)
    }

    @Test func anotherModelIsRefusedNamingBoth() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let answer = try await server.push([], token: try await server.token(for: "alice"), model: "0ld")
        #expect(answer.status == 409)
        let refusal = try JSONDecoder().decode(SyncErrorResponse.self, from: answer.body)
        #expect(refusal.reason == "model-mismatch")
        #expect(refusal.message.contains("0ld") && refusal.message.contains(SyncModelFingerprint.of(server.model)))
    }

    @Test func missingForgedExpiredAndMalformedTokensGet401() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let forged = try await server.token(for: "alice", key: Data(repeating: 7, count: 32))
        let expired = try await server.token(for: "alice", lifetime: .seconds(-60))
        let valid = try await server.token(for: "alice")
        let tampered = String(valid.dropLast(2)) + (valid.hasSuffix("AA") ? "BB" : "AA")
        for token in [nil, forged, expired, "not.a.token", tampered, ""] as [String?] {
            for (method, path) in [("GET", "/v1/pull?after=0"), ("GET", "/v1/records"), ("POST", "/v1/push"), ("GET", "/v1/events")] {
                let answer = try await server.call(method, path, token: token, body: method == "POST" ? Data("{}".utf8) : nil)
                #expect(answer.status == 401, "\(method) \(path) with \(token.map { String($0.prefix(12)) } ?? "no token")")
            }
        }
        #expect(try await server.call("GET", "/v1/records", token: valid).status == 200)
    }

    @Test func aTokenOpensOnlyItsUsersZone() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let (alice, bob) = (try await server.token(for: "alice"), try await server.token(for: "bob"))
        let note = UUID()
        #expect(try await server.push([Self.transaction(1, [Self.note(note, title: "alice's")])], token: alice).status == 200)
        #expect(try await server.records(token: bob).isEmpty)
        let pulled = try JSONDecoder().decode(SyncPullResponse.self, from: try await server.call("GET", "/v1/pull?after=0", token: bob).body)
        #expect(pulled.transactions.isEmpty && pulled.serverToken == 0)
        // Bob cannot write alice's record, nor refer to it.
        let overwrite = try await server.push([Self.transaction(1, [SyncRecordChange(recordID: note, entity: "Note", kind: .upsert, values: ["title": .string("bob's now")])])], token: bob)
        #expect(overwrite.status == 403)
        #expect(try JSONDecoder().decode(SyncErrorResponse.self, from: overwrite.body).reason == "foreign-record")
        let delete = try await server.push([Self.transaction(2, [SyncRecordChange(recordID: note, entity: "Note", kind: .delete)])], token: bob)
        #expect(delete.status == 403)
        #expect(try await server.records(token: alice).first?.values["title"] == .string("alice's"))
    }

    @Test func malformedRequestsAre400() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let token = try await server.token(for: "alice")
        #expect(try await server.call("POST", "/v1/push", token: token, body: Data("{\"model\": 1}".utf8)).status == 400)
        #expect(try await server.call("GET", "/v1/pull?after=-1", token: token).status == 400)
        #expect(try await server.call("GET", "/v1/pull?after=0&limit=100000", token: token).status == 400)
        #expect(try await server.call("GET", "/v1/nothing", token: token).status == 404)
    }

    @Test func newsReachesListenersOfTheZoneOnly() async throws {
        let server = try await SyncTestServer(model: try SyncTestModel.make())
        defer { Task { await server.stop() } }
        let (alice, bob) = (try await server.token(for: "alice"), try await server.token(for: "bob"))
        let heard = Mutex<[String]>([])
        let aliceListener = SyncNewsListener(server: server.url, token: { alice }) { heard.withLock { $0.append("alice") } }
        let bobListener = SyncNewsListener(server: server.url, token: { bob }) { heard.withLock { $0.append("bob") } }
        aliceListener.start()
        bobListener.start()
        defer { aliceListener.stop(); bobListener.stop() }
        // Each stream opens with the zone's current token.
        try await waitUntil { heard.withLock { Set($0) == ["alice", "bob"] } }
        heard.withLock { $0 = [] }
        #expect(try await server.push([Self.transaction(1, [Self.note(UUID(), title: "n")])], token: alice).status == 200)
        try await waitUntil { heard.withLock { $0.contains("alice") } }
        try await Task.sleep(for: .milliseconds(300))
        #expect(heard.withLock { $0 } == ["alice"])
    }
}

/// Polls `condition` every 20 ms for up to `seconds`.
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw SyncError.malformedResponse(reason: "condition not met within \(seconds) s") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Two server instances on one state (the same SQLite file here; a PostgreSQL database alike) pushing to one
/// zone at once: every transaction gets its own token, none twice, none skipped.
@Suite("Sync server: instances sharing one state give out each token once")
struct SyncServerSharedStateTests {
    @Test func sixteenPushesThroughTwoInstancesGetTokensOneToSixteen() async throws {
        let model = try SyncTestModel.make()
        let first = try await SyncTestServer(model: model)
        let second = try await SyncTestServer(model: model, store: first.store, key: first.key)
        let token = try await first.token(for: "alice")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for number in 1...16 {
                let server = number % 2 == 0 ? first : second
                group.addTask {
                    try await server.push([SyncServerProtocolTests.transaction(number, [SyncServerProtocolTests.note(UUID(), title: "n\(number)")])],
                                          token: token).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        let pulled = try JSONDecoder().decode(SyncPullResponse.self, from: try await first.call("GET", "/v1/pull?after=0&limit=100", token: token).body)
        #expect(pulled.transactions.map(\.serverToken) == Array(1...16))
        #expect(Set(pulled.transactions.map(\.id)).count == 16)
        #expect(try await second.records(token: token).count == 16)
        await first.stop()
        await second.stop()
    }
}
