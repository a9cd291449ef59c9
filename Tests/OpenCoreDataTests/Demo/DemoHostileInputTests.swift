import Foundation
import Testing
@testable import OpenCoreData
@testable import ocd
@testable import OpenCoreDataImport

/// `ocd import` and `ocd fetch` on input meant to slip through: values a lenient parser would change,
/// key paths that do not exist, and stored text that would drive the terminal. Each is refused per row
/// (naming row, column and value) or escaped, never silently changed.
@Suite("Demo: hostile input to ocd (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoHostileInputTests {
    typealias Library = DemoImportTests.Library

    @Test func valuesALenientParserWouldChangeAreRefusedPerRow() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write("""
            title,isbn,rating,price,createdAt
            Float overflow,1234567890,1e39,1,2011-01-01
            Decimal with letters,1234567891,1,12abc,2011-01-01
            Decimal with two points,1234567892,1,1.2.3,2011-01-01
            No such day,1234567893,1,1,2011-02-30
            Offset past a day,1234567894,1,1,2011-01-01T00:00:00+25:00
            "Nul\u{0}inside",1234567895,1,1,2011-01-01
            Good,1234567896,4.5,12.50,2011-01-01T10:00:00.25+02:00

            """, "hostile.csv")
        let output = try library.run(["import", library.store, "--model", library.model, "--entity", "Book",
                                      "--csv", file, "--skip-bad-rows"])
        #expect(output.status == 0, "\(output.stderr)")
        for expected in [
            "row 1: column 'rating': '1e39' is not a valid Float (out of range)",
            "row 2: column 'price': '12abc' is not a valid Decimal",
            "row 3: column 'price': '1.2.3' is not a valid Decimal",
            "row 4: column 'createdAt': '2011-02-30' is not a valid Date",
            "row 5: column 'createdAt': '2011-01-01T00:00:00+25:00' is not a valid Date",
            "row 6: column 'title': 'Nul\\u{0}inside' is not a valid String (it holds a NUL character)",
        ] {
            #expect(output.stdout.contains(expected), "missing «\(expected)» in \(output.stdout)")
        }
        #expect(output.stdout.contains("Imported 1 row into Book"), "\(output.stdout)")
        let books = try library.run(["fetch", library.store, "--model", library.model, "--entity", "Book",
                                     "--keys", "title,price,createdAt", "--json"])
        #expect(books.stdout == """
            {"title":"Good","price":12.5,"createdAt":"2011-01-01T08:00:00.25Z"}

            """, "\(books.stdout) \(books.stderr)")
    }

    @Test func strictDatesAcceptEveryRealFormAndRefuseTheRest() {
        let accepted: [(String, TimeInterval)] = [
            ("2011-10-21", 340_848_000),
            ("2011-10-21T09:30:00Z", 340_882_200),
            ("2011-10-21T09:30Z", 340_882_200),
            ("2011-10-21T11:30:00+02:00", 340_882_200),
            ("2011-10-21T11:30:00+0200", 340_882_200),
            ("2011-10-21T09:30:00.5Z", 340_882_200.5),
            ("2012-02-29", 352_166_400),
            ("21-Oct-11", 340_848_000),
        ]
        for (text, seconds) in accepted {
            #expect(ImportDate.parse(text)?.timeIntervalSinceReferenceDate == seconds, "\(text)")
        }
        for text in ["2011-02-29", "2011-13-01", "2011-00-10", "2011-10-21T24:00:00Z", "2011-10-21T09:60:00Z",
                     "2011-10-21T09:30:00", "2011-10-21T09:30:00+19:00", "2011-10-21T09:30:00+02:61",
                     "2011-10-21x", "2011-1-21", "30-Feb-11"] {
            #expect(ImportDate.parse(text) == nil, "\(text) was accepted")
        }
    }

    @Test func jsonLinesWithCRLFAndAnExactKeyBesideItsUppercaseTwin() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write(
            "{\"TITLE\":\"wrong\",\"title\":\"Right\",\"isbn\":\"1234567890\"}\r\n"
                + "{\"title\":\"Second\",\"isbn\":\"1234567891\"}\r\n", "crlf.jsonl")
        let output = try library.run(["import", library.store, "--model", library.model, "--entity", "Book",
                                      "--jsonl", file])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("Ignoring columns that match no attribute: TITLE"), "\(output.stdout)")
        #expect(try library.books().map { $0["title"] as? String } == ["Right", "Second"])
    }

    @Test func jsonLinesEndAtNewlinesOnlyRefuseRepeatedKeysAndDatesNoCalendarHolds() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write("""
            {"title":"Line\u{2028}and paragraph\u{2029}separators","isbn":"1234567890"}
            {"title":"First","isbn":"1234567891","title":"Second"}
            {"title":"Far","isbn":"1234567892","createdAt":1e308}
            {"title":"Far text","isbn":"1234567893","createdAt":"1e308"}
            {"title":"Before year one","isbn":"1234567894","createdAt":-63113904001}

            """, "hostile.jsonl")
        let output = try library.run(["import", library.store, "--model", library.model, "--entity", "Book",
                                      "--jsonl", file, "--skip-bad-rows"])
        #expect(output.status == 0, "\(output.stderr)")
        for expected in ["line 2: the key 'title' appears twice",
                         "line 3: column 'createdAt': ", "line 4: column 'createdAt': ", "line 5: column 'createdAt': ",
                         "Imported 1 row into Book"] {
            #expect(output.stdout.contains(expected), "missing «\(expected)» in \(output.stdout)")
        }
        #expect(try library.books().map { $0["title"] as? String } == ["Line\u{2028}and paragraph\u{2029}separators"])
    }

    /// A store with two books on one shelf, and stored text holding a terminal escape.
    static func shelvedStore(_ library: Library) throws {
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: library.model))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: library.store))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let shelf = try context.insertNewObject(forEntityName: "Shelf")
        try shelf.setValue("A1", forKey: "label")
        for (title, pages) in [("Dune", 412), ("Emma\u{1B}[2J", 474)] {
            let book = try context.insertNewObject(forEntityName: "Book")
            try book.setValue(title, forKey: "title")
            try book.setValue("97800000000\(pages % 100)", forKey: "isbn")
            try book.setValue(Int16(pages), forKey: "pageCount")
            try shelf.add(book, toKey: "books")
        }
        try context.save()
    }

    @Test func keyPathsFollowToManyRelationshipsAndRefuseWhatDoesNotExist() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        try Self.shelvedStore(library)
        func fetch(_ keys: String, entity: String = "Shelf", json: Bool = true) throws -> OcdBinary.Output {
            try library.run(["fetch", library.store, "--model", library.model, "--entity", entity, "--keys", keys]
                            + (json ? ["--json"] : []))
        }
        let shelf = try fetch("label,books.@count,books.@sum.pageCount,books.@max.pageCount,books.pageCount")
        #expect(shelf.status == 0, "\(shelf.stderr)")
        let row = try #require(JSONSerialization.jsonObject(with: Data(shelf.stdout.utf8)) as? [String: Any])
        #expect(row["label"] as? String == "A1")
        #expect(row["books.@count"] as? Int == 2)
        #expect(row["books.@sum.pageCount"] as? Int == 886)
        #expect(row["books.@max.pageCount"] as? Int == 474)
        #expect((row["books.pageCount"] as? [Int])?.sorted() == [412, 474])

        for (keys, reason) in [
            ("title.length", "'title' is an attribute of Book, so 'length' cannot follow it"),
            ("title..x", "a key is empty"),
            ("nothing", "Book has no property 'nothing'"),
            ("title.@count", "'@count' must follow a to-many relationship"),
            ("shelves.@median.label", "'@median' is not a collection operator"),
        ] {
            let refused = try fetch(keys, entity: "Book")
            #expect(refused.status != 0, "\(keys) was accepted: \(refused.stdout)")
            #expect(refused.stderr.contains("--keys '\(keys)': \(reason)"), "\(keys): \(refused.stderr)")
        }
    }

    @Test func storedControlCharactersArePrintedEscaped() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        try Self.shelvedStore(library)
        let output = try library.run(["fetch", library.store, "--model", library.model, "--entity", "Book",
                                      "--keys", "title", "--sort", "title"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(!output.stdout.unicodeScalars.contains("\u{1B}"))
        #expect(output.stdout == "title=Dune\ntitle=Emma\\u{1B}[2J\n")
    }
}
