import Foundation
import Hummingbird
import Synchronization

/// Answers `ocd serve`'s requests: GET and HEAD (and with `--read-write` the POSTs of its own forms; 405
/// otherwise), from no other origin than the server's own (403 for a request whose `Origin` names another,
/// or on loopback whose `Host` names another), each path to its page, every failure as an error page with
/// its status.
final class BrowserRoutes: Sendable {
    /// The store the pages show.
    let browser: StoreBrowser
    /// The store's changes made elsewhere, for `/events`.
    let feed: ChangeFeed
    /// The host the server listens on, as `--host` gave it.
    let host: String
    /// The port the server listens on, known once it runs (`--port 0` lets the system choose).
    let port = Mutex<Int>(0)

    init(browser: StoreBrowser, feed: ChangeFeed, host: String) {
        self.browser = browser
        self.feed = feed
        self.host = host
    }

    /// The names of loopback, as a `Host` header or an origin spells them.
    private static let loopbackNames = ["127.0.0.1", "localhost", "[::1]"]

    /// Whether the server listens on loopback only.
    private var isLoopback: Bool { Self.loopbackNames.contains(host) || host == "::1" }

    /// The `host:port` values a request to this server carries in its `Host` header: the host it was
    /// given, and for a loopback host each name of loopback.
    var ownHosts: Set<String> {
        let port = port.withLock { $0 }
        let hosts = isLoopback ? Self.loopbackNames : [host.contains(":") ? "[\(host)]" : host]
        return Set(hosts.map { "\($0):\(port)" })
    }

    /// The origins a page of this server's own is served from.
    var ownOrigins: Set<String> { Set(ownHosts.map { "http://" + $0 }) }

    /// The response to `request`; never throws: every failure becomes an error page.
    func respond(to request: Request) async -> Response {
        let isEdit = request.method == .post && browser.isWritable
        guard request.method == .get || request.method == .head || isEdit else {
            var response = page(.init(status: 405, message: browser.isWritable
                ? "Only GET, HEAD and POST are answered."
                : "Only GET and HEAD are answered: the browser is read-only (ocd serve --read-write edits)."))
            response.headers[.allow] = browser.isWritable ? "GET, HEAD, POST" : "GET, HEAD"
            return response
        }
        if let origin = request.headers[.origin], !ownOrigins.contains(origin) {
            return page(.init(status: 403, message: "Requests from another origin (\(origin)) are refused."))
        }
        // A browser sends the origin with every form it posts; a post without one did not come from a page.
        if isEdit, request.headers[.origin] == nil {
            return page(.init(status: 403, message: "A change must come from one of this server's pages (the request names no origin)."))
        }
        // On loopback, a request for another host name is a page of another site whose name was pointed at
        // this machine (DNS rebinding): its script would read the store as if it were its own.
        let requestedHost = request.head.authority ?? ""
        if isLoopback, !ownHosts.contains(requestedHost.lowercased()) {
            return page(.init(status: 403, message: "Requests for another host (\(requestedHost)) are refused."))
        }
        if isEdit { return await edit(request) }
        let response = route(request)
        return request.method == .head ? response.createHeadResponse() : response
    }

    /// The largest form body an edit accepts: one attribute's text and two short fields.
    private static let maximumFormBytes = 256 * 1024

