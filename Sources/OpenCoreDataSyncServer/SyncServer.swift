import Foundation
import Hummingbird
import Logging
import OpenCoreData
import OpenCoreDataSync
import ServiceLifecycle
import Synchronization

/// The sync server (`ocd sync serve`; docs/SYNC.md, "The server"): push and pull over HTTP, news as
/// server-sent events, one zone per user, bearer tokens signed with the server's key.
///
/// ```swift
/// let server = try await SyncServer(SyncServerConfiguration(store: "sync.sqlite", model: model, key: key))
/// let port = try await server.start()
/// …
/// await server.stop()
/// ```
public final class SyncServer: Sendable {
    private let configuration: SyncServerConfiguration
    let store: SyncServerStore
    let tokens: SyncTokens
    let hub = SyncEventHub()
    private let running = Mutex<(task: Task<Void, Error>?, group: ServiceGroup?, observer: ObserverBox?)>((nil, nil, nil))

    /// Opens the server's state; nothing listens until ``start()``.
    ///
    /// - Throws: ``SyncTokens/Failure/keyTooShort(bytes:)``; ``StoreError`` when the state cannot be opened.
    public init(_ configuration: SyncServerConfiguration) async throws {
        self.configuration = configuration
        tokens = try await SyncTokens(key: configuration.key)
        store = try SyncServerStore(location: configuration.store, appModel: configuration.model)
    }

    /// Starts listening; returns the port once the server accepts connections.
    ///
    /// - Throws: what Hummingbird throws when the address cannot be bound.
    public func start() async throws -> Int {
        let routes = SyncServerRoutes(server: self)
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in await routes.respond(to: request) },
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                    serverName: "ocd sync serve"),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            })
        // A service group of one, so that stopping is a graceful shutdown (open responses finish) rather than
        // a cancellation.
        let group = ServiceGroup(services: [application], gracefulShutdownSignals: [], logger: Logger(label: "ocd sync serve"))
        let task = Task { try await group.run() }
        // Commits made elsewhere (another instance on the same database, another process on the same file)
        // move zones' tokens too: their listeners hear of it.
        let observer = NotificationCenter.default.addObserver(forName: PersistentStoreCoordinator.remoteChangeNotification,
                                                              object: store.coordinator, queue: nil) { [hub, store] _ in
            for zone in hub.zones { if let token = try? store.token(zone: zone) { hub.publish(zone: zone, token: token) } }
        }
        running.withLock { $0 = (task, group, ObserverBox(observer)) }
        for await port in portStream { return port }
        _ = try await task.value
        throw CancellationError()
    }

    /// Runs until the task running it is cancelled or the process is asked to stop (SIGTERM, SIGINT), then
    /// stops. For `ocd sync serve`.
    ///
    /// - Throws: what ``start()`` throws.
    public func run(onListening: @Sendable (Int) -> Void) async throws {
        let port = try await start()
        onListening(port)
        let stop = AsyncStream<Void>.makeStream()
        let sources = [SIGTERM, SIGINT].map { stopSignal in
            signal(stopSignal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: stopSignal)
            source.setEventHandler { stop.continuation.finish() }
            source.resume()
            return source
        }
        await withTaskCancellationHandler {
            for await _ in stop.stream {}
        } onCancel: {
            stop.continuation.finish()
        }
        sources.forEach { $0.cancel() }
        await self.stop()
    }

    /// Stops listening, ends open event streams, and closes the state.
    public func stop() async {
        let (task, group, observer) = running.withLock { state in
            defer { state = (nil, nil, nil) }
            return state
        }
        if let observer { NotificationCenter.default.removeObserver(observer.observer) }
        hub.finish()
        await group?.triggerGracefulShutdown()
        _ = try? await task?.value
        store.close()
    }
}

/// A notification observer kept to be removed later. NotificationCenter's tokens are not Sendable; this one
/// is only handed back to `removeObserver`.
private final class ObserverBox: @unchecked Sendable {
    let observer: any NSObjectProtocol
    init(_ observer: any NSObjectProtocol) { self.observer = observer }
}
