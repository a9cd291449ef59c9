import Foundation
import GRDB
import Testing

/// `ocd import`: CSV and JSON Lines rows into the Library fixture's Book entity, typed, in one save.
@Suite("Demo: ocd import (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoImportTests {
    static let csv = """
        Title,ISBN,pages,In Print,Published,Notes
        Dune,9780441013593,412,yes,1965-08-01,first
        "Emma, a novel",9780141439587,474,no,01-Dec-15,second
        Bad,9780000000001,many,yes,2020-01-01,third

        """

    static let jsonLines = """
        {"title":"Ulysses","isbn":"9780199535675","pageCount":730,"inPrint":true,"createdAt":"1922-02-02T10:00:00Z","rating":4.5}

        {"title":"Moby-Dick","isbn":"9780142437247","pageCount":"many"}
        {"title":"Walden","isbn":"9780691096124","inPrint":0,"createdAt":-1000000000}

        """

    struct Library {
        let binary: URL
        let folder: URL
        let model: String
        var store: String { folder.appendingPathComponent("Library.sqlite").path }

        init() throws {
            binary = try #require(OcdBinary.url)
            folder = try OcdBinary.temporaryFolder()
            model = try InteropFixtures.url("Library.xcdatamodeld").path
        }

        func write(_ text: String, _ name: String) throws -> String {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }

        func run(_ arguments: [String]) throws -> OcdBinary.Output {
            try OcdBinary.run(arguments, binary: binary)
        }

        /// Imports the JSON Lines `lines` as books with persistent history on, and with `reader` registered
        /// when given: a store with history to read or tamper with.
        func importWithHistory(_ lines: [String], registering reader: String? = nil) throws {
            let file = try write(lines.joined(separator: "\n") + "\n", "books-\(UUID().uuidString).jsonl")
            let imported = try run(["import", store, "--model", model, "--entity", "Book", "--jsonl", file, "--history"])
            #expect(imported.status == 0, "\(imported.stderr)")
            if let reader {
                #expect(try run(["history", store, "--model", model, "--register", reader]).status == 0)
            }
        }

        /// Runs `sql` on the store as another program would.
        func alter(_ sql: String, arguments: StatementArguments = []) throws {
            let queue = try DatabaseQueue(path: store)
            try queue.write { try $0.execute(sql: sql, arguments: arguments) }
            try queue.close()
        }

        func books() throws -> [[String: Any]] {
            let output = try run(["fetch", store, "--model", model, "--entity", "Book", "--sort", "title",
                                  "--keys", "title,isbn,pageCount,inPrint,createdAt,rating", "--json"])
            #expect(output.status == 0, "\(output.stderr)")
            return try output.stdout.split(separator: "\n").map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }
    }

    @Test func aBadCSVRowRefusesTheFileAndSkippingImportsTheRest() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write(Self.csv, "books.csv")
        let arguments = ["import", library.store, "--model", library.model, "--entity", "Book", "--csv", file,
                         "--map", "pages=pageCount", "--map", "In Print=inPrint", "--map", "published=createdAt"]

        let refused = try library.run(arguments)
        #expect(refused.status != 0)
        let errors = refused.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
        #expect(errors.count == 1, "\(refused.stderr)")
        #expect(errors.first?.contains("row 3: column 'pages' (pageCount): 'many' is not a valid Integer 16") == true, "\(refused.stderr)")
        #expect(errors.first?.contains("nothing was imported") == true)

        let skipped = try library.run(arguments + ["--skip-bad-rows"])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(skipped.stdout.contains("Imported 2 rows into Book"), "\(skipped.stdout)")
        #expect(skipped.stdout.contains("Refused 1 row:\n  row 3: column 'pages' (pageCount): 'many' is not a valid Integer 16"), "\(skipped.stdout)")
        #expect(skipped.stdout.contains("Ignoring columns that match no attribute: Notes"))

        let books = try library.books()
        #expect(books.map { $0["title"] as? String } == ["Dune", "Emma, a novel"])
        #expect(books.map { $0["pageCount"] as? Int } == [412, 474])
        #expect(books.map { $0["inPrint"] as? Bool } == [true, false])
        #expect(books.map { $0["createdAt"] as? String } == ["1965-08-01T00:00:00Z", "2015-12-01T00:00:00Z"])
    }

    @Test func jsonLinesKeepTheirTypesAndRefuseWholeFilesToo() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write(Self.jsonLines, "books.jsonl")
        let arguments = ["import", library.store, "--model", library.model, "--entity", "Book", "--jsonl", file]

        let refused = try library.run(arguments)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("line 3: column 'pageCount': 'many' is not a valid Integer 16"), "\(refused.stderr)")
        // The store was not even created, and certainly holds nothing.
        #expect(!FileManager.default.fileExists(atPath: library.store))

        let skipped = try library.run(arguments + ["--skip-bad-rows"])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(skipped.stdout.contains("Imported 2 rows into Book"), "\(skipped.stdout)")
        #expect(skipped.stdout.contains("line 3: column 'pageCount'"))
        let books = try library.books()
        #expect(books.map { $0["title"] as? String } == ["Ulysses", "Walden"])
        #expect(books.first?["rating"] as? Double == 4.5)
        #expect(books.first?["createdAt"] as? String == "1922-02-02T10:00:00Z")
        #expect(books.last?["inPrint"] as? Bool == false)
        // -1e9 seconds since 2001 is 1969-04-24T22:13:20Z.
        #expect(books.last?["createdAt"] as? String == "1969-04-24T22:13:20Z")
        #expect(books.last?["pageCount"] as? Int == 100, "the model's default fills what the row leaves out")
    }

    @Test func badArgumentsAreOneErrorLine() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write(Self.csv, "books.csv")
        let cases: [[String]] = [
            ["--entity", "Nope", "--csv", file],
            ["--entity", "Item", "--csv", file],
            ["--entity", "Book"],
            ["--entity", "Book", "--csv", file, "--map", "pages"],
            ["--entity", "Book", "--csv", file, "--map", "pages=noSuchAttribute"],
            ["--entity", "Book", "--csv", library.folder.appendingPathComponent("missing.csv").path],
        ]
        for extra in cases {
            let output = try library.run(["import", library.store, "--model", library.model] + extra)
            #expect(output.status != 0, "\(extra)")
            #expect(output.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }.count == 1, "\(extra): \(output.stderr)")
        }
    }
}
