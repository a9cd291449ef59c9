import Foundation
import Testing

/// `ocd history` and the store's registered history readers (docs/HISTORY.md, "The tool"): `--register NAME`
/// marks the newest transaction the run read as seen, `--readers` lists the readers, `--unregister NAME`
/// removes one; bad input is one line and a non-zero status.
@Suite("Demo: ocd history's readers (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoHistoryReadersTests {
    /// The `"transaction"` numbers of `--json` history lines.
    static func transactionNumbers(_ stdout: String) throws -> [Int] {
        try stdout.split(separator: "\n").map { line in
            let json = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            return try #require(json["transaction"] as? Int)
        }
    }

    /// The `--readers --json` lines as (name, seen through).
    static func readers(_ store: String, binary: URL) throws -> [(name: String, seen: Int)] {
        let listed = try OcdBinary.run(["history", store, "--readers", "--json"], binary: binary)
        #expect(listed.status == 0, "\(listed.stderr)")
        return try listed.stdout.split(separator: "\n").map { line in
            let json = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            return (try #require(json["name"] as? String), try #require(json["seenThrough"] as? Int))
        }
    }

    @Test func aReaderRegistersMovesItsMarkIsListedAndUnregisters() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Banks.sqlite").path
        #expect(try OcdBinary.run(["banks", "import", "--store", store, "--history"], binary: binary).status == 0)
        #expect(try Self.readers(store, binary: binary).isEmpty)

        // Registering prints the history as usual and marks the newest transaction read.
        let first = try OcdBinary.run(["history", store, "--json", "--register", "indexer"], binary: binary)
        #expect(first.status == 0, "\(first.stderr)")
        let read = try Self.transactionNumbers(first.stdout)
        let newest = try #require(read.last)
        #expect(first.stderr.contains("registered reader 'indexer', seen through \(newest)"), "\(first.stderr)")
        #expect(try Self.readers(store, binary: binary).map { "\($0.name) \($0.seen)" } == ["indexer \(newest)"])

        // Another process writes; the reader reads on from its mark and moves it.
        let csv = folder.appendingPathComponent("two-banks.csv")
        try Data("""
            Bank Name,City,ST,CERT,Acquiring Institution,Closing Date
            First Demo Bank,Springfield,IL,90001,None,01-Jan-26
            Second Demo Bank,Shelbyville,IL,90002,None,02-Jan-26

            """.utf8).write(to: csv)
        #expect(try OcdBinary.run(["banks", "import", "--store", store, "--csv", csv.path, "--replace"], binary: binary).status == 0)
        let next = try OcdBinary.run(["history", store, "--json", "--after", "\(newest)", "--register", "indexer"], binary: binary)
        #expect(next.status == 0, "\(next.stderr)")
        let moved = try #require(try Self.transactionNumbers(next.stdout).last)
        #expect(moved > newest)
        #expect(try Self.readers(store, binary: binary).map { "\($0.name) \($0.seen)" } == ["indexer \(moved)"])
        // Nothing new: the mark stays where --after puts it.
        #expect(try OcdBinary.run(["history", store, "--after", "\(moved)", "--register", "indexer"], binary: binary).status == 0)
        #expect(try Self.readers(store, binary: binary).map(\.seen) == [moved])
        let plain = try OcdBinary.run(["history", store, "--readers"], binary: binary)
        #expect(plain.stdout.hasPrefix("indexer: seen through \(moved), updated "), "\(plain.stdout)")

        let removed = try OcdBinary.run(["history", store, "--unregister", "indexer"], binary: binary)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try Self.readers(store, binary: binary).isEmpty)
    }

    @Test func badReaderInputIsOneLineAndNonZero() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Banks.sqlite").path
        #expect(try OcdBinary.run(["banks", "import", "--store", store, "--history"], binary: binary).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let cases: [(arguments: [String], names: String)] = [
            (["--unregister", "nobody"], "nobody"),
            (["--register", ""], "reader name"),
            (["--register", String(repeating: "r", count: 300)], "reader name"),
            (["--readers", "--register", "indexer"], "one at a time"),
            (["--unregister", "indexer", "--after", "1"], "--after"),
        ]
        for (arguments, names) in cases {
            let output = try OcdBinary.run(["history", store] + arguments, binary: binary)
            #expect(output.status != 0, "\(arguments)")
            #expect(output.stderr.contains(names), "\(arguments): \(output.stderr)")
            #expect(!output.stderr.contains("Fatal error"), "\(arguments)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before, "refused input leaves the store alone")
    }
}
