import Foundation
import OpenCoreData
import Testing

/// An object's page lists its changes when the store keeps persistent history, read from the history the
/// writers recorded (the server itself opens the store read-only).
@Suite("Serve: an object's history on its page (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil, "ocd is not built"))
struct ObjectPageHistoryTests {
    @Test func theChangesOfOneObjectAreListedNewestFirstWithTheirAuthors() throws {
        let served = try ServedStore(history: true)
        let author = "<script>alert(1)</script>"
        try served.save { context in
            context.transactionAuthor = author
            let item = try context.existingObject(with: ManagedObjectID(
                entity: try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Item"]),
                primaryKey: 5, store: try #require(context.persistentStoreCoordinator?.storeBackends.first).identity))
            try item.setValue("changed once", forKey: "note")
            // Another object's change in the same transaction is not this object's history.
            try context.insertNewObject(forEntityName: "Shelf").setValue("C3", forKey: "label")
        }
        let page = try served.get("/object/Item/5")
        #expect(page.status == 200)
        let history = try #require(page.body.range(of: "<h2>History</h2>").map { String(page.body[$0.lowerBound...]) })
        let updated = try #require(history.range(of: "<td>updated note</td>"))
        let inserted = try #require(history.range(of: "<td>inserted</td>"))
        #expect(updated.lowerBound < inserted.lowerBound, "newest first")
        #expect(history.components(separatedBy: "<tr><td>").count - 1 == 2, "\(history)")
        #expect(history.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!history.contains(author))
        // The new shelf's page has its own one change.
        let shelf = try served.get("/object/Shelf/3").body
        #expect(shelf.contains("<td>inserted</td>") && !shelf.contains("updated note"))
    }

    @Test func aStoreWithoutHistoryShowsNoHistory() throws {
        let served = try ServedStore()
        let page = try served.get("/object/Item/5")
        #expect(page.status == 200)
        #expect(!page.body.contains("<h2>History</h2>"))
    }
}
