#if DEBUG
/// What tests (and debug builds after each mutation) check about a registry; not built in release.
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
        for (tableIndex, table) in tables.enumerated() {
            var filled = 0
            var pageCount = 0
            for (pageIndex, page) in table.pages.enumerated() {
                guard let page else { continue }
                pageCount += 1
                filled += page.filled
                problems += pageViolations(table: tableIndex, pageIndex: pageIndex)
            }
            if table.filled != filled { problems.append("table \(tableIndex) counts \(table.filled), holds \(filled)") }
            if table.pageCount != pageCount {
                problems.append("table \(tableIndex) counts \(table.pageCount) pages, has \(pageCount)")
            }
        }
        problems += countViolations()
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

    /// The part of ``invariantViolations()`` that registering or removing `id` can break: its page (if it
    /// has one) and the counts. O(page size + tables): cheap enough to run after every registration.
    func invariantViolations(around id: ManagedObjectID) -> [String] {
        var problems = countViolations()
        if Self.isSaved(storeIndex: id.storeIndex, primaryKey: id.primaryKey), let table = tableIndex(for: id) {
            problems += pageViolations(table: table, pageIndex: Int(id.primaryKey) >> Self.pageShift)
        }
        return problems
    }

    /// A page's objects against its count and keys (nothing for a page that is not there).
    private func pageViolations(table tableIndex: Int, pageIndex: Int) -> [String] {
        let table = tables[tableIndex]
        guard pageIndex < table.pages.count, let page = table.pages[pageIndex] else { return [] }
        var problems: [String] = []
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
        if page.filled != inPage { problems.append("table \(tableIndex) page \(pageIndex) counts \(page.filled), holds \(inPage)") }
        return problems
    }

    /// `count` against the tables' and the dictionary's, and the spare page's emptiness. O(tables).
    func countViolations() -> [String] {
        var problems: [String] = []
        let paged = tables.reduce(0) { $0 + $1.filled }
        if count != paged + others.count { problems.append("count \(count), holds \(paged) paged and \(others.count) by ID") }
        if let sparePage, sparePage.filled != 0 || (0..<Self.pageSize).contains(where: { sparePage[$0] != nil }) {
            problems.append("the spare page is not empty")
        }
        return problems
    }

    /// Stops the program, naming what is wrong, when ``invariantViolations()`` finds anything.
    func checkInvariants() {
        let problems = invariantViolations()
        precondition(problems.isEmpty, "ObjectRegistry invariants broken: \(problems.joined(separator: "; "))")
    }

    /// Miscounts the page holding `id` by one: only for tests that show a broken registry is reported.
    func breakPageCountForTesting(around id: ManagedObjectID) {
        guard let table = tableIndex(for: id), let page = tables[table].pages[Int(id.primaryKey) >> Self.pageShift] else { return }
        page.filled += 1
    }
}
#endif
