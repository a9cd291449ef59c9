import Foundation
import Hummingbird
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenCoreData
import OpenCoreDataSync
import OpenCoreDataSyncServer

// Sync (docs/SYNC.md) over loopback HTTP against a real sync server in this process: moving changes from one
// replica to another against the same rows sent as JSON over HTTP into SQLite, how soon a save on one device
// reaches another, and several clients pushing at once.

enum SyncScenarios {
    static let all: [Scenario] = [pushPull, latency, concurrentClients]

    /// The changes one push-and-pull run moves (fewer for a smaller size, so that the smoke run stays short).
    static func changes(_ size: Int) -> Int { min(size, 10_000) }

    /// Runs `body` to its end from synchronous code (the harness's timed bodies are synchronous).
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Shared<Result<T, Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try result.value!.get()
    }

    /// A sync server on a free loopback port with its state in a fresh file; returns it, its URL and a token.
    static func startServer(_ fixtures: Fixtures, label: String) throws -> (SyncServer, URL, String) {
        let state = fixtures.freshURL("sync-server-\(label)").path
        let key = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) })
        let model = fixtures.model
        return try blocking {
            let server = try await SyncServer(SyncServerConfiguration(store: state, model: model, key: key))
            let port = try await server.start()
            let token = try await SyncTokens(key: key).token(for: "bench", lifetime: .seconds(3600))
            return (server, URL(string: "http://127.0.0.1:\(port)")!, token)
        }
    }

    /// A replica: a container on a fresh store with history on.
    static func replica(_ fixtures: Fixtures, _ label: String) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Bench", managedObjectModel: fixtures.model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(
            url: fixtures.freshURL("sync-\(label)"), type: .sqlite, options: StoreOptions(persistentHistoryTracking: true))]
        try container.loadPersistentStores()
        return container
    }

    /// Inserts items `range` in one save.
    static func insertItems(_ container: PersistentContainer, _ range: ClosedRange<Int>) throws {
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in range {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue(Seed.name(i), forKey: "name")
                try item.setValue(Date(timeIntervalSinceReferenceDate: Seed.createdAt(i)), forKey: "createdAt")
                try item.setValue(Seed.group(i), forKey: "group")
            }
            try context.save()
        }
    }

    static func count(_ container: PersistentContainer) throws -> Int {
        let context = container.newBackgroundContext()
        return try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }
    }

    /// (sync-1) Push and pull.
    static let pushPull = Scenario(
        name: "sync-push-pull", targetRatio: 2.0,
        summary: "Replica A holds min(N, 10,000) new Items (one save, history on); timed: A's sync engine pushes them to a sync server on loopback (SQLite state) and replica B's pulls and applies them. Raw: the same rows as JSON over HTTP to a minimal Hummingbird server that inserts them into SQLite in one transaction, then read back as JSON and inserted into a second SQLite file."
    ) { size, fixtures in
        let moved = changes(size)
        let ours: PreparedRun = {
            let (server, url, token) = try startServer(fixtures, label: "push-pull")
            let (a, b) = (try replica(fixtures, "a"), try replica(fixtures, "b"))
            try insertItems(a, 1...moved)
            let options = SyncOptions(pushBatchSize: 500, pullPageSize: 1000)
            let (engineA, engineB) = (try SyncEngine(container: a, server: url, token: token, options: options),
                                      try SyncEngine(container: b, server: url, token: token, options: options))
            return {
                try blocking {
                    try await engineA.sync()
                    try await engineB.sync()
                    await server.stop()
                }
                return try count(b)
            }
        }
        let raw: PreparedRun = {
            let baseline = try JSONRowServer(fixtures: fixtures)
            let rows = (1...moved).map { JSONRowServer.Row(name: Seed.name($0), createdAt: Seed.createdAt($0), group: Seed.group($0)) }
            let body = try JSONEncoder().encode(rows)
            let destination = try RawConnection(path: fixtures.freshURL("sync-raw-b").path)
            try destination.execute("CREATE TABLE item (name TEXT, createdAt REAL, grp INTEGER)")
            return {
                try blocking { try await baseline.post(body) }
                let pulled = try JSONDecoder().decode([JSONRowServer.Row].self, from: try blocking { try await baseline.get() })
                try JSONRowServer.insert(pulled, into: destination)
                baseline.stop()
                return pulled.count
            }
        }
        return ScenarioRun(rows: moved, ours: ours, raw: raw, note: "\(moved) changes moved A → server → B per timed run")
    }

    /// (sync-2) A save on one device reaching another.
    static let latency = Scenario(
        name: "sync-latency", targetRatio: nil,
        summary: "Two replicas with running sync engines (news by server-sent events) on one server on loopback: A saves one new Item 20 times per timed run. latency_ms: from just before A's save to B's sync engine saving it into B's store, which is when B's contexts and results controllers hear of it (p99, target ≤ 100 ms; median beside it). No raw side."
    ) { _, fixtures in
        let saves = 20
        let figures = Figures([FigureSpec("latency_ms", .p99, target: 100), FigureSpec("latency_median_ms", .median)])
        return ScenarioRun(rows: saves, ours: {
            let (server, url, token) = try startServer(fixtures, label: "latency")
            let (a, b) = (try replica(fixtures, "latency-a"), try replica(fixtures, "latency-b"))
            let (engineA, engineB) = (try SyncEngine(container: a, server: url, token: token),
                                      try SyncEngine(container: b, server: url, token: token))
            let arrived = Shared<Int>(0)
            let signal = DispatchSemaphore(value: 0)
            let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification,
                                                                  object: nil, queue: nil) { note in
                guard let context = note.object as? ManagedObjectContext, context.persistentStoreCoordinator === b.persistentStoreCoordinator,
                      let saved = note.userInfo?[ManagedObjectContext.didSaveKey] as? ContextDidSave else { return }
                arrived.update { $0 += saved.insertedObjectIDs.count }
                signal.signal()
            }
            try blocking { await engineA.start(); await engineB.start() }
            return {
                defer {
                    NotificationCenter.default.removeObserver(observer)
                    try? blocking { await engineA.stop(); await engineB.stop(); await server.stop() }
                }
                for serial in 1...saves {
                    let name = "latency \(serial)"
                    let start = monotonicSeconds()
                    let context = a.newBackgroundContext()
                    try context.performAndWait {
                        try context.insertNewObject(forEntityName: "Item").setValue(name, forKey: "name")
                        try context.save()
                    }
                    let deadline = DispatchTime.now() + 10
                    while arrived.value < serial {
                        if signal.wait(timeout: deadline) == .timedOut { throw LatchTimeout(what: "B's copy of \(name)", seconds: 10) }
                    }
                    let now = monotonicSeconds()
                    figures.recordMilliseconds("latency_ms", from: start, to: now)
                    figures.recordMilliseconds("latency_median_ms", from: start, to: now)
                }
                return saves
            }
        }, raw: nil, note: "\(saves) saves per timed run; the time column is their total", figures: figures)
    }

    /// (sync-3) Eight clients pushing at once.
    static let concurrentClients = Scenario(
        name: "sync-8-clients", targetRatio: nil,
        summary: "Eight replicas each holding min(N, 10,000)/8 new Items push at once to one server on loopback (SQLite state); then one more replica pulls everything and must hold every Item: nothing lost. changes_per_second: the pushed changes over the time until the last push returned. No raw side."
    ) { size, fixtures in
        let perClient = max(1, changes(size) / 8)
        let figures = Figures([FigureSpec("changes_per_second", .median, unit: "/s")])
        return ScenarioRun(rows: perClient * 8, ours: {
            let (server, url, token) = try startServer(fixtures, label: "eight")
            var engines: [SyncEngine] = []
            for client in 0..<8 {
                let container = try replica(fixtures, "eight-\(client)")
                try insertItems(container, (client * perClient + 1)...((client + 1) * perClient))
                engines.append(try SyncEngine(container: container, server: url, token: token, options: SyncOptions(pushBatchSize: 200)))
            }
            let reader = try replica(fixtures, "eight-reader")
            let readerEngine = try SyncEngine(container: reader, server: url, token: token, options: SyncOptions(pullPageSize: 1000))
            let pushing = engines
            return {
                let start = monotonicSeconds()
                try blocking {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for engine in pushing { group.addTask { try await engine.sync() } }
                        try await group.waitForAll()
                    }
                }
                figures.record("changes_per_second", Double(perClient * 8) / max(monotonicSeconds() - start, 1e-9))
                try blocking { try await readerEngine.sync(); await server.stop() }
                let held = try count(reader)
                guard held == perClient * 8 else {
                    throw LatchTimeout(what: "all \(perClient * 8) pushed Items on the reader (it holds \(held))", seconds: 0)
                }
                return held
            }
        }, raw: nil, note: "8 clients × \(perClient) changes", figures: figures)
    }
}

