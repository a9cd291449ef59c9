#if DEBUG
/// What tests (and debugging) check about a registry; not built in release.
extension ObjectRegistry {
    /// What breaks the registry's invariants, recounted from its pages and dictionary (in the manner of
    /// swift-collections' `_checkInvariants`): empty when every count agrees. O(registered objects + pages).
    ///
    /// - Each page in a table's directory holds at least one object, and its `filled` is how many; a table's
    ///   `filled` and `pageCount` are the sums over its pages; the spare page is empty.
    /// - An object in a page slot has exactly that slot's key, the table's store and root entity.
    /// - `count` is the objects in pages plus those in the dictionary; `savedInOthers` is how many of the
    ///   dictionary's IDs are saved; a saved ID in the dictionary is not in its page as well.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        var paged = 0
        for (tableIndex, table) in tables.enumerated() {
            var filled = 0
            var pageCount = 0
            for (pageIndex, page) in table.pages.enumerated() {
                guard let page else { continue }
                pageCount += 1
                var inPage = 0
                for slot in 0..<Self.pageSize {
                    guard let object = page[slot] else { continue }
                    inPage += 1
                    let key = Int64(pageIndex << Self.pageShift | slot)
                    let id = object.objectID
                    if id.primaryKey != key || id.storeIndex != table.storeIndex
                        || id.entity.rootEntityNumber != table.rootEntityNumber {
                        problems.append("table \(tableIndex) key \(key) holds \(id)")
                    }
                }
                if inPage == 0 { problems.append("table \(tableIndex) keeps empty page \(pageIndex)") }
                if page.filled != inPage {
                    problems.append("table \(tableIndex) page \(pageIndex) counts \(page.filled), holds \(inPage)")
                }
                filled += inPage
            }
            if table.filled != filled { problems.append("table \(tableIndex) counts \(table.filled), holds \(filled)") }
            if table.pageCount != pageCount {
                problems.append("table \(tableIndex) counts \(table.pageCount) pages, has \(pageCount)")
            }
            paged += filled
        }
        if let sparePage, sparePage.filled != 0 || (0..<Self.pageSize).contains(where: { sparePage[$0] != nil }) {
            problems.append("the spare page is not empty")
        }
        if count != paged + others.count { problems.append("count \(count), holds \(paged) paged and \(others.count) by ID") }
        let saved = others.keys.filter { Self.isSaved(storeIndex: $0.storeIndex, primaryKey: $0.primaryKey) }
        if savedInOthers != saved.count { problems.append("savedInOthers \(savedInOthers), holds \(saved.count)") }
        for id in saved {
            let root = id.entity.rootEntityNumber
            let key = Int(id.primaryKey)
            if let table = tables.first(where: { $0.rootEntityNumber == root && $0.storeIndex == id.storeIndex }),
               key >> Self.pageShift < table.pages.count, let page = table.pages[key >> Self.pageShift],
               page[key & Self.pageMask]?.objectID == id {
                problems.append("\(id) is registered twice, paged and by ID")
            }
        }
        return problems
    }

    /// Stops the program, naming what is wrong, when ``invariantViolations()`` finds anything.
    func checkInvariants() {
        let problems = invariantViolations()
        precondition(problems.isEmpty, "ObjectRegistry invariants broken: \(problems.joined(separator: "; "))")
    }
}
#endif
