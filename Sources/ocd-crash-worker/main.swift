// ocd-crash-worker: the child process of the reliability harnesses (docs/RELIABILITY.md).
//
//   ocd-crash-worker run <store> <log> [iterations]   save in a loop; log each iteration after its save returned
//   ocd-crash-worker expect <iteration>               print the expected store state after that iteration
//   ocd-crash-worker hold-lock <store> <seconds>      hold SQLite's write lock (BEGIN IMMEDIATE), then roll back
//   ocd-crash-worker increment <store> <count>        add 1 to Progress.iteration <count> times, retrying conflicts
//   ocd-crash-worker file-limit <store> <bytes>       under RLIMIT_FSIZE (a full disk), save a 2 MB note, then a
//                                                      small one; prints how each went
//   ocd-crash-worker edit <store> <policy> <key=value>...  read the note "shared", print "read", wait for a line
//                                                      on stdin, then set the values and save with that policy
//   ocd-crash-worker set-double <type> <double>       set a Double on an attribute of that type (for values that
//                                                      may crash the process); prints refused or accepted
//   ocd-crash-worker nested-perform <store> <main|private>  a child context's performAndWait inside its
//                                                      parent's queue (see NestedPerform); prints saved
//   ocd-crash-worker off-queue <store> <fetch|read|main> [switch]  use a private-queue context (main: a
//                                                      main-queue one) from the main thread outside its
//                                                      blocks (see OffQueueUse); prints finished unless the
//                                                      queue check stops it
//   ocd-crash-worker run-history <store> <log> [n]    as run, with persistent history tracking on (saves are
//                                                      by author "save", batch requests by "batch")
//   ocd-crash-worker history-read <store> <reader>    as the registered history reader <reader>: print
//                                                      "read" and the numbers of the transactions it had not
//                                                      seen, then mark them seen
//   ocd-crash-worker sync-push <store> <model> <server> <token> <prefix> <log>   save a note per iteration,
//                                                      log it once saved, then sync (see SyncWorkload)
//   ocd-crash-worker sync-pull <store> <model> <server> <token> <prefix>   sync rounds only, until killed
//   ocd-crash-worker migrate <store> <bundle>         migrate the store to the bundle's current version;
//                                                      prints planning, writing (after the first statement
//                                                      in the transaction) and migrated (once it returned)
//   ocd-crash-worker migrate-mapping <store> <bundle> open the store with the bundle's current model, which
//                                                      migrates it through the mapping model beside the bundle
//   ocd-crash-worker migrate-staged <store> <bundle>  migrate the store to the bundle's current version by a
//                                                      staged migration of lightweight stages
//                                                      (both on a copy written back: they print planning,
//                                                      writing just before the write-back, written once the
//                                                      backup step returned, and migrated once it returned)
import Foundation
import GRDB
@_spi(CrashHarness) import OpenCoreData

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ocd-crash-worker: \(message)\n".utf8))
    exit(2)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Prints `writing` just before a migrated copy is written back over the store and `written` once the
/// backup step returned, so the harness can aim its kills at the write-back.
func sayWriteBackMoments() {
    MigrationWriteBackObserver.observer = { moment in
        switch moment {
        case .willWriteBack: say("writing")
        case .didWriteBack: say("written")
        }
    }
}

