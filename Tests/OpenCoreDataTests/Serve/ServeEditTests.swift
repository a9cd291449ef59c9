import Foundation
import Testing
@testable import OpenCoreData

/// `ocd serve --read-write`: forms on object pages that set attributes and delete objects through a context
/// with the model's validation, only from the server's own pages.
@Suite("Serve: editing with --read-write (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil, "ocd is not built"))
struct ServeEditTests {
    /// The item the tests edit, by its name, and its primary key.
    private func item(named name: String, in served: ServedStore) throws -> ManagedObject {
        let context = try served.directContext()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    @Test func anEditIsSavedAndTheObjectPageShowsIt() throws {
        let served = try ServedStore(readWrite: true)
        let key = try item(named: "item-007", in: served).objectID.primaryKey
        let page = try served.get("/object/Item/\(key)")
        #expect(page.body.contains("read-write"))
        let token = try #require(ServedStore.formToken(in: page.body))
        let saved = try served.post("/object/Item/\(key)", [("token", token), ("key", "note"), ("value", "a new note & more")])
        #expect(saved.status == 303)
        #expect(saved.headers["location"] == "/object/Item/\(key)")
        #expect(try item(named: "item-007", in: served).value(forKey: "note") as? String == "a new note & more")
        let position = try served.post("/object/Item/\(key)", [("token", token), ("key", "position"), ("value", " 42 ")])
        #expect(position.status == 303)
        #expect(try item(named: "item-007", in: served).value(forKey: "position") as? Int32 == 42)
        #expect(try served.get("/object/Item/\(key)").body.contains("value=\"a new note &amp; more\""))
    }

    @Test func aValueTheModelRefusesIsShownOnItsFieldAndNothingIsSaved() throws {
        let served = try ServedStore(readWrite: true)
        let key = try item(named: "item-008", in: served).objectID.primaryKey
        let token = try #require(ServedStore.formToken(in: try served.get("/object/Item/\(key)").body))
        // `name` is required: an empty field is nil, which validation refuses.
        let required = try served.post("/object/Item/\(key)", [("token", token), ("key", "name"), ("value", "")])
        #expect(required.status == 422)
        #expect(required.body.contains("<p class=\"error field-error\" data-key=\"name\">"), "\(required.body.prefix(2000))")
        #expect(required.body.contains("required"))
        // Text that is no number never reaches the object; the field keeps what was typed.
        let number = try served.post("/object/Item/\(key)", [("token", token), ("key", "position"), ("value", "<b>12x")])
        #expect(number.status == 422)
        #expect(number.body.contains("data-key=\"position\">position: “&lt;b&gt;12x” is not a whole number"), "\(number.body.prefix(3000))")
        #expect(number.body.contains("value=\"&lt;b&gt;12x\""))
        #expect(!number.body.contains("<b>12x"))
        let unchanged = try item(named: "item-008", in: served)
        #expect(try unchanged.value(forKey: "position") as? Int32 == Int32(ServedStore.itemCount - 8))
    }

    @Test func postsWithoutTheTokenOrFromElsewhereAreRefusedAndChangeNothing() throws {
        let served = try ServedStore(readWrite: true)
        let key = try item(named: "item-009", in: served).objectID.primaryKey
        let token = try #require(ServedStore.formToken(in: try served.get("/object/Item/\(key)").body))
        let attempts: [(fields: [(String, String)], origin: String?)] = [
            ([("key", "note"), ("value", "x")], nil),                                  // no token
            ([("token", "0123456789abcdef"), ("key", "note"), ("value", "x")], nil),  // another token
            ([("token", token), ("key", "note"), ("value", "x")], "http://evil.example"),
            ([("token", token), ("key", "note"), ("value", "x")], ""),                 // no origin
        ]
        for attempt in attempts {
            let refused = try served.post("/object/Item/\(key)", attempt.fields, origin: attempt.origin)
            #expect(refused.status == 403, "\(attempt.fields.map(\.0)) from \(attempt.origin ?? "own origin")")
        }
        #expect(try item(named: "item-009", in: served).value(forKey: "note") as? String == "note 9")
        // Nor can a form change what the model says is not an attribute.
        let relationship = try served.post("/object/Item/\(key)", [("token", token), ("key", "shelf"), ("value", "1")])
        #expect(relationship.status == 422)
    }

    @Test func deletingAnObjectRunsItsDeleteRulesAndLeadsToTheTable() throws {
        let served = try ServedStore(readWrite: true)
        let context = try served.directContext()
        let request = FetchRequest<ManagedObject>(entityName: "Shelf")
        request.predicate = try QueryPredicate(format: "label == 'B2'")
        let shelf = try #require(try context.fetch(request).first).objectID.primaryKey
        let token = try #require(ServedStore.formToken(in: try served.get("/object/Shelf/\(shelf)").body))
        let deleted = try served.post("/object/Shelf/\(shelf)/delete", [("token", token)])
        #expect(deleted.status == 303)
        #expect(deleted.headers["location"] == "/entity/Shelf")
        let after = try served.directContext()
        #expect(try after.count(for: FetchRequest<ManagedObject>(entityName: "Shelf")) == 1)
        // B2's ten items went with it (cascade).
        #expect(try after.count(for: FetchRequest<ManagedObject>(entityName: "Item")) == ServedStore.itemCount - 10)
        #expect(try served.get("/object/Shelf/\(shelf)").status == 404)
    }

    @Test func withoutReadWriteThereAreNoFormsAndPostsAreRefused() throws {
        let served = try ServedStore()
        let page = try served.get("/object/Item/5")
        #expect(!page.body.contains("<form method=\"post\""))
        #expect(try served.post("/object/Item/5", [("token", "x"), ("key", "note"), ("value", "x")]).status == 405)
        #expect(try ServedStore.hash(ofFileAt: served.storePath) == served.initialHash)
    }
}
