import Foundation
import OpenCoreData
import OpenCoreDataSync

#if canImport(Glibc)
import Glibc
#endif

/// The sync kill harness's client (docs/SYNC.md, "What proves it"): a store mirrored through a sync
/// server, killed at random moments by the test.
///
/// `push`: saves one new note per iteration (titled `<prefix>-<n>`; every third iteration also changes an
/// earlier one's words), logs `n` durably once the save returned, then runs a sync round.
/// `pull`: only runs sync rounds, so kills land while pulled pages are applied.
enum SyncWorkload {
    static func run(mode: String, storePath: String, modelPath: String, server: String, token: String,
                    prefix: String, logPath: String?) async throws -> Never {
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath))
        let container = PersistentContainer(name: "Sync", managedObjectModel: model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(
            url: URL(fileURLWithPath: storePath), type: .sqlite, options: StoreOptions(persistentHistoryTracking: true))]
        try container.loadPersistentStores()
        guard let url = URL(string: server) else { fail("not a URL: \(server)") }
        let engine = try SyncEngine(container: container, server: url, token: token,
                                    options: SyncOptions(pushBatchSize: 3, pullPageSize: 4))
        say("started")
        guard mode == "push", let logPath else {
            while true { _ = try? await engine.sync() }
        }
        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard log >= 0 else { fail("cannot open the log") }
        let context = container.newBackgroundContext()
        var iteration = try context.performAndWait {
            try context.count(for: FetchRequest<ManagedObject>(entityName: "Note"))
        }
        while true {
            iteration += 1
            let number = iteration
            try context.performAndWait {
                let note = try context.insertNewObject(forEntityName: "Note")
                try note.setValue("\(prefix)-\(number)", forKey: "title")
                try note.setValue(Int32(number), forKey: "words")
                let request = FetchRequest<ManagedObject>(entityName: "Note")
                request.fetchLimit = 1
                if number % 3 == 0, let earlier = try context.fetch(request).first {
                    try earlier.setValue(Int32(number * 10), forKey: "words")
                }
                try context.save()
            }
            appendDurably(number, to: log)
            _ = try? await engine.sync()
        }
    }
}
