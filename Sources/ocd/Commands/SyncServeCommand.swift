import ArgumentParser
import Foundation
import OpenCoreData
import OpenCoreDataSyncServer

/// `ocd sync serve --store STORE|postgresql://… --model M --key-file K [--port P] [--host H]`: the sync server.
struct SyncServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve sync for clients of one model: push, pull and news over HTTP, one zone per user."
    )

    @Option(name: .long, help: "Where the server keeps its state: an SQLite file (made if missing) or a postgresql:// URL.")
    var store: String

    @Option(name: .long, help: "The app's model (.xcdatamodeld, .xcdatamodel, .momd, .mom); pushes are checked against it.")
    var model: String

    @Option(name: .long, help: "The signing key's file (ocd sync key writes one).")
    var keyFile: String

    @Option(name: .long, help: "The port to listen on (0: any free port).")
    var port = 8750

    @Option(name: .long, help: "The address to listen on; anything but loopback belongs behind TLS (docs/SYNC.md).")
    var host = "127.0.0.1"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard !host.isEmpty else { throw ValidationError("--host cannot be empty") }
    }

    func run() async throws {
        let key: Data
        do { key = try SyncTokens.readKeyFile(at: keyFile) } catch let failure as SyncTokens.Failure {
            throw OCDError(failure.description)
        }
        let model = try ModelLocator.load(modelPath: self.model)
        let server = try await SyncServer(SyncServerConfiguration(store: store, model: model, key: key, host: host, port: port))
        let host = self.host
        try await server.run { port in
            let shownHost = host.contains(":") ? "[\(host)]" : host
            Console.line("listening on http://\(shownHost):\(port)")
        }
    }
}
