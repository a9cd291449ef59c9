import OpenCoreData

/// `/`: the store (its path or redacted URL, and its model), each entity with its row count linking to its
/// table (`live.js` keeps the counts current), and the model's diagram.
enum IndexPage {
    /// The page's HTML.
    ///
    /// - Throws: the store's error when an entity cannot be counted.
    static func html(_ browser: StoreBrowser) throws -> String {
        let entities = browser.model.entities.sorted { $0.name < $1.name }
        let counts = try browser.counts()
        let rows = entities.map { entity -> String in
            let count = counts[entity.name] ?? 0
            let parent = entity.superentity.map { " : " + HTMLText.escaped($0.name) } ?? ""
            return "<tr><td><a href=\"/entity/\(HTMLText.escaped(HTMLText.urlComponent(entity.name)))\">"
                + "\(HTMLText.escaped(entity.name))</a>\(parent)\(entity.isAbstract ? " (abstract)" : "")</td>"
                + "<td class=\"count\" data-entity=\"\(HTMLText.escaped(entity.name))\">\(count)</td></tr>"
        }
        return PageLayout.document(title: browser.storeName, storeName: browser.storeName, writable: browser.isWritable, body: """
            <h1>\(HTMLText.escaped(browser.storeName))</h1>
            <p>Model: \(HTMLText.escaped(browser.modelName))</p>
            <h2>Entities</h2>
            <table class="entities"><tr><th>Entity</th><th>Objects</th></tr>
            \(rows.joined(separator: "\n"))
            </table>
            <h2>Model</h2>
            <p><img class="diagram" src="/model.svg" alt="The model's entities and relationships"></p>
            """)
    }
}
