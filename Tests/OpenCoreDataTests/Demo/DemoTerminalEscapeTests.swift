import Foundation
import GRDB
import Testing

/// Text from a store, a model or the command line reaches the terminal escaped on every output path
/// (lines, reader lists, error messages): a newline cannot forge a line, an escape sequence cannot drive
/// the terminal.
@Suite("Demo: control characters on ocd's output (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoTerminalEscapeTests {
    typealias Library = DemoImportTests.Library

    static func expectNoControlCharacters(_ text: String, _ what: String) {
        let controls = text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
        #expect(controls.isEmpty, "\(what): \(text.debugDescription)")
    }

    @Test func aReaderNameCannotForgeLinesOrDriveTheTerminal() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        try library.importWithHistory(["{\"title\":\"Book\",\"isbn\":\"1234567890\"}"], registering: "indexer")
        try library.alter("UPDATE Z_OCDHISTORYREADER SET Z_NAME = ?",
                          arguments: ["evil\nforged: seen through 999, updated now\u{1B}[2J\u{9B}31m"])
        let readers = try library.run(["history", library.store, "--model", library.model, "--readers"])
        #expect(readers.status == 0, "\(readers.stderr)")
        #expect(readers.stdout.split(separator: "\n").count == 1, "\(readers.stdout)")
        #expect(readers.stdout.hasPrefix("evil\\nforged: seen through 999, updated now\\u{1B}[2J\\u{9B}31m: seen through "),
                "\(readers.stdout)")
        Self.expectNoControlCharacters(readers.stdout, "readers")
        // As JSON: one line, still JSON (control characters as JSON escapes), naming the reader exactly.
        let json = try library.run(["history", library.store, "--model", library.model, "--readers", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        Self.expectNoControlCharacters(json.stdout, "readers as JSON")
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(object["name"] as? String == "evil\nforged: seen through 999, updated now\u{1B}[2J\u{9B}31m")
    }

    @Test func errorMessagesQuotingInputAreEscaped() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write("{\"title\":\"Book\",\"isbn\":\"1234567890\"}\n", "book.jsonl")
        #expect(try library.run(["import", library.store, "--model", library.model, "--entity", "Book", "--jsonl", file]).status == 0)
        let fetched = try library.run(["fetch", library.store, "--model", library.model,
                                       "--entity", "Nobody\n\u{1B}]0;owned\u{7}"])
        #expect(fetched.status != 0)
        #expect(fetched.stderr.contains("Nobody\\n\\u{1B}]0;owned\\u{7}"), "\(fetched.stderr)")
        Self.expectNoControlCharacters(fetched.stderr, "error")
    }
}