    /// A POST from an object page's form (`--read-write`): `/object/ENTITY/PK` sets an attribute,
    /// `/object/ENTITY/PK/delete` deletes the object. On success it redirects (303) to the object's page, or
    /// after a delete to its entity's table; a refusal shows the object page again with the message on its
    /// field (422).
    private func edit(_ request: Request) async -> Response {
        let components = request.uri.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let path = components.compactMap { $0.removingPercentEncoding }
        do {
            guard path.count == components.count, path.count == 3 || (path.count == 4 && path[3] == "delete"),
                  path[0] == "object" else {
                throw BrowserError.notFound("There is no form that posts to \(request.uri.path).")
            }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: Self.maximumFormBytes)
            } catch {
                throw BrowserError(status: 413, message: "A form is at most \(Self.maximumFormBytes) bytes.")
            }
            let form = BrowserQuery(String(buffer: body))
            guard let token = form["token"], Self.constantTimeEqual(token, browser.formToken) else {
                throw BrowserError(status: 403, message: "The form's token is missing or is not this server's: reload the page and try again.")
            }
            let entity = try browser.entity(named: path[1])
            let page = try ObjectPage(entity: entity, primaryKey: path[2])
            let action: ObjectEdit.Action
            if path.count == 4 {
                action = .delete
            } else {
                guard let key = form["key"], let text = form["value"] else {
                    throw BrowserError.badRequest("The form names no attribute or value.")
                }
                action = .set(key: key, text: text)
            }
            do {
                try ObjectEdit(entity: entity, primaryKey: page.primaryKey, action: action).apply(browser)
            } catch let refusal as ObjectEdit.Refusal {
                return Response(status: .unprocessableContent, headers: headers(contentType: "text/html; charset=utf-8"),
                                body: ResponseBody(byteBuffer: ByteBuffer(string: try page.html(browser, refusal: refusal))))
            }
            var fields = headers(contentType: "text/plain; charset=utf-8")
            fields[.location] = path.count == 4 ? "/entity/\(HTMLText.urlComponent(entity.name))"
                : "/object/\(HTMLText.urlComponent(entity.name))/\(page.primaryKey)"
            return Response(status: .seeOther, headers: fields)
        } catch let error as BrowserError {
            return self.page(error)
        } catch {
            return self.page(BrowserError(status: 500, message: "The change could not be saved: \(error)"))
        }
    }

    /// Compares two strings in time that depends on their lengths only, so the token cannot be guessed a
    /// character at a time by timing.
    private static func constantTimeEqual(_ left: String, _ right: String) -> Bool {
        let (a, b) = (Array(left.utf8), Array(right.utf8))
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The page a GET of `request`'s path asks for.
    private func route(_ request: Request) -> Response {
        let components = request.uri.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let path = components.compactMap { $0.removingPercentEncoding }
        let query = BrowserQuery(request.uri.query)
        do {
            guard path.count == components.count else { throw BrowserError.badRequest("The path is not valid UTF-8.") }
            switch path.count {
            case 1 where path[0] == "":
                return html(try IndexPage.html(browser))
            case 1 where path[0] == "events":
                return events()
            case 1 where path[0] == "live.js":
                return Response(status: .ok, headers: headers(contentType: "text/javascript; charset=utf-8"),
                                body: ResponseBody(byteBuffer: ByteBuffer(string: LiveScript.text)))
            case 1 where path[0] == "model.svg":
                return Response(status: .ok, headers: headers(contentType: "image/svg+xml; charset=utf-8"),
                                body: ResponseBody(byteBuffer: ByteBuffer(string: ModelDiagram(model: browser.model).svg())))
            case 2 where path[0] == "entity":
                return html(try EntityTablePage(entity: browser.entity(named: path[1]), query: query).html(browser))
            case 3 where path[0] == "object":
                return html(try ObjectPage(entity: browser.entity(named: path[1]), primaryKey: path[2]).html(browser))
            default:
                throw BrowserError.notFound("There is no page \(request.uri.path).")
            }
        } catch let error as BrowserError {
            return page(error)
        } catch {
            return page(BrowserError(status: 500, message: "The store could not be read: \(error)"))
        }
    }

    /// `/events`: a stream of server-sent events, one `change` event per commit noticed elsewhere (see
    /// ``ChangeFeed``), until the client goes or the server stops. It holds no read of the store open
    /// between events, so writers are never kept waiting.
    private func events() -> Response {
        let feed = self.feed
        return Response(status: .ok, headers: headers(contentType: "text/event-stream; charset=utf-8"),
                        body: ResponseBody { writer in
            // Subscribed before the first bytes go out: a client that has read them misses no change.
            let stream = feed.subscribe()
            try await writer.write(ByteBuffer(string: "retry: 1000\n: connected\n\n"))
            for await message in stream {
                try await writer.write(ByteBuffer(string: message.eventText))
            }
            try await writer.finish(nil)
        })
    }

    /// A 200 response with an HTML document.
    private func html(_ document: String) -> Response {
        Response(status: .ok, headers: headers(contentType: "text/html; charset=utf-8"),
                 body: ResponseBody(byteBuffer: ByteBuffer(string: document)))
    }

    /// An error page with the error's status.
    private func page(_ error: BrowserError) -> Response {
        Response(status: HTTPResponse.Status(code: error.status), headers: headers(contentType: "text/html; charset=utf-8"),
                 body: ResponseBody(byteBuffer: ByteBuffer(string: PageLayout.error(error, storeName: browser.storeName))))
    }

    /// The headers every response carries: its type, and a content security policy that lets no script run
    /// but the server's own file (`/live.js`, reading `/events`) and nothing load from elsewhere, should
    /// text ever slip through unescaped.
    private func headers(contentType: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.contentType] = contentType
        fields[.contentSecurityPolicy] = "default-src 'none'; script-src 'self'; connect-src 'self'; "
            + "style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'"
        fields[.xContentTypeOptions] = "nosniff"
        fields[.cacheControl] = "no-store"
        return fields
    }
}
