import Foundation
import OpenCoreData
import Testing

/// A table grouped into sections by an attribute's value, as a results controller groups a fetch: the
/// sections' counts against direct counts, the rows in the order of a direct fetch sorted by the key, and
/// each section's link filtering the table to it.
@Suite("Serve: sections of a table (skipped unless ocd is built)", .enabled(if: OcdBinary.url != nil, "ocd is not built"))
struct EntitySectionsTests {
    @Test func sectionsCountTheirObjectsAndTheRowsFollowTheSectionKey() throws {
        let served = try ServedStore()
        // Three positions (0, 1, 2) over the 120 items, 40 each; five notes emptied.
        try served.save { context in
            let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
            for item in items {
                try item.setValue(Int32(item.objectID.primaryKey % 3), forKey: "position")
                if item.objectID.primaryKey <= 5 { try item.setValue(nil, forKey: "note") }
            }
        }
        let page = try served.get("/entity/Item?page=1&sort=name&ascending=1&section=position")
        #expect(page.status == 200)
        #expect(page.body.contains("3 sections by position"))
        for position in 0..<3 {
            #expect(page.body.contains("<th colspan=\"6\">position: \(position) (40)</th>") || position == 2,
                    "section \(position) heads its rows on page 1 (2 starts on page 2)")
        }
        // The rows are the direct fetch's, sorted by the section key, then the chosen sort.
        let context = try served.directContext()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.sortDescriptors = [QuerySortDescriptor(key: "position"), QuerySortDescriptor(key: "name")]
        request.fetchLimit = 50
        #expect(ServedStore.listedKeys(page.body, entity: "Item") == (try context.fetch(request).map(\.objectID.primaryKey)))
        #expect(page.body.contains("120 objects; rows 1–50, page 1 of 3"))
        // The pager keeps the sections.
        #expect(page.body.contains("page=2&amp;sort=name&amp;ascending=1&amp;section=position"))

        // nil has its section (the total less the others': a grouped count skips nil), first, linking to its objects.
        let notes = try served.get("/entity/Item?section=note").body
        #expect(notes.contains("116 sections by note"))
        let nilLink = try #require(notes.range(of: #"<li><a href="[^"]*">"#, options: .regularExpression).map { String(notes[$0]) })
        #expect(nilLink.contains("filter=note%20%3D%3D%20nil"), "\(nilLink)")
        let filtered = try served.get("/entity/Item?page=1&ascending=1&filter=note%20%3D%3D%20nil").body
        #expect(ServedStore.listedKeys(filtered, entity: "Item").sorted() == [1, 2, 3, 4, 5])
        // One section per distinct note, and one for nil.
        let directNotes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).compactMap { try $0.value(forKey: "note") as? String }
        #expect(Set(directNotes).count + 1 == 116)

        #expect(try served.get("/entity/Item?section=colour").body.contains("Item has no attribute “colour” to make sections of."))
    }
}
