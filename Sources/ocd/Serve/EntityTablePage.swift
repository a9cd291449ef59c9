import Foundation
import OpenCoreData

/// `/entity/NAME?page=N&sort=KEY&ascending=1&filter=PREDICATE`: one page of an entity's objects as a table,
/// fetched with `fetchOffset` and `fetchLimit` (never the whole table), sortable by any attribute, filtered
/// by a predicate in the query language.
struct EntityTablePage {
    /// The entity shown.
    let entity: EntityDescription
    /// The page, counted from 1.
    let page: Int
    /// The attribute the rows are sorted by, if any.
    let sortKey: String?
    /// Whether the sort is ascending.
    let ascending: Bool
    /// The filter as typed (empty for none).
    let filter: String

    /// Reads the page's query.
    ///
    /// - Throws: ``BrowserError`` (400) for a page that is not a whole number from 1, or a sort key that is
    ///   not one of the entity's attributes.
    init(entity: EntityDescription, query: BrowserQuery) throws {
        self.entity = entity
        let pageText = query["page"] ?? "1"
        guard let page = Int(pageText), page >= 1 else {
            throw BrowserError.badRequest("page “\(pageText)” is not a page number (1, 2, …).")
        }
        self.page = page
        let sortKey = query["sort"].flatMap { $0.isEmpty ? nil : $0 }
        if let sortKey, !Self.attributes(of: entity).contains(where: { $0.name == sortKey }) {
            throw BrowserError.badRequest("\(entity.name) has no attribute “\(sortKey)” to sort by.")
        }
        self.sortKey = sortKey
        ascending = query["ascending"] != "0"
        filter = query["filter"] ?? ""
    }

    /// The entity's attributes, in the model's order: the table's sortable columns.
    static func attributes(of entity: EntityDescription) -> [AttributeDescription] {
        entity.allProperties.compactMap { $0 as? AttributeDescription }
    }

    /// The entity's relationships, in the model's order.
    static func relationships(of entity: EntityDescription) -> [RelationshipDescription] {
        entity.allProperties.compactMap { $0 as? RelationshipDescription }
    }

