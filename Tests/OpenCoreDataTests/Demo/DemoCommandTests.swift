import Foundation
import Testing

@Suite("Demo: ocd commands (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoCommandTests {
    @Test func tourRunsEverySeedAtASmallCount() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = try OcdBinary.run(["tour", "--count", "600", "--folder", folder.path], binary: binary)
        #expect(output.status == 0, "\(output.stderr)")
        for expected in ["Inserting 100% 600/600", "Fetched 600 records", "600 IDs", "marked 600 of 600 unread",
                         "Per object:", "Sessions: 150", "Imported 561 banks", "AL — 7 banks",
                         // The upgrade step: written by "Journal", opened (and migrated) by "Journal 2".
                         "Version 'Journal' of the app wrote 3 entries", "The store says it is at 'Journal'",
                         "the store is now at 'Journal 2'", "First day — text: \"Installed the app.\", mood 3 (Int64)",
                         "Release — text: \"Version 2 is out.\", mood 5 (Int64), starred false, 1 tag(s)", "Tour finished"] {
            #expect(output.stdout.contains(expected), "missing '\(expected)'")
        }
        #expect(!output.stdout.contains("\u{1B}["), "no ANSI codes without a terminal")
        #expect(output.stderr.contains("Z_PK IN ("), "the batch-faulting SQL is shown")
    }

    @Test func fetchPrintsJSONAndCounts() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Banks.sqlite").path
        #expect(try OcdBinary.run(["banks", "import", "--store", store], binary: binary).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let json = try OcdBinary.run(["fetch", store, "--entity", "FailedBankInfo", "--sort", "details.closeDate:desc",
                                      "--limit", "2", "--keys", "name,state,details.closeDate", "--json"], binary: binary)
        #expect(json.status == 0, "\(json.stderr)")
        let lines = json.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let first = try #require(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect((first["details.closeDate"] as? String)?.hasSuffix("T00:00:00Z") == true)
        let count = try OcdBinary.run(["fetch", store, "--entity", "FailedBankInfo", "--count"], binary: binary)
        #expect(count.stdout == "561\n")
        let inspect = try OcdBinary.run(["inspect", store], binary: binary)
        #expect(inspect.stdout.contains("FailedBankInfo — 561 rows"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before, "read-only commands leave the file alone")
    }

    @Test func badInputIsOneLineAndNonZero() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let foreign = folder.appendingPathComponent("notes.txt")
        try Data("hello, not a database".utf8).write(to: foreign)
        let brokenModel = folder.appendingPathComponent("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: brokenModel, withIntermediateDirectories: true)
        try Data("<model><entity name=".utf8).write(to: brokenModel.appendingPathComponent("contents"))
        let cases: [[String]] = [
            ["inspect", folder.appendingPathComponent("missing.sqlite").path],
            ["inspect", foreign.path],
            ["fetch", foreign.path, "--entity", "X", "--model", brokenModel.path],
            ["fetch", foreign.path, "--entity", "X", "--limit", "-3"],
            ["todo", "populate", "--count", "0"],
        ]
        for arguments in cases {
            let output = try OcdBinary.run(arguments, binary: binary)
            #expect(output.status != 0, "\(arguments)")
            let errorLines = output.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }
            #expect(errorLines.count == 1, "\(arguments): \(output.stderr)")
            #expect(!output.stderr.contains("Fatal error") && !output.stderr.contains("Stack dump"))
        }
    }
}
