import Foundation
import GRDB
import Testing
@testable import OpenCoreData
#if canImport(Glibc)
import Glibc
#endif

extension Reliability {
    /// Sync under SIGKILL (docs/SYNC.md, "What proves it"): a pushing client, a pulling client and the
    /// server itself (`ocd sync serve`, real processes) killed at random moments, 100 kills in all. Afterwards
    /// nothing a client saved is missing, nothing is there twice, and both stores pass `integrity_check` and
    /// the layout's invariants, and hold the server's copy.
    @Suite(.serialized, .enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage),
           .enabled(if: OcdBinary.url != nil, "ocd is not built"))
    struct SyncKillTests {
        /// A note per save, as the worker's sync workload writes them.
        static let modelXML = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" systemVersion="22E261" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                <entity name="Note" syncable="YES">
                    <attribute name="title" attributeType="String"/>
                    <attribute name="words" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                </entity>
            </model>
            """

        /// `ocd sync serve` on `port` (0: any); returns the process and the port it listens on.
        static func startServer(_ ocd: URL, store: String, model: String, key: String, port: Int) throws -> (ChildProcess, Int) {
            let server = try ChildProcess.start(ocd.path, ["sync", "serve", "--store", store, "--model", model, "--key-file", key,
                                                           "--port", String(port)], captureErrors: true)
            var text = ""
            while !text.contains("\n") {
                let chunk = server.output.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            guard let range = text.range(of: #"listening on http://127\.0\.0\.1:\d+"#, options: .regularExpression),
                  let bound = Int(text[range].split(separator: ":").last ?? "") else {
                server.kill()
                throw ChildProcess.Failure(description: "ocd sync serve did not start: \(text)")
            }
            return (server, bound)
        }

        /// Starts the worker and waits for it to say it started.
        static func startWorker(_ arguments: [String]) throws -> ChildProcess {
            let worker = try WorkerProcess.start(arguments)
            guard worker.waitForLine("started") else { throw ChildProcess.Failure(description: "the worker did not start") }
            return worker
        }

        /// Every note title in the store at `path`, with how many times each is there.
        static func titles(at path: String, model: ManagedObjectModel) throws -> [String: Int] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path), options: StoreOptions(readOnly: true))
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            var counts: [String: Int] = [:]
            for note in try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")) {
                counts[try note.value(forKey: "title") as? String ?? "", default: 0] += 1
            }
            return counts
        }

        @Test func killedClientsAndServerLoseNothingAndApplyNothingTwice() async throws {
            let ocd = try #require(OcdBinary.url)
            let folder = try OcdBinary.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let modelFolder = folder.appendingPathComponent("Notes.xcdatamodel")
            try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
            try Data(Self.modelXML.utf8).write(to: modelFolder.appendingPathComponent("contents"))
            let model = try ManagedObjectModel(contentsOf: modelFolder)
            let key = folder.appendingPathComponent("key").path
            try Data(try OcdBinary.run(["sync", "key"], binary: ocd).stdout.utf8).write(to: URL(fileURLWithPath: key))
            let token = try OcdBinary.run(["sync", "token", "--key-file", key, "--user", "kim", "--expires", "1h"], binary: ocd)
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let serverStore = folder.appendingPathComponent("server.sqlite").path
            var (server, port) = try Self.startServer(ocd, store: serverStore, model: modelFolder.path, key: key, port: 0)
            let url = "http://127.0.0.1:\(port)"
            let (pusherStore, pullerStore) = (folder.appendingPathComponent("a.sqlite").path, folder.appendingPathComponent("b.sqlite").path)
            let log = folder.appendingPathComponent("a.log").path
            var random = SystemRandomNumberGenerator()
            var kills = (pusher: 0, puller: 0, server: 0)

            // The pushing client, killed mid-save, mid-push or mid-pull.
            for _ in 0..<40 {
                let worker = try Self.startWorker(["sync-push", pusherStore, modelFolder.path, url, token, "a", log])
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...250, using: &random)))
                worker.kill(SIGKILL)
                _ = try worker.wait(seconds: 20)
                kills.pusher += 1
            }
            // The server, killed while a client pushes to it (and restarted on the same port).
            let pusher = try Self.startWorker(["sync-push", pusherStore, modelFolder.path, url, token, "a", log])
            for _ in 0..<20 {
                try await Task.sleep(for: .milliseconds(Int.random(in: 50...300, using: &random)))
                server.kill(SIGKILL)
                _ = try server.wait(seconds: 20)
                kills.server += 1
                (server, port) = try Self.startServer(ocd, store: serverStore, model: modelFolder.path, key: key, port: port)
            }
            pusher.kill(SIGKILL)
            _ = try pusher.wait(seconds: 20)
            kills.pusher += 1
            // The pulling client, killed while it applies pages.
            for _ in 0..<40 {
                let worker = try Self.startWorker(["sync-pull", pullerStore, modelFolder.path, url, token, "b"])
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...250, using: &random)))
                worker.kill(SIGKILL)
                _ = try worker.wait(seconds: 20)
                kills.puller += 1
            }
            // Quiet: each client finishes its rounds unkilled (a pull-only worker stopped after a while).
            for store in [pusherStore, pullerStore, pusherStore] {
                let worker = try Self.startWorker(["sync-pull", store, modelFolder.path, url, token, "-"])
                try await Task.sleep(for: .seconds(2))
                worker.kill(SIGTERM)
                _ = try worker.wait(seconds: 20)
            }
            server.kill(SIGTERM)
            _ = try server.wait(seconds: 20)

            let saved = Set(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { "a-\($0)" })
            let pushed = try Self.titles(at: pusherStore, model: model)
            let pulled = try Self.titles(at: pullerStore, model: model)
            print("SyncKillTests: \(kills.pusher) pusher, \(kills.server) server, \(kills.puller) puller kills; \(saved.count) saves logged, \(pushed.count) notes")
            #expect(kills.pusher + kills.server + kills.puller >= 100)
            #expect(saved.count > 20, "the pusher got work done between kills")
            #expect(saved.isSubset(of: Set(pushed.keys)), "a logged save is missing from its own store")
            #expect(pushed.values.allSatisfy { $0 == 1 }, "a note is there twice in the pusher's store")
            #expect(pulled == pushed, "the puller's notes differ: \(Set(pushed.keys).symmetricDifference(pulled.keys).sorted().prefix(5))")
            for path in [pusherStore, pullerStore] {
                #expect(try StoreInvariants.violations(at: URL(fileURLWithPath: path), model: model).isEmpty, "\(path)")
            }
        }
    }
}