    /// The fetch request for this page: the filter, the sort, and one page's offset and limit.
    ///
    /// - Throws: ``BrowserError`` (400) naming the filter and the position of its error.
    func fetchRequest() throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: entity.name)
        if !filter.trimmingCharacters(in: .whitespaces).isEmpty {
            do {
                request.predicate = try QueryPredicate(format: filter)
            } catch {
                throw BrowserError.badRequest("The filter “\(filter)” is not a predicate: \(error)")
            }
        }
        if let sortKey { request.sortDescriptors = [QuerySortDescriptor(key: sortKey, ascending: ascending)] }
        request.fetchOffset = (page - 1) * StoreBrowser.pageSize
        request.fetchLimit = StoreBrowser.pageSize
        return request
    }

    /// The page's HTML.
    ///
    /// - Throws: ``BrowserError`` (400) when the filter does not parse or the store refuses it (a key the
    ///   entity does not have, say).
    func html(_ browser: StoreBrowser) throws -> String {
        let request = try fetchRequest()
        let attributes = Self.attributes(of: entity), relationships = Self.relationships(of: entity)
        let (total, rows) = try browser.withContext { context -> (Int, [String]) in
            do {
                let countRequest = FetchRequest<ManagedObject>(entityName: entity.name)
                countRequest.predicate = request.predicate
                let total = try context.count(for: countRequest)
                let rows = try context.fetch(request).map { object in
                    try row(object, attributes: attributes, relationships: relationships)
                }
                return (total, rows)
            } catch let error as BrowserError {
                throw error
            } catch {
                throw BrowserError.badRequest("The store refused the filter “\(filter)”: \(error)")
            }
        }
        let pageCount = max(1, (total + StoreBrowser.pageSize - 1) / StoreBrowser.pageSize)
        let headers = attributes.map { header(for: $0.name) } + relationships.map { "<th>\(HTMLText.escaped($0.name))</th>" }
        let first = (page - 1) * StoreBrowser.pageSize
        return PageLayout.document(title: entity.name, storeName: browser.storeName, writable: browser.isWritable, body: """
            <h1>\(HTMLText.escaped(entity.name))</h1>
            <form method="get" action="\(HTMLText.escaped(path))">
            <label>Filter <input name="filter" value="\(HTMLText.escaped(filter))" placeholder="name BEGINSWITH 'A'"></label>
            \(sortKey.map { "<input type=\"hidden\" name=\"sort\" value=\"\(HTMLText.escaped($0))\">" } ?? "")
            <input type="hidden" name="ascending" value="\(ascending ? 1 : 0)">
            <button>Filter</button>
            </form>
            <p class="summary">\(total) object\(total == 1 ? "" : "s")\(filter.isEmpty ? "" : " match")\
            \(rows.isEmpty ? "" : "; rows \(first + 1)–\(first + rows.count)"), page \(page) of \(pageCount)</p>
            \(pager(pageCount: pageCount))
            <table class="objects">
            <tr><th>Object</th>\(headers.joined())</tr>
            \(rows.joined(separator: "\n"))
            </table>
            \(pager(pageCount: pageCount))
            """)
    }

    /// The table's path.
    private var path: String { "/entity/" + HTMLText.urlComponent(entity.name) }

    /// A link to this table with some of its settings changed, escaped for an attribute.
    private func link(page: Int? = nil, sortKey: String? = nil, ascending: Bool? = nil) -> String {
        var items = ["page=\(page ?? self.page)"]
        if let key = sortKey ?? self.sortKey { items.append("sort=" + HTMLText.urlComponent(key)) }
        items.append("ascending=\((ascending ?? self.ascending) ? 1 : 0)")
        if !filter.isEmpty { items.append("filter=" + HTMLText.urlComponent(filter)) }
        return HTMLText.escaped(path + "?" + items.joined(separator: "&"))
    }

    /// A column header linking to the table sorted by its attribute (the other way round when it already is).
    private func header(for key: String) -> String {
        let isSorted = key == sortKey
        let mark = isSorted ? (ascending ? " ▲" : " ▼") : ""
        return "<th><a href=\"\(link(page: 1, sortKey: key, ascending: isSorted ? !ascending : true))\">"
            + "\(HTMLText.escaped(key))</a>\(mark)</th>"
    }

    /// Links to the first, previous, next and last pages.
    private func pager(pageCount: Int) -> String {
        var parts: [String] = []
        if page > 1 {
            parts.append("<a href=\"\(link(page: 1))\">first</a>")
            parts.append("<a rel=\"prev\" href=\"\(link(page: page - 1))\">previous</a>")
        }
        if page < pageCount {
            parts.append("<a rel=\"next\" href=\"\(link(page: page + 1))\">next</a>")
            parts.append("<a href=\"\(link(page: pageCount))\">last</a>")
        }
        return "<p class=\"pager\">\(parts.joined(separator: " "))</p>"
    }

    /// One object's row: a link to its page, its attributes, its to-one relationships as links and its
    /// to-many relationships as counts.
    private func row(_ object: ManagedObject, attributes: [AttributeDescription],
                     relationships: [RelationshipDescription]) throws -> String {
        var cells = ["<td>\(ObjectPage.link(to: object))</td>"]
        for attribute in attributes {
            cells.append("<td>\(ValueHTML.cell(try object.value(forKey: attribute.name)))</td>")
        }
        for relationship in relationships {
            let related = StoreBrowser.relatedObjects(try object.value(forKey: relationship.name))
            if relationship.isToMany {
                cells.append("<td>\(related.count)</td>")
            } else {
                cells.append("<td>\(related.first.map { ObjectPage.link(to: $0) } ?? ValueHTML.text(nil))</td>")
            }
        }
        return "<tr>\(cells.joined())</tr>"
    }
}
