import Foundation
import OpenCoreData
import Testing

/// `ocd model hashes` prints the library's own entity version hashes, sorted by entity name.
@Suite("Demo: ocd model hashes (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoModelHashesTests {
    @Test(arguments: ["FailedBanks.xcdatamodeld", "Library.xcdatamodeld", "Library.xcdatamodeld/Library.xcdatamodel"])
    func hashesMatchTheLibrary(fixture: String) throws {
        let binary = try #require(OcdBinary.url)
        let url = try InteropFixtures.url(fixture)
        let model = try ManagedObjectModel(contentsOf: url)
        let expected = model.entityVersionHashesByName.sorted { $0.key < $1.key }

        let base64 = try OcdBinary.run(["model", "hashes", url.path], binary: binary)
        #expect(base64.status == 0, "\(base64.stderr)")
        #expect(base64.stdout == expected.map { "\($0.key) \($0.value.base64EncodedString())\n" }.joined())

        let hex = try OcdBinary.run(["model", "hashes", url.path, "--hex"], binary: binary)
        #expect(hex.status == 0, "\(hex.stderr)")
        #expect(hex.stdout == expected.map { entry in
            "\(entry.key) \(entry.value.map { String(format: "%02x", $0) }.joined())\n"
        }.joined())
    }

    @Test func aBrokenModelIsOneErrorLine() throws {
        let binary = try #require(OcdBinary.url)
        for path in [try InteropFixtures.url("Broken.xcdatamodel").path, "/nonexistent/Model.xcdatamodeld"] {
            let output = try OcdBinary.run(["model", "hashes", path], binary: binary)
            #expect(output.status != 0)
            #expect(output.stdout.isEmpty)
            #expect(output.stderr.split(separator: "\n").filter { $0.hasPrefix("Error:") }.count == 1, "\(output.stderr)")
        }
    }
}
