import ArgumentParser
import Foundation
import Hummingbird
import OpenCoreData

/// `ocd serve <store>`: a read-only store browser (docs/SERVE.md) on a local web server: the entities with
/// their counts and the model's diagram, each entity as a paged, sortable, filterable table, each object
/// with its values and links along its relationships. Opens whatever `ocd inspect` opens.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Browse a store in a web browser (read-only unless --read-write): entities, tables, objects and the model's diagram.",
        discussion: "Listens on 127.0.0.1 unless --host says otherwise, and prints the address it serves on "
            + "(with --port 0 the system picks a free port). Stop it with Ctrl-C.")

    @Argument(help: "The store file, or a postgresql:// URL (with --model, or ocd's own model it was written by).")
    var store: String

    @Option(name: .long, help: "The model (.xcdatamodeld, .xcdatamodel, .momd, .mom); optional for stores ocd wrote or that carry their model.")
    var model: String?

    @Option(name: .long, help: "The port to listen on (0: any free port).")
    var port = 8046

    @Option(name: .long, help: "The address to listen on; anything but loopback lets other machines read the store.")
    var host = "127.0.0.1"

    @Flag(name: .long, help: "Offer forms that edit attributes and delete objects (validated by the model; off by default).")
    var readWrite = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard !host.isEmpty else { throw ValidationError("--host cannot be empty") }
    }

    func run() async throws {
        let location = try StoreLocation(store)
        // Watched, still read-only: commits made elsewhere reach open pages through `/events`.
        let (opened, modelName) = try OpenedStore.openFindingModel(location, modelPath: model, watch: true, readOnly: !readWrite)
        defer { opened.close() }
        let host = self.host
        var browser = StoreBrowser(opened: opened, modelName: modelName, storeName: opened.displayName)
        browser.isWritable = readWrite
        browser.keepsHistory = try opened.keepsHistory(at: location)
        browser.formToken = (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }.joined()
        let feed = ChangeFeed(browser: browser)
        let watching = try feed.start()
        defer {
            watching.cancel()
            feed.finish()
        }
        // A stopping server waits for its open responses; an event stream never ends by itself, so the
        // signals that stop the server end the streams first.
        let stopSignals = [SIGTERM, SIGINT].map { stopSignal in
            // Left to the dispatch sources (the server's own watch of these signals works the same way).
            signal(stopSignal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: stopSignal)
            source.setEventHandler { feed.finish() }
            source.resume()
            return source
        }
        defer { stopSignals.forEach { $0.cancel() } }
        let routes = BrowserRoutes(browser: browser, feed: feed, host: host)
        let application = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in await routes.respond(to: request) },
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "ocd serve"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                routes.port.withLock { $0 = port }
                let shownHost = host.contains(":") ? "[\(host)]" : host
                Console.line("Serving \(opened.displayName) on http://\(shownHost):\(port)/ (\(readWrite ? "read-write" : "read-only"); Ctrl-C stops)")
            })
        try await application.runService()
    }
}
