import Foundation
import GRDB
import Testing

/// A store whose `.<name>_SUPPORT` folder is a symbolic link to a folder elsewhere: `ocd fetch` prints
/// none of the bytes there and `ocd import` writes nothing there, each with an error naming the link.
@Suite("Demo: a store's support folder as a link (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoStoreFolderLinkTests {
    typealias Library = DemoImportTests.Library

    @Test func nothingOutsideTheStoresFolderIsReadOrWritten() throws {
        let library = try Library()
        defer { try? FileManager.default.removeItem(at: library.folder) }
        let file = try library.write("{\"title\":\"Book\",\"isbn\":\"1234567890\"}\n", "book.jsonl")
        #expect(try library.run(["import", library.store, "--model", library.model, "--entity", "Book", "--jsonl", file]).status == 0)
        let elsewhere = library.folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere.appendingPathComponent("_EXTERNAL_DATA"), withIntermediateDirectories: true)
        let name = UUID().uuidString.uppercased()
        try Data("secret bytes".utf8).write(to: elsewhere.appendingPathComponent("_EXTERNAL_DATA/\(name)"))
        try FileManager.default.createSymbolicLink(at: library.folder.appendingPathComponent(".Library_SUPPORT"),
                                                   withDestinationURL: elsewhere)
        let queue = try DatabaseQueue(path: library.store)
        try queue.write { db in
            try db.execute(sql: "UPDATE ZITEM SET ZSCAN = ?", arguments: [Data([0x02]) + Data(name.utf8) + Data([0])])
        }
        try queue.close()

        let fetched = try library.run(["fetch", library.store, "--model", library.model, "--entity", "Book",
                                       "--keys", "title,scan", "--json"])
        #expect(fetched.status != 0)
        #expect(!fetched.stdout.contains(Data("secret bytes".utf8).base64EncodedString()), "\(fetched.stdout)")
        #expect(fetched.stderr.contains("symbolic link"), "\(fetched.stderr)")

        let large = Data(repeating: 7, count: 200_000).base64EncodedString()
        let scans = try library.write("{\"title\":\"Scanned\",\"isbn\":\"1234567891\",\"scan\":\"\(large)\"}\n", "scan.jsonl")
        let imported = try library.run(["import", library.store, "--model", library.model, "--entity", "Book", "--jsonl", scans])
        #expect(imported.status != 0, "\(imported.stdout)")
        #expect(imported.stderr.contains("symbolic link"), "\(imported.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.appendingPathComponent("_EXTERNAL_DATA").path) == [name])
    }
}
