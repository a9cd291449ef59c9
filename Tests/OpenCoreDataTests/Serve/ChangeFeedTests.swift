import Foundation
import Testing
@testable import OpenCoreData
@testable import ocd

/// `ocd serve`'s live pages: the real server on a store file that this process saves to through a
/// coordinator of its own, as another process would; `/events` read over a socket.
@Suite("Serve: live pages through /events (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct ChangeFeedTests {
    /// A `change` event's JSON, read back.
    private static func decoded(_ json: String) throws -> StoreChange {
        try JSONDecoder().decode(StoreChange.self, from: Data(json.utf8))
    }

    @Test func aSaveElsewhereReachesTheStreamWithWhatChangedAndTheIndexAgrees() throws {
        let served = try ServedStore()
        let stream = try EventStreamClient(port: served.port)
        try served.save { context in
            for number in 0..<2 {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue("new-\(number)", forKey: "name")
            }
        }
        let json = try stream.nextChange()
        #expect(json.contains("\"summary\":\"Item: 2 inserted\""), "\(json)")
        let change = try Self.decoded(json)
        #expect(change.changes == [StoreChange.EntityChange(entity: "Item", inserted: 2)])
        #expect(change.counts == ["Item": 122, "Shelf": 2, "Evil": 1])
        #expect(change.history == false)
        let index = try served.get("/")
        #expect(index.body.contains("<td class=\"count\" data-entity=\"Item\">122</td>"), "\(index.body)")

        // Many saves, one event each (or, should two commits land together, their sum), the stream open throughout.
        var shelves = 2
        for round in 1...12 {
            try served.save { context in
                let shelf = try context.insertNewObject(forEntityName: "Shelf")
                try shelf.setValue("S\(round)", forKey: "label")
            }
            while shelves < 2 + round {
                let change = try Self.decoded(try stream.nextChange())
                let inserted = change.changes.first { $0.entity == "Shelf" }?.inserted ?? 0
                #expect(inserted > 0, "round \(round): \(change)")
                shelves += max(inserted, 1)
                #expect(change.counts["Shelf"] == shelves)
            }
        }
        #expect(shelves == 14)

        try served.save { context in
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.predicate = try QueryPredicate(format: "name BEGINSWITH 'new-' OR name == 'item-050'")
            for item in try context.fetch(request) { context.delete(item) }
        }
        let deleted = try Self.decoded(try stream.nextChange())
        #expect(deleted.summary == "Item: 3 deleted", "\(deleted)")
        #expect(deleted.counts["Item"] == 119)
        #expect(try served.get("/").body.contains("<td class=\"count\" data-entity=\"Shelf\">14</td>"))
    }

    @Test func withHistoryTheEventTellsInsertsUpdatesAndDeletesApart() throws {
        let served = try ServedStore(history: true)
        let stream = try EventStreamClient(port: served.port)
        try served.save { context in
            let items = FetchRequest<ManagedObject>(entityName: "Item")
            items.predicate = try QueryPredicate(format: "shelf.label == 'B2'")
            let fetched = try context.fetch(items).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
            try fetched[0].setValue("renamed", forKey: "note")
            try fetched[1].setValue("renamed too", forKey: "note")
            let evil = try context.insertNewObject(forEntityName: "Evil")
            try evil.setValue("new", forKey: "title")
            for item in fetched[2...] { context.delete(item) }
        }
        let change = try Self.decoded(try stream.nextChange())
        #expect(change.history)
        let item = try #require(change.changes.first { $0.entity == "Item" })
        #expect(item.inserted == 0 && item.updated == 2 && item.deleted == 8, "\(change)")
        #expect(change.changes.first { $0.entity == "Evil" } == StoreChange.EntityChange(entity: "Evil", inserted: 1))
        #expect(change.summary.contains("Evil: 1 inserted"))
        #expect(change.summary.contains("Item: 2 updated, 8 deleted"), "\(change.summary)")
        #expect(change.counts["Item"] == 112 && change.counts["Evil"] == 2)
    }

    @Test func streamsEndWhenTheirClientGoesOrTheServerStops() throws {
        let served = try ServedStore()
        var left = try (0..<3).map { _ in try EventStreamClient(port: served.port) }
        for stream in left.prefix(2) { stream.disconnect() }
        left.removeFirst(2)
        // Streams whose clients went, ended or not yet, keep nobody from saving or being told.
        try served.save { context in try context.insertNewObject(forEntityName: "Evil").setValue("x", forKey: "title") }
        #expect(try left[0].nextChange().contains("\"summary\":\"Evil: 1 inserted\""))
        #expect(try served.get("/").status == 200)
        let another = try EventStreamClient(port: served.port)
        try served.save { context in try context.insertNewObject(forEntityName: "Evil").setValue("y", forKey: "title") }
        #expect(try another.nextChange().contains("\"Evil\":3"))

        // A stopping server ends its open streams rather than waiting for them.
        served.server.kill(SIGTERM)
        #expect(another.endsWithin(seconds: 20))
        #expect(try served.server.wait(seconds: 20) == 0)
    }

    @Test func pagesLoadTheLiveScriptWhichThePolicyAllows() throws {
        let served = try ServedStore()
        for target in ["/", "/entity/Item", "/object/Shelf/1"] {
            let page = try served.get(target)
            #expect(page.body.contains("<script src=\"/live.js\" defer></script>"), "\(target)")
            #expect(page.body.contains("<p id=\"live-change\" class=\"live\" hidden>"), "\(target)")
            let policy = try #require(page.headers["content-security-policy"])
            #expect(policy.contains("script-src 'self'") && policy.contains("connect-src 'self'"))
            #expect(!policy.contains("unsafe-inline'; img") || !policy.contains("script-src 'unsafe-inline'"))
        }
        let script = try served.get("/live.js")
        #expect(script.status == 200)
        #expect(script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        #expect(script.body.contains("new EventSource(\"/events\")"))
        #expect(script.body.contains("textContent") && !script.body.contains("innerHTML"))
        #expect(try served.get("/events", headers: ["Origin": "http://evil.example"]).status == 403)
    }
}

/// The words and count differences of ``StoreChange``, without a server.
@Suite("Serve: what a change says")
struct StoreChangeTests {
    @Test func countsSayInsertsAndDeletesOfEachEntitysOwnObjects() {
        // Animal is Dog's parent: its count holds the dogs.
        let before = ["Animal": 5, "Dog": 3, "Owner": 2]
        let after = ["Animal": 7, "Dog": 5, "Owner": 1]
        let changes = StoreChange.changes(from: before, to: after, subentities: ["Animal": ["Dog"]])
        #expect(changes == [.init(entity: "Dog", inserted: 2), .init(entity: "Owner", deleted: 1)])
        let change = StoreChange(counts: after, changes: changes, history: false)
        #expect(change.summary == "Dog: 2 inserted; Owner: 1 deleted")
        #expect(change.eventText.hasPrefix("event: change\ndata: {"))
        #expect(change.eventText.hasSuffix("}\n\n"))
        #expect(change.eventText.components(separatedBy: "\n").count == 4)
        #expect(StoreChange(counts: after, changes: [], history: false).summary == "the store changed")
    }
}