/// Appends an iteration number and forces it to disk, so a line in the log means the save had returned.
func appendDurably(_ iteration: Int, to descriptor: Int32) {
    let bytes = Array("\(iteration)\n".utf8)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count, fsync(descriptor) == 0 else { fail("cannot write the log") }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: run <store> <log> [n] | expect <n> | hold-lock <store> <s> | increment <store> <n>") }

do {
    switch arguments[1] {
    case "run", "run-history":
        guard arguments.count >= 4 else { fail("\(arguments[1]) <store> <log> [iterations]") }
        let driver = try StoreDriver(storePath: arguments[2], history: arguments[1] == "run-history")
        let limit = arguments.count >= 5 ? Int(arguments[4]) ?? Int.max : Int.max
        let log = open(arguments[3], O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard log >= 0 else { fail("cannot open the log") }
        let start = try driver.committedIteration()
        var state = Plan.simulate(through: start)
        var iteration = start + 1
        while iteration - start <= limit {
            let plan = Plan.make(iteration: iteration, state: state)
            try driver.perform(plan)
            plan.apply(to: &state)
            appendDurably(iteration, to: log)
            iteration += 1
        }
    case "expect":
        guard let iteration = Int(arguments[2]) else { fail("expect <iteration>") }
        let state = Plan.simulate(through: iteration)
        for line in state.canonicalLines { say(line) }
        let next = Plan.make(iteration: iteration + 1, state: state)
        if next.batch != nil {
            // The batch request of the next iteration may have committed without its save.
            var partial = state
            next.applyBatch(to: &partial)
            say("==PARTIAL==")
            for line in partial.canonicalLines { say(line) }
        }
    case "hold-lock":
        guard arguments.count >= 4, let seconds = Double(arguments[3]) else { fail("hold-lock <store> <seconds>") }
        let queue = try DatabaseQueue(path: arguments[2])
        try queue.inDatabase { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            say("locked")
            Thread.sleep(forTimeInterval: seconds)
            try db.execute(sql: "ROLLBACK")
        }
        say("released")
    case "increment":
        guard arguments.count >= 4, let count = Int(arguments[3]) else { fail("increment <store> <count>") }
        let driver = try StoreDriver(storePath: arguments[2])
        var conflicts = 0
        for _ in 0..<count {
            while true {
                // A fresh context per attempt: it reads the row as it is now.
                let context = driver.context()
                let request = FetchRequest<ManagedObject>(entityName: "Progress")
                guard let counter = try context.fetch(request).first else { fail("no counter row") }
                let value = try counter.value(forKey: "iteration") as? Int64 ?? 0
                try counter.setValue(value + 1, forKey: "iteration")
                do {
                    try context.save()
                    break
                } catch ObjectGraphError.mergeConflict {
                    conflicts += 1
                } catch StoreError.busy {
                    // The other process held the lock past the timeout: not a conflict; try again.
                }
            }
        }
        say("conflicts \(conflicts)")
    case "file-limit":
        guard arguments.count >= 4, let bytes = UInt64(arguments[3]) else { fail("file-limit <store> <bytes>") }
        let driver = try StoreDriver(storePath: arguments[2])
        // Writes past the limit fail with EFBIG instead of killing the process, as on a full disk.
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 else { fail("setrlimit") }
        for (title, size) in [("big", 2 << 20), ("small", 100)] {
            let context = driver.context()
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue(title, forKey: "title")
            try note.setValue(Data(repeating: 7, count: size), forKey: "blob")
            do {
                try context.save()
                say("\(title): saved")
            } catch {
                say("\(title): \(type(of: error)): \(error)")
            }
        }
    case "edit":
        guard arguments.count >= 5 else { fail("edit <store> <policy> <key=value>...") }
        let policies: [String: MergePolicy] = ["error": .error, "rollback": .rollback, "overwrite": .overwrite,
                                               "objectTrump": .mergeByPropertyObjectTrump,
                                               "storeTrump": .mergeByPropertyStoreTrump]
        guard let policy = policies[arguments[3]] else { fail("unknown policy \(arguments[3])") }
        let driver = try StoreDriver(storePath: arguments[2])
        let context = driver.context()
        context.mergePolicy = policy
        guard let note = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note")).first(where: {
            try $0.value(forKey: "title") as? String == "shared"
        }) else { fail("no shared note") }
        _ = try note.value(forKey: "rank")
        say("read")
        _ = readLine()
        for pair in arguments[4...] {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { fail("bad pair \(pair)") }
            if parts[0] == "rank" { try note.setValue(Int64(parts[1]) ?? 0, forKey: "rank") } else { try note.setValue(parts[1], forKey: parts[0]) }
        }
        do {
            try context.save()
            say("saved")
        } catch {
            say("failed: \(type(of: error))")
        }
    case "set-double":
        guard arguments.count >= 4, let type = AttributeType(rawValue: arguments[2]), let value = Double(arguments[3]) else {
            fail("set-double <attribute type> <double>")
        }
        let model = try ManagedObjectModel { EntityDescription("Probe") { Attribute("value", type) } }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let probe = try context.insertNewObject(forEntityName: "Probe")
        do {
            try probe.setValue(value, forKey: "value")
            try context.save()
            say("accepted")
        } catch {
            say("refused: \(error)")
        }
    case "nested-perform":
        guard arguments.count >= 4 else { fail("nested-perform <store> <main|private>") }
        try NestedPerform.run(storePath: arguments[2], parentKind: arguments[3])
    case "off-queue":
        guard arguments.count >= 4 else { fail("off-queue <store> <fetch|read|main> [switch]") }
        try OffQueueUse.run(storePath: arguments[2], use: arguments[3], switchOn: arguments.count >= 5 && arguments[4] == "switch")
    case "history-read":
        guard arguments.count >= 4 else { fail("history-read <store> <reader>") }
        try HistoryReading.readUnseen(storePath: arguments[2], reader: arguments[3])
    case "migrate":
        guard arguments.count >= 4 else { fail("migrate <store> <bundle>") }
        let bundle = try ModelVersionBundle(contentsOf: URL(fileURLWithPath: arguments[3]))
        say("planning")
        var writing = false
        try StoreMigration.migrate(storeAt: URL(fileURLWithPath: arguments[2]), to: bundle) { _, _ in
            // Progress is reported after each statement of the one transaction: the first call means the
            // write lock is held and the migration has started changing the store.
            if !writing {
                writing = true
                say("writing")
            }
        }
        say("migrated")
    case "migrate-mapping":
        guard arguments.count >= 4 else { fail("migrate-mapping <store> <bundle>") }
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: arguments[3]))
        sayWriteBackMoments()
        say("planning")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: arguments[2]))
        coordinator.persistentStores.forEach(coordinator.remove)
        say("migrated")
    case "migrate-staged":
        guard arguments.count >= 4 else { fail("migrate-staged <store> <bundle>") }
        let bundle = try ModelVersionBundle(contentsOf: URL(fileURLWithPath: arguments[3]))
        let manager = StagedMigrationManager(stages: [LightweightMigrationStage(bundle.versions.map(\.name))])
        sayWriteBackMoments()
        say("planning")
        try StoreMigration.migrate(storeAt: URL(fileURLWithPath: arguments[2]), to: bundle, stagedMigrationManager: manager)
        say("migrated")
    case "sync-push", "sync-pull":
        guard arguments.count >= 7 else { fail("\(arguments[1]) <store> <model> <server> <token> <prefix> [log]") }
        try await SyncWorkload.run(mode: String(arguments[1].dropFirst("sync-".count)), storePath: arguments[2],
                                   modelPath: arguments[3], server: arguments[4], token: arguments[5], prefix: arguments[6],
                                   logPath: arguments.count >= 8 ? arguments[7] : nil)
    default:
        fail("unknown mode \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
