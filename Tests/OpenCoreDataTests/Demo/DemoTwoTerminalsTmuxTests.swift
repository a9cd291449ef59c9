import Foundation
import Testing

/// The persistent-history demo (docs/HISTORY.md, "Two terminals"): `ocd banks browse` in one tmux pane, an
/// `ocd banks import` in another process in a second pane; the browser's list moves to the import's banks
/// with no key pressed (a remote change, merged from the store's history), and `ocd history` shows the
/// import's transactions.
@Suite("Demo: two terminals, an import moving the browser's list (skipped without tmux or a built ocd)",
       .enabled(if: OcdBinary.url != nil && OcdBinary.hasTmux), .serialized)
struct DemoTwoTerminalsTmuxTests {
    @Test func anImportInOnePaneMovesTheBrowsersListInTheOther() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Banks.sqlite").path
        let created = try OcdBinary.run(["banks", "import", "--store", store, "--history"], binary: binary)
        #expect(created.status == 0, "\(created.stderr)")
        let csv = folder.appendingPathComponent("two-banks.csv")
        try Data("""
            Bank Name,City,ST,CERT,Acquiring Institution,Closing Date
            First Demo Bank,Springfield,IL,90001,None,01-Jan-26
            Second Demo Bank,Shelbyville,IL,90002,None,02-Jan-26

            """.utf8).write(to: csv)

        let session = "ocd-test-\(UUID().uuidString.prefix(8))"
        // A tmux server of this test's own (its own socket), stopped at the end.
        let tmux = ["tmux", "-L", session]
        defer { _ = try? OcdBinary.shell(tmux + ["kill-server"]) }
        try OcdBinary.shell(tmux + ["new-session", "-d", "-s", session, "-x", "100", "-y", "40",
                             "\(binary.path) banks browse --store \(store)"])
        func screen(_ pane: Int) throws -> String {
            try OcdBinary.shell(tmux + ["capture-pane", "-p", "-t", "\(session).\(pane)"]).stdout
        }
        func waitFor(_ text: String, in pane: Int, seconds: Double = 10) throws -> String {
            let deadline = Date().addingTimeInterval(seconds)
            var last = ""
            while Date() < deadline {
                last = try screen(pane)
                if last.contains(text) { return last }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return last
        }
        let before = try waitFor("bank 1 of 561", in: 0)
        #expect(before.contains("bank 1 of 561"), "\(before)")

        // The second terminal: the import, kept on screen after it ends.
        try OcdBinary.shell(tmux + ["split-window", "-t", session, "-v",
                             "\(binary.path) banks import --store \(store) --csv \(csv.path) --replace; sleep 60"])
        let imported = try waitFor("Imported 2 banks", in: 1, seconds: 20)
        #expect(imported.contains("Imported 2 banks"), "\(imported)")
        let moved = try waitFor("bank 1 of 2", in: 0)
        #expect(moved.contains("bank 1 of 2"), "\(moved)")
        #expect(moved.contains("── IL (2) ──") && moved.contains("First Demo Bank, Springfield"), "\(moved)")

        // The history says who moved it.
        let history = try OcdBinary.run(["history", store, "--json"], binary: binary)
        #expect(history.status == 0, "\(history.stderr)")
        let last = try #require(history.stdout.split(separator: "\n").last.map(String.init))
        let json = try #require(JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(last)")
        #expect(json["author"] as? String == "ocd banks import")
        #expect((json["inserted"] as? [String])?.filter { $0.contains("/FailedBankInfo/") }.count == 2)
        _ = try? OcdBinary.shell(tmux + ["send-keys", "-t", "\(session).0", "q"])
    }
}