/// The baseline of sync-push-pull: rows as JSON over HTTP into SQLite, the least a sync service does.
final class JSONRowServer: @unchecked Sendable {
    struct Row: Codable, Sendable {
        var name: String
        var createdAt: Double
        var group: Int64
    }

    /// The connection, used under `lock` only (the server answers on several threads).
    private final class Guarded: @unchecked Sendable {
        let connection: RawConnection
        let lock = NSLock()
        init(_ connection: RawConnection) { self.connection = connection }
    }

    private let guarded: Guarded
    private let task: Task<Void, Error>
    let url: URL

    init(fixtures: Fixtures) throws {
        let connection = try RawConnection(path: fixtures.freshURL("sync-raw-server").path)
        try connection.execute("CREATE TABLE item (name TEXT, createdAt REAL, grp INTEGER)")
        let guarded = Guarded(connection)
        self.guarded = guarded
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            responder: CallbackResponder<BasicRequestContext> { request, _ in
                if request.method == .post {
                    let body = try await request.body.collect(upTo: 64 << 20)
                    let rows = try JSONDecoder().decode([Row].self, from: Data(buffer: body))
                    try guarded.lock.withLock { try JSONRowServer.insert(rows, into: guarded.connection) }
                    return Response(status: .ok)
                }
                let rows: [Row] = try guarded.lock.withLock {
                    let select = try guarded.connection.prepare("SELECT name, createdAt, grp FROM item")
                    var rows: [Row] = []
                    while try select.step() { rows.append(Row(name: select.string(0) ?? "", createdAt: select.double(1), group: select.int64(2))) }
                    return rows
                }
                return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(data: try JSONEncoder().encode(rows))))
            },
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: "bench rows"),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            // Stopped by cancelling its task, which Hummingbird would log as an error after every run.
            logger: { var logger = Logger(label: "bench rows"); logger.logLevel = .critical; return logger }())
        task = Task { try await application.run() }
        let port = try SyncScenarios.blocking { for await port in ports { return port }; return 0 }
        url = URL(string: "http://127.0.0.1:\(port)/rows")!
    }

    /// Inserts `rows` in one transaction with one prepared statement.
    static func insert(_ rows: [Row], into connection: RawConnection) throws {
        try connection.execute("BEGIN")
        let insert = try connection.prepare("INSERT INTO item (name, createdAt, grp) VALUES (?, ?, ?)")
        for row in rows {
            insert.bind(1, row.name)
            insert.bind(2, row.createdAt)
            insert.bind(3, row.group)
            try insert.run()
        }
        try connection.execute("COMMIT")
    }

    func post(_ body: Data) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = body
        _ = try await URLSession.shared.data(for: request)
    }

    func get() async throws -> Data {
        try await URLSession.shared.data(for: URLRequest(url: url)).0
    }

    func stop() { task.cancel() }
}
