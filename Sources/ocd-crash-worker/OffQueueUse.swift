import Foundation
import OpenCoreData

/// `off-queue <store> <fetch|read|main> [switch]`: a private-queue context named "off-queue" saves a note
/// inside `performAndWait`, then is used from the main thread outside its blocks, as a program that breaks
/// the queue rule would: `fetch` counts its notes, `read` reads the note's title. `main` does both with a
/// main-queue context instead, which the main thread may use. With the debug check on
/// (`OCD_CONCURRENCY_DEBUG=1` in the environment, or `switch`: the check's static switch set in code) the
/// process stops with the check's message on standard error; with it off, or in a release build, it
/// prints `finished` and exits 0. Run in this process because the stop ends it.
enum OffQueueUse {
    static func run(storePath: String, use: String, switchOn: Bool) throws -> Never {
        if switchOn { QueueCheck.isEnabled = true }
        let coordinator = try StoreDriver(storePath: storePath).coordinator
        let context = ManagedObjectContext(concurrencyType: use == "main" ? .mainQueue : .privateQueue)
        context.name = "off-queue"
        context.persistentStoreCoordinator = coordinator
        let note = try context.performAndWait {
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue("seed", forKey: "title")
            try context.save()
            return note
        }
        switch use {
        case "fetch": _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "Note"))
        case "read": _ = try note.value(forKey: "title")
        case "main":
            _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "Note"))
            _ = try note.value(forKey: "title")
        default: fail("off-queue <store> <fetch|read|main> [switch]")
        }
        say("finished")
        exit(0)
    }
}
