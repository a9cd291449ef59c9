import Foundation
import OpenCoreData

/// `/entity/NAME?page=N&sort=KEY&ascending=1&filter=PREDICATE&section=KEY`: one page of an entity's objects
/// as a table, fetched with `fetchOffset` and `fetchLimit` (never the whole table), sortable by any
/// attribute, filtered by a predicate in the query language, and grouped into sections by an attribute's
/// value as a results controller groups them (each section's count from one grouped count).
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
    /// The attribute whose values group the rows into sections, if any.
    let sectionKey: String?
    /// At most this many sections are listed above the table.
    static let sectionListLimit = 100

    /// Reads the page's query.
    ///
    /// - Throws: ``BrowserError`` (400) for a page that is not a whole number from 1, or a sort or section
    ///   key that is not one of the entity's attributes.
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
        let sectionKey = query["section"].flatMap { $0.isEmpty ? nil : $0 }
        if let sectionKey, !Self.attributes(of: entity).contains(where: { $0.name == sectionKey }) {
            throw BrowserError.badRequest("\(entity.name) has no attribute “\(sectionKey)” to make sections of.")
        }
        self.sectionKey = sectionKey
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
        // Sections come in their key's order, as a results controller needs its first sort to be the section key.
        request.sortDescriptors = (sectionKey.map { [QuerySortDescriptor(key: $0, ascending: true)] } ?? [])
            + (sortKey.map { [QuerySortDescriptor(key: $0, ascending: ascending)] } ?? [])
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
        let (total, rows, sections) = try browser.withContext { context -> (Int, [String], [Section]) in
            do {
                let countRequest = FetchRequest<ManagedObject>(entityName: entity.name)
                countRequest.predicate = request.predicate
                let total = try context.count(for: countRequest)
                let sections = try sectionKey.map { try self.sections(key: $0, predicate: request.predicate, total: total, in: context) } ?? []
                var rows: [String] = []
                var lastSection: String?
                for object in try context.fetch(request) {
                    if let sectionKey {
                        let value = try object.value(forKey: sectionKey)
                        let shown = ValueHTML.cell(value)
                        if shown != lastSection {
                            let count = sections.first { $0.shown == shown }?.count
                            rows.append("<tr class=\"section\"><th colspan=\"\(1 + attributes.count + relationships.count)\">"
                                + "\(HTMLText.escaped(sectionKey)): \(shown)\(count.map { " (\($0))" } ?? "")</th></tr>")
                            lastSection = shown
                        }
                    }
                    rows.append(try row(object, attributes: attributes, relationships: relationships))
                }
                return (total, rows, sections)
            } catch let error as BrowserError {
                throw error
            } catch {
                throw BrowserError.badRequest("The store refused the filter “\(filter)”: \(error)")
            }
        }
        let pageCount = max(1, (total + StoreBrowser.pageSize - 1) / StoreBrowser.pageSize)
        let headers = attributes.map { header(for: $0.name) } + relationships.map { "<th>\(HTMLText.escaped($0.name))</th>" }
        let first = (page - 1) * StoreBrowser.pageSize
        let shownRows = rows.count { $0.hasPrefix("<tr><td>") }
        return PageLayout.document(title: entity.name, storeName: browser.storeName, writable: browser.isWritable, body: """
            <h1>\(HTMLText.escaped(entity.name))</h1>
            <form method="get" action="\(HTMLText.escaped(path))">
            <label>Filter <input name="filter" value="\(HTMLText.escaped(filter))" placeholder="name BEGINSWITH 'A'"></label>
            \(sortKey.map { "<input type=\"hidden\" name=\"sort\" value=\"\(HTMLText.escaped($0))\">" } ?? "")
            \(sectionKey.map { "<input type=\"hidden\" name=\"section\" value=\"\(HTMLText.escaped($0))\">" } ?? "")
            <input type="hidden" name="ascending" value="\(ascending ? 1 : 0)">
            <button>Filter</button>
            </form>
            <p class="summary">\(total) object\(total == 1 ? "" : "s")\(filter.isEmpty ? "" : " match")\
            \(shownRows == 0 ? "" : "; rows \(first + 1)–\(first + shownRows)"), page \(page) of \(pageCount)</p>
            \(sectionChooser(attributes))
            \(sectionList(sections))
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
    private func link(page: Int? = nil, sortKey: String? = nil, ascending: Bool? = nil, filter: String? = nil,
                      sectionKey: String?? = nil) -> String {
        var items = ["page=\(page ?? self.page)"]
        if let key = sortKey ?? self.sortKey { items.append("sort=" + HTMLText.urlComponent(key)) }
        items.append("ascending=\((ascending ?? self.ascending) ? 1 : 0)")
        let filter = filter ?? self.filter
        if !filter.isEmpty { items.append("filter=" + HTMLText.urlComponent(filter)) }
        if let key = sectionKey ?? self.sectionKey { items.append("section=" + HTMLText.urlComponent(key)) }
        return HTMLText.escaped(path + "?" + items.joined(separator: "&"))
    }

    /// A column header linking to the table sorted by its attribute (the other way round when it already is).
    private func header(for key: String) -> String {
        let isSorted = key == sortKey
        let mark = isSorted ? (ascending ? " ▲" : " ▼") : ""
        return "<th><a href=\"\(link(page: 1, sortKey: key, ascending: isSorted ? !ascending : true))\">"
            + "\(HTMLText.escaped(key))</a>\(mark)</th>"
    }

    /// One section: its value as the table shows it, the predicate that selects it, and its object count.
    struct Section {
        var shown: String
        var filter: String
        var count: Int
    }

    /// The sections of the rows `predicate` selects, in the key's order, each with its count: one grouped
    /// count for the values (nil's objects are the total less the others', since a count of a key skips nil).
    private func sections(key: String, predicate: QueryPredicate?, total: Int, in context: ManagedObjectContext) throws -> [Section] {
        let request = FetchRequest<[String: Any]>(dictionariesOf: entity.name)
        request.predicate = predicate
        request.propertiesToFetch = [key, ExpressionDescription(name: "count", expression: try QueryExpression(format: "count:(%K)", key),
                                                                 resultType: .integer64)]
        request.propertiesToGroupBy = [key]
        request.sortDescriptors = [QuerySortDescriptor(key: key, ascending: true)]
        var sections: [Section] = []
        var counted = 0
        for row in try context.fetch(request) {
            guard let value = row[key], let count = row["count"] as? Int64, count > 0 else { continue }
            counted += Int(count)
            sections.append(Section(shown: ValueHTML.cell(value), filter: try QueryPredicate(format: "%K == %@", key, value).predicateFormat,
                                    count: Int(count)))
        }
        if total > counted {
            // nil sorts first, as the store orders it.
            sections.insert(Section(shown: ValueHTML.cell(nil), filter: "\(key) == nil", count: total - counted), at: 0)
        }
        return sections
    }

    /// The form that picks the attribute whose values make the sections.
    private func sectionChooser(_ attributes: [AttributeDescription]) -> String {
        let options = ["<option value=\"\"\(sectionKey == nil ? " selected" : "")>none</option>"] + attributes.map { attribute in
            "<option value=\"\(HTMLText.escaped(attribute.name))\"\(attribute.name == sectionKey ? " selected" : "")>"
                + "\(HTMLText.escaped(attribute.name))</option>"
        }
        return """
            <form method="get" action="\(HTMLText.escaped(path))" class="sections">
            \(filter.isEmpty ? "" : "<input type=\"hidden\" name=\"filter\" value=\"\(HTMLText.escaped(filter))\">")
            \(sortKey.map { "<input type=\"hidden\" name=\"sort\" value=\"\(HTMLText.escaped($0))\">" } ?? "")
            <input type="hidden" name="ascending" value="\(ascending ? 1 : 0)">
            <label>Sections by <select name="section">\(options.joined())</select></label> <button>Show</button>
            </form>
            """
    }

    /// The sections with their counts, each linking to the table filtered to it (the first
    /// ``sectionListLimit``, then how many more).
    private func sectionList(_ sections: [Section]) -> String {
        guard let sectionKey, !sections.isEmpty else { return "" }
        let listed = sections.prefix(Self.sectionListLimit).map { section in
            let filter = self.filter.isEmpty ? section.filter : "(\(self.filter)) AND \(section.filter)"
            return "<li><a href=\"\(link(page: 1, filter: filter, sectionKey: .some(nil)))\">\(section.shown)</a> \(section.count)</li>"
        }
        let more = sections.count - listed.count
        return "<p class=\"summary\">\(sections.count) section\(sections.count == 1 ? "" : "s") by \(HTMLText.escaped(sectionKey))</p>"
            + "<ul class=\"sections\">\(listed.joined())\(more > 0 ? "<li>and \(more) more</li>" : "")</ul>"
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
