/// The frame every page of `ocd serve` shares: the document head with its small style sheet, a header
/// naming the store, a banner `live.js` fills when another process saves to the store, and the page's
/// body. Plain HTML and CSS, and that one script of the server's own.
enum PageLayout {
    /// A whole HTML document titled `title` (escaped here) around `body` (HTML already escaped by its maker).
    static func document(title: String, storeName: String, writable: Bool = false, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>\(HTMLText.escaped(title)) — ocd serve</title>
        <style>\(styleSheet)</style>
        <script src="/live.js" defer></script>
        </head>
        <body>
        <header><a href="/">\(HTMLText.escaped(storeName))</a> <span class="note">\(writable ? "read-write" : "read-only")</span></header>
        <p id="live-change" class="live" hidden>Saved elsewhere since this page was loaded: <span class="what"></span>. <a href="">Reload</a></p>
        <main>
        \(body)
        </main>
        </body>
        </html>

        """
    }

    /// An error page: the status and the message naming the culprit.
    static func error(_ error: BrowserError, storeName: String) -> String {
        document(title: "Error \(error.status)", storeName: storeName, body: """
            <h1>Error \(error.status)</h1>
            <p class="error">\(HTMLText.escaped(error.message))</p>
            """)
    }

    /// The inline style sheet: readable tables, monospace values, nothing fetched from elsewhere.
    static let styleSheet = """
        body{font-family:system-ui,sans-serif;margin:0;color:#222}
        header{background:#2d3e50;color:#fff;padding:.6em 1em}header a{color:#fff;font-weight:600}
        main{padding:1em}.note{color:#9ab;font-size:.85em;margin-left:1em}
        table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccd;padding:.25em .5em;text-align:left;vertical-align:top}
        th{background:#eef1f5}td{font-family:ui-monospace,monospace;font-size:.9em}
        .nil{color:#999;font-style:italic}.bytes{color:#666}.error{color:#a00;font-weight:600}
        .pager a,.pager span{margin-right:1em}img.stored{max-width:320px;max-height:320px;border:1px solid #ccd}
        img.diagram{max-width:100%;border:1px solid #ccd}
        form.edit{display:flex;gap:.4em}form.edit input[name=value]{min-width:20em;font-family:ui-monospace,monospace}.field-error{margin:.2em 0 0}
        tr.changed td{background:#fff3c4}
        .live{background:#fff3c4;border-bottom:1px solid #e0c060;margin:0;padding:.4em 1em}[hidden]{display:none}input[name=filter]{width:40em;font-family:monospace}
        """
}
