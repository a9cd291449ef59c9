import Foundation
import Testing

/// Drives `ocd banks browse` in a real terminal (tmux) and reads the screen back.
@Suite("Demo: banks browse in tmux (skipped without tmux or a built ocd)",
       .enabled(if: OcdBinary.url != nil && OcdBinary.hasTmux), .serialized)
struct DemoBrowseTmuxTests {
    @Test func browsePagesFiltersAndShowsLiveChanges() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Banks.sqlite").path
        #expect(try OcdBinary.run(["banks", "import", "--store", store], binary: binary).status == 0)

        let session = "ocd-test-\(UUID().uuidString.prefix(8))"
        try OcdBinary.shell(["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                             "\(binary.path) banks browse --store \(store)"])
        defer { _ = try? OcdBinary.shell(["tmux", "kill-session", "-t", session]) }

        func screen() throws -> String { try OcdBinary.shell(["tmux", "capture-pane", "-p", "-t", session]).stdout }
        func keys(_ keys: String...) throws { try OcdBinary.shell(["tmux", "send-keys", "-t", session] + keys) }
        func waitFor(_ text: String, seconds: Double = 5) throws -> String {
            let deadline = Date().addingTimeInterval(seconds)
            var last = ""
            while Date() < deadline {
                last = try screen()
                if last.contains(text) { return last }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return last
        }

        let first = try waitFor("bank 1 of")
        #expect(first.contains("── AL (7) ──"), "\(first)")
        #expect(first.contains("Alabama Trust Bank"), "\(first)")

        try keys("j")
        #expect(try waitFor("bank 2 of").contains("bank 2 of"))
        try keys("PageDown")
        // A page is the screen's 30 rows less the title, status and help lines: 26 rows on.
        let paged = try waitFor("bank 28 of")
        #expect(paged.contains("bank 28 of"), "\(paged)")
        try keys("G")
        let last = try waitFor("bank 561 of")
        #expect(last.contains("bank 561 of"), "\(last)")
        try keys("g")
        #expect(try waitFor("bank 1 of 561").contains("Alabama Trust Bank"))

        try keys("/", "Sylacauga")
        let filtered = try waitFor("bank 1 of 1")
        #expect(filtered.contains("Alabama Trust Bank, National Association"), "\(filtered)")
        try keys("Escape")
        #expect(try waitFor("bank 1 of 561").contains("── AL (7) ──"))

        try keys("q")

        // --live: a background context inserts a bank a second later; the list refetches and says so.
        let liveSession = session + "-live"
        try OcdBinary.shell(["tmux", "new-session", "-d", "-s", liveSession, "-x", "100", "-y", "30",
                             "\(binary.path) banks browse --live --store \(store)"])
        defer { _ = try? OcdBinary.shell(["tmux", "kill-session", "-t", liveSession]) }
        var live = ""
        let deadline = Date().addingTimeInterval(8)
        while Date() < deadline && !live.contains("bank 1 of 562") {
            live = try OcdBinary.shell(["tmux", "capture-pane", "-p", "-t", liveSession]).stdout
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(live.contains("change: inserted Live Bank 1 in CA (+1 −0)"), "\(live)")
        #expect(live.contains("bank 1 of 562"), "\(live)")
        _ = try? OcdBinary.shell(["tmux", "send-keys", "-t", liveSession, "q"])
    }
}
