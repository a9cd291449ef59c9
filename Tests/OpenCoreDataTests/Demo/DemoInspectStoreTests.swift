import Foundation
import Testing
@testable import OpenCoreData

/// `ocd inspect` on stores ocd did not write: without a model (the store's own tables), and with a model
/// whose entity numbers differ from the store's.
@Suite("Demo: ocd inspect on foreign stores (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct DemoInspectStoreTests {
    @Test func inspectsAStoreWithoutItsModel() throws {
        let binary = try #require(OcdBinary.url)
        let directory = TemporaryDirectory()
        let modelURL = try RenumberedStoreFixture.modelFolder(in: directory)
        let store = directory.file("Library.sqlite")
        try RenumberedStoreFixture.renumberedStore(model: ManagedObjectModel(contentsOf: modelURL), at: store)
        let before = try Data(contentsOf: store)

        let output = try OcdBinary.run(["inspect", store.path], binary: binary)
        #expect(output.status == 0, "\(output.stderr)")
        for expected in ["no model", "pass --model", "Author — 1 row in ZAUTHOR", "\nBook — 1 row in ZBOOK",
                         "Ebook : Book — 1 row in ZBOOK", "ZNAME: text", "ZTITLE: text", "ZAUTHOR: integer"] {
            #expect(output.stdout.contains(expected), "missing '\(expected)' in \(output.stdout)")
        }

        let withModel = try OcdBinary.run(["inspect", store.path, "--model", modelURL.path], binary: binary)
        #expect(withModel.status == 0, "\(withModel.stderr)")
        #expect(withModel.stdout.contains("Ebook : Book — 1 row"), "\(withModel.stdout)")
        let fetch = try OcdBinary.run(["fetch", store.path, "--model", modelURL.path, "--entity", "Book", "--count"],
                                      binary: binary)
        #expect(fetch.stdout == "2\n", "\(fetch.stderr)")
        #expect(try Data(contentsOf: store) == before, "read-only commands leave the file alone")
    }
}
