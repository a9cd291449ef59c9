import Foundation
import Testing

/// `ocd sync key`, `token` and `serve` as a new user runs them: what they print, and how they refuse a bad key
/// file, a bad lifetime or a missing model (one line naming the culprit, exit status 1, no crash).
@Suite("Demo: ocd sync's key, token and serve (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil, "ocd is not built"))
struct DemoSyncCommandTests {
    @Test func keyAndTokenPrintOneLineEach() throws {
        let ocd = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try OcdBinary.run(["sync", "key"], binary: ocd)
        #expect(key.status == 0)
        let line = key.stdout.trimmingCharacters(in: .newlines)
        #expect(Data(base64Encoded: line)?.count == 32)
        #expect(try OcdBinary.run(["sync", "key"], binary: ocd).stdout != key.stdout, "each key is new")
        let keyFile = folder.appendingPathComponent("k").path
        try Data(key.stdout.utf8).write(to: URL(fileURLWithPath: keyFile))
        let token = try OcdBinary.run(["sync", "token", "--key-file", keyFile, "--user", "alice", "--expires", "30m"], binary: ocd)
        #expect(token.status == 0)
        #expect(token.stdout.split(separator: ".").count == 3, "a JWT: header, claims, signature")
    }

    @Test func badKeysLifetimesAndModelsAreRefusedByName() throws {
        let ocd = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let short = folder.appendingPathComponent("short").path
        try Data(Data(repeating: 1, count: 8).base64EncodedString().utf8).write(to: URL(fileURLWithPath: short))
        let junk = folder.appendingPathComponent("junk").path
        try Data("not base64 at all!\n".utf8).write(to: URL(fileURLWithPath: junk))
        let good = folder.appendingPathComponent("good").path
        try Data(try OcdBinary.run(["sync", "key"], binary: ocd).stdout.utf8).write(to: URL(fileURLWithPath: good))
        let cases: [([String], String)] = [
            (["sync", "token", "--key-file", short, "--user", "a"], "holds 8 bytes"),
            (["sync", "token", "--key-file", junk, "--user", "a"], "is not base64"),
            (["sync", "token", "--key-file", folder.appendingPathComponent("none").path, "--user", "a"], "cannot be read"),
            (["sync", "token", "--key-file", good, "--user", "a", "--expires", "1y"], "--expires"),
            (["sync", "token", "--key-file", good, "--user", ""], "is not a user name"),
            (["sync", "serve", "--store", folder.appendingPathComponent("s.sqlite").path, "--model", folder.appendingPathComponent("none.xcdatamodel").path,
              "--key-file", good, "--port", "0"], "no such model"),
        ]
        for (arguments, words) in cases {
            let result = try OcdBinary.run(arguments, binary: ocd)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(words), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Backtrace"), "\(arguments)")
        }
    }
}
