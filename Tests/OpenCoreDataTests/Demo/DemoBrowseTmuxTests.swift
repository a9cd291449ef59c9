import Foundation
import Testing

/// Drives `ocd banks browse` in a real terminal (tmux) and reads the screen back.
@Suite("Demo: banks browse in tmux (skipped without tmux or a built ocd)",
       .enabled(if: OcdBinary.url != nil && OcdBinary.hasTmux), .serialized)
struct DemoBrowseTmuxTests {
    @Test func browsePagesFiltersDeletesAndFollowsLiveChanges() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Banks.sqlite").path
        #expect(try OcdBinary.run(["banks", "import", "--store", store], binary: binary).status == 0)

        let session = "ocd-test-\(UUID().uuidString.prefix(8))"
        // A tmux server of this test's own (its own socket), started by this test with default signal
        // handling, and stopped at the end: never a user's server, never one left over from another run.
        let tmux = ["tmux", "-L", session]
        defer { _ = try? OcdBinary.shell(tmux + ["kill-server"]) }
        try OcdBinary.shell(tmux + ["new-session", "-d", "-s", session, "-x", "100", "-y", "30",
                             "\(binary.path) banks browse --store \(store)"])
        defer { _ = try? OcdBinary.shell(tmux + ["kill-session", "-t", session]) }

        func screen() throws -> String { try OcdBinary.shell(tmux + ["capture-pane", "-p", "-t", session]).stdout }
        func keys(_ keys: String...) throws { try OcdBinary.shell(tmux + ["send-keys", "-t", session] + keys) }
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

        // Plain words search name, city and state (a CONTAINS[cd] predicate)…
        try keys("/", "Sylacauga")
        let filtered = try waitFor("bank 1 of 1")
        #expect(filtered.contains("Alabama Trust Bank, National Association"), "\(filtered)")
        try keys("Escape")
        #expect(try waitFor("bank 1 of 561").contains("── AL (7) ──"))
        // …and a predicate in Core Data's syntax is used as it is.
        try keys("/", "state == 'TX' AND city BEGINSWITH 'H'", "Enter")
        let predicate = try waitFor("predicate: state == \"TX\"")
        #expect(predicate.contains("── TX ("), "\(predicate)")
        #expect(!predicate.contains("── AL ("), "\(predicate)")
        try keys("/", "Escape")
        #expect(try waitFor("bank 1 of 561").contains("── AL (7) ──"))

        // d deletes the selected bank; the controller reports the removal and the section shrinks.
        try keys("d")
        let deleted = try waitFor("bank 1 of 560")
        #expect(deleted.contains("deleted Alabama Trust Bank, National Association (+0 −1)"), "\(deleted)")
        #expect(deleted.contains("── AL (6) ──"), "\(deleted)")
        try keys("q")

        // --live: a background context inserts, edits and deletes banks, one a second. Its saves are merged
        // into the list's context and the fetched results controller reports each change (no refetch).
        let liveSession = session + "-live"
        // A server of its own as well: the first one exits when its last session ends, and a new session on
        // that socket could meet it on its way out.
        let liveTmux = ["tmux", "-L", liveSession]
        defer { _ = try? OcdBinary.shell(liveTmux + ["kill-server"]) }
        try OcdBinary.shell(liveTmux + ["new-session", "-d", "-s", liveSession, "-x", "100", "-y", "30",
                             "\(binary.path) banks browse --live --store \(store)"])
        defer { _ = try? OcdBinary.shell(liveTmux + ["kill-session", "-t", liveSession]) }
        func liveScreen(until text: String, seconds: Double) throws -> String {
            var screen = ""
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline && !screen.contains(text) {
                screen = try OcdBinary.shell(liveTmux + ["capture-pane", "-p", "-t", liveSession]).stdout
                Thread.sleep(forTimeInterval: 0.05)
            }
            return screen
        }
        let inserted = try liveScreen(until: "change: inserted Live Bank 1 in CA (+1 −0)", seconds: 8)
        #expect(inserted.contains("change: inserted Live Bank 1 in CA (+1 −0)"), "\(inserted)")
        #expect(inserted.contains("bank 1 of 561"), "\(inserted)")
        let updated = try liveScreen(until: "(+0 −0 ~1)", seconds: 5)
        #expect(updated.contains("change: updated Nexity Bank (+0 −0 ~1)"), "\(updated)")
        #expect(updated.contains("Nexity Bank, Birmingham (edited)"), "\(updated)")
        let removed = try liveScreen(until: "change: deleted Live Bank 1 (+0 −1)", seconds: 8)
        #expect(removed.contains("change: deleted Live Bank 1 (+0 −1)"), "\(removed)")
        #expect(removed.contains("bank 1 of 561"), "\(removed)")
        _ = try? OcdBinary.shell(liveTmux + ["send-keys", "-t", liveSession, "q"])
    }
}
