import Foundation
import Testing
@testable import OpenCoreData

/// `ocd serve` as a browser meets it: the real binary on a free loopback port, a store made here, every
/// page fetched over HTTP and checked against a direct fetch of the same store.
@Suite("Serve: ocd serve over real HTTP (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil))
struct ServeCommandTests {
    @Test func theIndexListsEveryEntityWithItsCountAndEmbedsTheDiagram() throws {
        let served = try ServedStore()
        let index = try served.get("/")
        #expect(index.status == 200)
        #expect(index.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(index.body.contains(served.storePath))
        #expect(index.body.contains("Model: Shop&quot;onmouseover=&lt;b&gt;.xcdatamodel"), "\(index.body)")
        #expect(index.body.contains("<a href=\"/entity/Item\">Item</a></td><td class=\"count\" data-entity=\"Item\">120</td>"), "\(index.body)")
        #expect(index.body.contains("<a href=\"/entity/Shelf\">Shelf</a></td><td class=\"count\" data-entity=\"Shelf\">2</td>"))
        #expect(index.body.contains("<img class=\"diagram\" src=\"/model.svg\""))
        let svg = try served.get("/model.svg")
        #expect(svg.status == 200)
        #expect(svg.headers["content-type"]?.hasPrefix("image/svg+xml") == true)
        #expect(svg.body.contains(">Item</text>") && svg.body.contains(">position: Integer 32</text>"))
        #expect(svg.body.contains("items → Item *"))
        #expect(svg.body.contains("marker-end=\"url(#many)\"") && svg.body.contains("marker-end=\"url(#one)\""))
    }

    @Test func pagesHoldFiftyRowsInTheOrderOfADirectFetch() throws {
        let served = try ServedStore()
        // The store's own order, then sorted each way: each page is the direct fetch's page.
        for (query, sortKey, ascending) in [("", nil, true), ("&sort=name&ascending=1", "name", true),
                                            ("&sort=position&ascending=0", "position", false)] as [(String, String?, Bool)] {
            var seen: [Int64] = []
            for page in 1...3 {
                let response = try served.get("/entity/Item?page=\(page)\(query)")
                #expect(response.status == 200)
                let listed = ServedStore.listedKeys(response.body, entity: "Item")
                let direct = try served.directKeys(sortKey: sortKey, ascending: ascending, offset: (page - 1) * 50)
                #expect(listed == direct, "page \(page)\(query)")
                #expect(listed.count == (page < 3 ? 50 : 20))
                seen += listed
            }
            #expect(Set(seen).count == ServedStore.itemCount, "every item once over the three pages\(query)")
        }
        let sorted = try served.get("/entity/Item?page=1&sort=name&ascending=1")
        #expect(sorted.body.contains("120 objects; rows 1–50, page 1 of 3"))
        // The sorted column's header links to the other direction.
        #expect(sorted.body.contains("<a href=\"/entity/Item?page=1&amp;sort=name&amp;ascending=0\">name</a> ▲"))
        #expect(sorted.body.range(of: "item-000")!.lowerBound < sorted.body.range(of: "item-001")!.lowerBound)
        #expect(try served.get("/entity/Item?page=0").status == 400)
        #expect(try served.get("/entity/Item?sort=colour").body.contains("Item has no attribute “colour” to sort by."))
    }

    @Test func theFilterTakesThePredicateLanguageAndShowsErrorsAtTheirPosition() throws {
        let served = try ServedStore()
        let filtered = try served.get("/entity/Item?filter=position+%3C+30+AND+name+ENDSWITH+%271%27&sort=position")
        #expect(filtered.status == 200)
        let direct = try served.directKeys(sortKey: "position", predicate: "position < 30 AND name ENDSWITH '1'", offset: 0)
        #expect(!direct.isEmpty)
        #expect(ServedStore.listedKeys(filtered.body, entity: "Item") == direct)
        #expect(filtered.body.contains("\(direct.count) objects match"))
        // The filter box keeps what was typed, escaped.
        #expect(filtered.body.contains("value=\"position &lt; 30 AND name ENDSWITH &#39;1&#39;\""))

        let bad = "name == == 'x'"
        var position = -1
        do { _ = try QueryPredicate(format: bad) } catch let error as QueryLanguageError { position = error.position }
        #expect(position >= 0)
        let refused = try served.get("/entity/Item?filter=name+%3D%3D+%3D%3D+%27x%27")
        #expect(refused.status == 400)
        #expect(refused.body.contains("at character \(position)"), "\(refused.body)")
        #expect(refused.body.contains("The filter “name == == &#39;x&#39;” is not a predicate"))

        let unknownKey = try served.get("/entity/Item?filter=colour+%3D%3D+1")
        #expect(unknownKey.status == 400, "\(unknownKey.body)")
        #expect(unknownKey.body.contains("colour"))
    }

    @Test func anObjectPageShowsEveryValueAndFollowsRelationships() throws {
        let served = try ServedStore()
        let context = try served.directContext()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: "name == 'item-005'")
        let item = try #require(try context.fetch(request).first)
        let shelf = try #require(try item.value(forKey: "shelf") as? ManagedObject)

        let page = try served.get("/object/Item/\(item.objectID.primaryKey)")
        #expect(page.status == 200)
        #expect(page.body.contains("item-005"))
        #expect(page.body.contains("<img class=\"stored\" src=\"data:image/png;base64,\(ServedStore.png.base64EncodedString())\""))
        #expect(page.body.contains("19 bytes</span> <code>89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52 …</code>"))
        let shelfLink = "/object/Shelf/\(shelf.objectID.primaryKey)"
        #expect(page.body.contains("<a href=\"\(shelfLink)\">Shelf \(shelf.objectID.primaryKey)</a>"))

        let shelfPage = try served.get(shelfLink)
        #expect(shelfPage.status == 200)
        #expect(shelfPage.body.contains(try #require(shelf.value(forKey: "label") as? String)))
        // A1 holds 110 items: the first 100 are listed, then how many more.
        #expect(shelfPage.body.contains("110 objects<ul class=\"related\">"))
        #expect(shelfPage.body.contains("<li>and 10 more</li></ul>"))
        #expect(shelfPage.body.components(separatedBy: "<li><a href=\"/object/Item/").count == 101)
        #expect(shelfPage.body.contains("<a href=\"/object/Item/\(item.objectID.primaryKey)\">"))
        // The table links each item's shelf, and counts a shelf's items.
        let table = try served.get("/entity/Shelf")
        #expect(table.body.contains("<td>110</td>") && table.body.contains("<td>10</td>"))

        #expect(try served.get("/object/Item/999999").status == 404)
        #expect(try served.get("/object/Item/x").status == 404)
        #expect(try served.get("/entity/Nothing").status == 404)
    }

    @Test func hostileNamesAndValuesReachNoPageUnescapedAndTheStoreStaysByteIdentical() throws {
        let served = try ServedStore()
        let context = try served.directContext()
        var targets = ["/", "/model.svg", "/entity/Item", "/entity/Item?sort=note", "/entity/Shelf",
                       "/entity/" + ServedStore.hostileEntity.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                       "/entity/Item?filter=" + "note == '<script>alert(1)</script>'".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                       "/entity/%3Cscript%3Ealert(1)%3C%2Fscript%3E", "/object/Item/%22onmouseover%3D"]
        for entity in ["Item", "Shelf", ServedStore.hostileEntity] {
            for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
                targets.append("/object/\(entity.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)/\(object.objectID.primaryKey)")
            }
        }
        var pagesWithEscapedMarkup = 0
        for target in targets {
            let response = try served.get(target)
            #expect(response.status < 500, "\(target)")
            var body = response.body
            if target == "/model.svg" {
                #expect(body.hasSuffix("</svg>\n"))
                body = String(body.dropLast("</svg>\n".count))
            }
            for markup in ServedStore.hostile {
                #expect(!body.contains(markup), "\(markup) unescaped in \(target)")
            }
            if body.contains("&lt;script&gt;alert(1)&lt;/script&gt;") { pagesWithEscapedMarkup += 1 }
        }
        // The markup was there to be escaped: the index, the diagram, the tables and the objects show it.
        #expect(pagesWithEscapedMarkup >= 6, "\(pagesWithEscapedMarkup)")
        let index = try served.get("/")
        #expect(!index.body.contains("<b>"))
        #expect(index.headers["content-security-policy"]?.contains("default-src 'none'") == true)

        served.server.kill(SIGTERM)
        #expect(try served.server.wait(seconds: 20) == 0)
        #expect(try ServedStore.hash(ofFileAt: served.storePath) == served.initialHash)
    }

    @Test func otherOriginsAreRefusedAndOnlyGETAndHEADAreAnswered() throws {
        let served = try ServedStore()
        let foreign = try served.get("/", headers: ["Origin": "http://evil.example"])
        #expect(foreign.status == 403)
        #expect(foreign.body.contains("Requests from another origin (http://evil.example) are refused."))
        #expect(try served.get("/entity/Item", headers: ["Origin": "null"]).status == 403)
        #expect(try served.get("/", headers: ["Origin": "http://127.0.0.1:\(served.port + 1)"]).status == 403)
        #expect(try served.get("/", headers: ["Origin": "http://127.0.0.1:\(served.port)"]).status == 200)
        #expect(try served.get("/", headers: ["Origin": "http://localhost:\(served.port)"]).status == 200)
        #expect(try served.get("/").status == 200)
        // A page of another site whose name points at loopback (DNS rebinding) asks for its own host name.
        let rebound = try served.get("/entity/Item", headers: ["Host": "evil.example:\(served.port)"])
        #expect(rebound.status == 403)
        #expect(rebound.body.contains("Requests for another host (evil.example:\(served.port)) are refused."))

        for method in ["POST", "PUT", "DELETE", "PATCH"] {
            let refused = try served.get("/entity/Item", method: method)
            #expect(refused.status == 405, "\(method)")
            #expect(refused.headers["allow"] == "GET, HEAD")
        }
        let head = try served.get("/entity/Item", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(try served.get("/nothing/here").status == 404)
    }

    @Test func modelDiagramWritesTheSVGWithEveryNameEscaped() throws {
        let served = try ServedStore()
        let binary = try #require(OcdBinary.url)
        let output = try OcdBinary.run(["model", "diagram", served.modelPath, "--svg"], binary: binary)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.hasPrefix("<?xml"))
        #expect(output.stdout == (try served.get("/model.svg")).body)
        #expect(output.stdout.contains(">Evil</text>"))
        #expect(output.stdout.contains(">title: String</text>"))
        #expect(output.stdout.components(separatedBy: "</svg>").count == 2)
        let missingFlag = try OcdBinary.run(["model", "diagram", served.modelPath], binary: binary)
        #expect(missingFlag.status != 0)
        #expect(missingFlag.stderr.contains("--svg"))
    }
}
