import OpenCoreData

/// `/object/ENTITY/PK`: every attribute of one object (binary data as its size and first bytes, images as
/// images, transformable values as their description) and its relationships as links to the related
/// objects (a to-many's first ``StoreBrowser/relatedObjectLimit``, then how many more), and, when the store
/// keeps persistent history, the object's changes.
struct ObjectPage {
    /// The object's entity, as the path names it.
    let entity: EntityDescription
    /// The object's primary key (`Z_PK`).
    let primaryKey: Int64

    /// Reads the page's path components.
    ///
    /// - Throws: ``BrowserError`` (404) for a primary key that is not a positive whole number.
    init(entity: EntityDescription, primaryKey text: String) throws {
        guard let primaryKey = Int64(text), primaryKey > 0 else {
            throw BrowserError.notFound("“\(text)” is not an object number of \(entity.name).")
        }
        self.entity = entity
        self.primaryKey = primaryKey
    }

    /// The path of `object`'s page.
    static func path(of object: ManagedObject) -> String {
        "/object/\(HTMLText.urlComponent(object.objectID.entity.name))/\(object.objectID.primaryKey)"
    }

    /// A link to `object`'s page, reading `Entity 12`.
    static func link(to object: ManagedObject) -> String {
        "<a href=\"\(HTMLText.escaped(path(of: object)))\">"
            + "\(HTMLText.escaped(object.objectID.entity.name)) \(object.objectID.primaryKey)</a>"
    }

    /// The page's HTML.
    ///
    /// - Throws: ``BrowserError`` (404) when the store has no such object; the store's error when a value
    ///   cannot be read.
    func html(_ browser: StoreBrowser, refusal: ObjectEdit.Refusal? = nil) throws -> String {
        let title = "\(entity.name) \(primaryKey)"
        let body = try browser.withContext { context -> String in
            let object = try browser.object(of: entity, primaryKey: primaryKey, in: context)
            let shown = object.entity
            var rows: [String] = []
            for attribute in EntityTablePage.attributes(of: shown) {
                let value = try object.value(forKey: attribute.name)
                var cell = ValueHTML.full(value)
                if browser.isWritable, AttributeText.isEditable(attribute) {
                    let failed = refusal?.field == attribute.name ? refusal : nil
                    cell = editForm(attribute, text: failed?.entered ?? AttributeText.text(of: value), browser: browser)
                        + (failed.map { "<p class=\"error field-error\" data-key=\"\(HTMLText.escaped(attribute.name))\">\(HTMLText.escaped($0.message))</p>" } ?? "")
                }
                rows.append("<tr><th>\(HTMLText.escaped(attribute.name))</th>"
                    + "<td class=\"type\">\(HTMLText.escaped(attribute.attributeType.rawValue))</td>"
                    + "<td>\(cell)</td></tr>")
            }
            for relationship in EntityTablePage.relationships(of: shown) {
                let related = StoreBrowser.relatedObjects(try object.value(forKey: relationship.name))
                rows.append("<tr><th>\(HTMLText.escaped(relationship.name))</th>"
                    + "<td class=\"type\">\(relationship.isToMany ? "to-many " : "to-one ")"
                    + "\(HTMLText.escaped(relationship.destinationEntityName))</td>"
                    + "<td>\(list(related, toMany: relationship.isToMany))</td></tr>")
            }
            let objectError = refusal.flatMap { $0.field == nil ? "<p class=\"error object-error\">\(HTMLText.escaped($0.message))</p>" : nil } ?? ""
            let delete = browser.isWritable ? """
                <form method="post" action="\(HTMLText.escaped(Self.path(of: object)))/delete" class="delete">\(tokenField(browser))<button type="submit">Delete this object</button></form>
                """ : ""
            return """
                <h1>\(HTMLText.escaped(shown.name)) \(primaryKey)</h1>
                <p><a href="/entity/\(HTMLText.escaped(HTMLText.urlComponent(shown.name)))">all \(HTMLText.escaped(shown.name)) objects</a></p>
                \(objectError)
                <table class="object">
                \(rows.joined(separator: "\n"))
                </table>
                \(delete)
                \(browser.keepsHistory ? try history(of: object, in: context) : "")
                """
        }
        return PageLayout.document(title: title, storeName: browser.storeName, writable: browser.isWritable, body: body)
    }

