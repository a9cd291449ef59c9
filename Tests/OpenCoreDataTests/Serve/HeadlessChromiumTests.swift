import Foundation
import Testing
@testable import OpenCoreData

/// `ocd serve`'s pages in a real browser: Debian's Chromium, headless, against the real server.
@Suite("Serve: pages in headless Chromium (skipped unless ocd is built and chromium is installed)",
       .enabled(if: OcdBinary.url != nil, "ocd is not built"),
       .enabled(if: HeadlessChromium.browser != nil, "chromium is not installed (apt-get install chromium; .ci/run does)"))
struct HeadlessChromiumTests {
    @Test func theRenderedPagesFilterFollowRelationshipsAndPage() throws {
        let served = try ServedStore()
        let root = "http://127.0.0.1:\(served.port)"
        let index = try HeadlessChromium.dumpDOM(root + "/")
        #expect(index.contains("<td class=\"count\" data-entity=\"Item\">120</td>"), "\(index)")

        let filter = "position < 30 AND name ENDSWITH '1'".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let filtered = try HeadlessChromium.dumpDOM(root + "/entity/Item?filter=\(filter)&sort=position")
        let direct = try served.directKeys(sortKey: "position", predicate: "position < 30 AND name ENDSWITH '1'", offset: 0)
        #expect(!direct.isEmpty)
        #expect(ServedStore.listedKeys(filtered, entity: "Item") == direct)

        // Page through the table: every item once over the three pages.
        var seen: [Int64] = []
        for page in 1...3 {
            seen += ServedStore.listedKeys(try HeadlessChromium.dumpDOM(root + "/entity/Item?page=\(page)"), entity: "Item")
        }
        #expect(seen.count == ServedStore.itemCount && Set(seen).count == ServedStore.itemCount)

        // Follow the first item's shelf link to the shelf the store says it is on.
        let object = try HeadlessChromium.dumpDOM(root + "/object/Item/\(direct[0])")
        let shelfPath = try #require(object.range(of: #"/object/Shelf/\d+"#, options: .regularExpression).map { String(object[$0]) })
        let context = try served.directContext()
        let item = try context.existingObject(with: ManagedObjectID(
            entity: try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Item"]),
            primaryKey: direct[0], store: try #require(context.persistentStoreCoordinator?.storeBackends.first).identity))
        let expectedShelf = try #require(try item.value(forKey: "shelf") as? ManagedObject)
        #expect(shelfPath == "/object/Shelf/\(expectedShelf.objectID.primaryKey)")
        let shelf = try HeadlessChromium.dumpDOM(root + shelfPath)
        #expect(shelf.contains("<h1>Shelf \(expectedShelf.objectID.primaryKey)</h1>"), "\(shelf.prefix(600))")
        #expect(shelf.contains(try #require(expectedShelf.value(forKey: "label") as? String)))
        #expect(shelf.contains("<p id=\"live-change\" class=\"live\" hidden=\"\">"))
    }

    @Test func screenshotsOfTheDiagramAndAnObjectPage() throws {
        let served = try ServedStore()
        let root = "http://127.0.0.1:\(served.port)"
        let pngSignature = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        for (path, name) in [("/", "serve-index.png"), ("/model.svg", "serve-diagram.png"), ("/object/Item/5", "serve-object.png"),
                             ("/entity/Item?sort=name&ascending=1", "serve-table.png")] {
            let file = try HeadlessChromium.screenshot(root + path, name: name)
            let bytes = try Data(contentsOf: file)
            #expect(bytes.prefix(8) == pngSignature, "\(name)")
            // A blank page compresses to a few kilobytes; these show text, tables and the diagram.
            #expect(bytes.count > 8_000, "\(name): \(bytes.count) bytes")
        }
    }

    @Test func aSaveElsewhereUpdatesTheOpenIndexAndShowsTheBannerOnAnObjectPage() async throws {
        let served = try ServedStore()
        let root = "http://127.0.0.1:\(served.port)"
        let session = try await HeadlessChromium.Session()
        do {
            try await session.open(root + "/")
            try await session.waitUntil("return document.documentElement.getAttribute('data-live') === 'open'")
            try served.save { context in
                for number in 0..<2 { try context.insertNewObject(forEntityName: "Item").setValue("new-\(number)", forKey: "name") }
            }
            try await session.waitUntil("return document.querySelector('td.count[data-entity=Item]').textContent === '122'")
            let banner = try await session.evaluate("var b = document.getElementById('live-change'); return b.hidden ? '' : b.textContent")
            #expect((banner as? String)?.contains("Item: 2 inserted") == true, "\(String(describing: banner))")

            try await session.open(root + "/object/Shelf/1")
            try await session.waitUntil("return document.documentElement.getAttribute('data-live') === 'open'")
            try served.save { context in try context.insertNewObject(forEntityName: "Shelf").setValue("C3", forKey: "label") }
            try await session.waitUntil("var b = document.getElementById('live-change'); return !b.hidden && b.textContent.indexOf('Shelf: 1 inserted') >= 0")
            let text = try await session.evaluate("return document.getElementById('live-change').textContent") as? String
            #expect(text?.contains("Shelf: 1 inserted") == true, "\(String(describing: text))")
            #expect(try await session.evaluate("return document.querySelector('#live-change a').href") as? String
                    == root + "/object/Shelf/1")
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }

    @Test func aTablePageUpdatesItsRowsInPlaceAndMarksTheChangedOne() async throws {
        let served = try ServedStore()
        let root = "http://127.0.0.1:\(served.port)"
        let session = try await HeadlessChromium.Session()
        do {
            try await session.open(root + "/entity/Item?sort=name&ascending=1")
            try await session.waitUntil("return document.documentElement.getAttribute('data-live') === 'open'")
            // Set in this document: still there after the update, so the page was not loaded again.
            _ = try await session.evaluate("window.loadedOnce = 'yes'; return true")
            #expect(try await session.evaluate("return document.querySelectorAll('tr.changed').length") as? Int == 0)
            try served.save { context in
                let items = FetchRequest<ManagedObject>(entityName: "Item")
                items.predicate = try QueryPredicate(format: "name == 'item-003'")
                try #require(try context.fetch(items).first).setValue("changed elsewhere", forKey: "note")
            }
            try await session.waitUntil("return document.documentElement.getAttribute('data-refreshes') === '1'")
            let changed = try await session.evaluate("""
                return Array.prototype.map.call(document.querySelectorAll('tr.changed'), function (row) { return row.textContent; })
                """) as? [String]
            #expect(changed?.count == 1, "\(String(describing: changed))")
            #expect(changed?.first?.contains("item-003") == true && changed?.first?.contains("changed elsewhere") == true)
            #expect(try await session.evaluate("return window.loadedOnce") as? String == "yes")
            #expect(try await session.evaluate("return document.querySelectorAll('table.objects tr').length") as? Int == 51)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }

    @Test func aValidationErrorShowsOnItsFieldAndIsFixedInTheBrowser() async throws {
        let served = try ServedStore(readWrite: true)
        let root = "http://127.0.0.1:\(served.port)"
        let session = try await HeadlessChromium.Session()
        do {
            try await session.open(root + "/object/Item/5")
            // `name` is required: emptying it and saving is refused on the field.
            _ = try await session.evaluate("var f = document.querySelector('input[data-key=name]'); f.value = ''; f.form.submit(); return true")
            try await session.waitUntil("return document.querySelector('.field-error[data-key=name]') !== null")
            let message = try await session.evaluate("return document.querySelector('.field-error[data-key=name]').textContent") as? String
            #expect(message?.contains("required") == true, "\(String(describing: message))")
            #expect(try served.value("name", of: "Item", 5) as? String != nil)
            // Typing a name and saving again fixes it: the page comes back without the error, showing the value.
            _ = try await session.evaluate("var f = document.querySelector('input[data-key=name]'); f.value = 'fixed in the browser'; f.form.submit(); return true")
            try await session.waitUntil("""
                var f = document.querySelector('input[data-key=name]');
                return document.querySelector('.field-error') === null && f !== null && f.value === 'fixed in the browser'
                """)
            #expect(try served.value("name", of: "Item", 5) as? String == "fixed in the browser")
        } catch {
            await session.close()
            throw error
        }
        await session.close()
    }
}
