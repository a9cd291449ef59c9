import Foundation
import Testing
@testable import OpenCoreData

/// Where the library has a feature, `ocd` follows: `--keys` reaches fetched properties, and a transformable
/// attribute whose transformer archives property lists takes JSON arrays and objects on import and prints
/// them back as JSON.
@Suite("Demo: ocd follows the library (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoToolsFollowTheLibraryTests {
    typealias Library = DemoImportTests.Library

    @Test func keysReachFetchedProperties() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: library.model))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: library.store))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue("Ann", forKey: "name")
        for (title, isbn) in [("Dune", "1234567890"), ("Emma", "1234567891")] {
            let book = try context.insertNewObject(forEntityName: "Book")
            try book.setValue(title, forKey: "title")
            try book.setValue(isbn, forKey: "isbn")
            try book.setValue(author, forKey: "author")
        }
        try context.save()
        coordinator.persistentStores.forEach(coordinator.remove)

        let output = try library.run(["fetch", library.store, "--model", library.model, "--entity", "Book", "--sort", "title",
                                      "--keys", "title,sameAuthorBooks.@count,sameAuthorBooks.title", "--json"])
        #expect(output.status == 0, "\(output.stderr)")
        let rows = try output.stdout.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(rows.count == 2)
        #expect(rows.first?["sameAuthorBooks.@count"] as? Int == 2, "\(output.stdout)")
        #expect((rows.first?["sameAuthorBooks.title"] as? [String])?.sorted() == ["Dune", "Emma"], "\(output.stdout)")
        let refused = try library.run(["fetch", library.store, "--model", library.model, "--entity", "Book",
                                       "--keys", "sameAuthorBooks.nothing"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Book has no property 'nothing'"), "\(refused.stderr)")
    }

    @Test func aTransformableTakesJSONOnImportAndPrintsItBackAsJSON() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write("""
            {"title":"Covered","isbn":"1234567890","cover":["front",2,2.5,true,null,{"inks":["cyan","black"],"matte":false}]}

            """, "covers.jsonl")
        let imported = try library.run(["import", library.store, "--model", library.model, "--entity", "Book", "--jsonl", file])
        #expect(imported.status == 0, "\(imported.stdout) \(imported.stderr)")
        let fetched = try library.run(["fetch", library.store, "--model", library.model, "--entity", "Book",
                                       "--keys", "cover", "--json"])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout == """
            {"cover":["front",2,2.5,true,null,{"inks":["cyan","black"],"matte":false}]}

            """, "\(fetched.stdout)")
    }
}