    /// The object's changes as the store's history holds them, newest first (the last
    /// ``StoreBrowser/historyLimit``): when, by whom (author, context, program), and what changed.
    ///
    /// - Throws: the store's error when its history cannot be read.
    private func history(of object: ManagedObject, in context: ManagedObjectContext) throws -> String {
        let request = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        request.changePredicate = try QueryPredicate(format: "entityName == %@ AND primaryKey == %@",
                                                     object.entity.name, object.objectID.primaryKey)
        let transactions = ((try context.execute(request) as? PersistentHistoryResult)?.transactions ?? [])
            .filter { !($0.changes ?? []).isEmpty }
        guard !transactions.isEmpty else {
            return "<h2>History</h2>\n<p class=\"history\">No change to this object is in the store's history.</p>"
        }
        let shown = transactions.suffix(StoreBrowser.historyLimit).reversed()
        let rows = shown.flatMap { transaction in
            (transaction.changes ?? []).map { change in
                let what: String
                switch change.changeType {
                case .insert: what = "inserted"
                case .delete: what = "deleted"
                case .update:
                    what = "updated " + (change.updatedProperties ?? []).sorted().map(HTMLText.escaped).joined(separator: ", ")
                }
                let who = [transaction.author, transaction.contextName, transaction.bundleID].compactMap { $0 }
                return "<tr><td>\(transaction.transactionNumber)</td><td>\(HTMLText.escaped(DateText.iso8601(transaction.timestamp)))</td>"
                    + "<td>\(what)</td><td>\(who.map(HTMLText.escaped).joined(separator: " · "))</td></tr>"
            }
        }
        let earlier = transactions.count - shown.count
        return """
            <h2>History</h2>
            <table class="history">
            <tr><th>Transaction</th><th>When</th><th>Change</th><th>By</th></tr>
            \(rows.joined(separator: "\n"))
            </table>
            \(earlier > 0 ? "<p class=\"history\">and \(earlier) earlier transaction\(earlier == 1 ? "" : "s")</p>" : "")
            """
    }

    /// The form that sets one attribute: the value as text, posted back to this page.
    private func editForm(_ attribute: AttributeDescription, text: String, browser: StoreBrowser) -> String {
        let action = "/object/\(HTMLText.urlComponent(entity.name))/\(primaryKey)"
        return "<form method=\"post\" action=\"\(HTMLText.escaped(action))\" class=\"edit\">\(tokenField(browser))"
            + "<input type=\"hidden\" name=\"key\" value=\"\(HTMLText.escaped(attribute.name))\">"
            + "<input name=\"value\" value=\"\(HTMLText.escaped(text))\" data-key=\"\(HTMLText.escaped(attribute.name))\">"
            + "<button type=\"submit\">Save</button></form>"
    }

    /// The hidden field carrying the server's form token (a form another site made cannot know it).
    private func tokenField(_ browser: StoreBrowser) -> String {
        "<input type=\"hidden\" name=\"token\" value=\"\(HTMLText.escaped(browser.formToken))\">"
    }

    /// Related objects as links: one for a to-one, a list capped at ``StoreBrowser/relatedObjectLimit``
    /// with how many more for a to-many.
    private func list(_ related: [ManagedObject], toMany: Bool) -> String {
        guard toMany else { return related.first.map { Self.link(to: $0) } ?? ValueHTML.text(nil) }
        guard !related.isEmpty else { return "none" }
        let shown = related.prefix(StoreBrowser.relatedObjectLimit).map { "<li>\(Self.link(to: $0))</li>" }
        let more = related.count - shown.count
        return "\(related.count) object\(related.count == 1 ? "" : "s")<ul class=\"related\">\(shown.joined())"
            + (more > 0 ? "<li>and \(more) more</li>" : "") + "</ul>"
    }
}
