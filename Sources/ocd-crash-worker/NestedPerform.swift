import Foundation
import OpenCoreData

/// `nested-perform <store> <main|private>`: a private-queue child of a context whose queue the calling
/// thread already holds reads an object and saves, inside `performAndWait`. Run in this process because
/// a thread that `sync`s onto a queue it holds stops the process (libdispatch: "dispatch_sync called on
/// queue already owned by current thread").
///
/// - `main`: the parent is a main-queue context, and the child is made by main-actor code after an
///   `await`, with the main queue drained by worker threads (`dispatchMain()`), as in a Linux server.
/// - `private`: the parent is a private-queue context, and the child is made inside its `perform` block.
///
/// Prints `saved` (and, for `main`, whether the main-actor code ran on the main thread), then exits 0.
enum NestedPerform {
    static func run(storePath: String, parentKind: String) throws -> Never {
        let driver = try StoreDriver(storePath: storePath)
        let seed = driver.context()
        let note = try seed.insertNewObject(forEntityName: "Note")
        try note.setValue("seed", forKey: "title")
        try seed.save()
        let id = note.objectID

        switch parentKind {
        case "main":
            let parent = ManagedObjectContext(concurrencyType: .mainQueue)
            parent.persistentStoreCoordinator = driver.coordinator
            Task { @MainActor in
                await Task.yield()
                let onMainThread = Thread.isMainThread
                do {
                    try readAndSave(inChildOf: parent, id: id)
                    // The child's save pushed into the parent; the parent saves on its own queue, here.
                    try parent.save()
                    say("saved (main thread: \(onMainThread))")
                    exit(0)
                } catch {
                    fail("\(error)")
                }
            }
            dispatchMain()
        case "private":
            let parent = ManagedObjectContext(concurrencyType: .privateQueue)
            parent.persistentStoreCoordinator = driver.coordinator
            try parent.performAndWait {
                try readAndSave(inChildOf: parent, id: id)
                try parent.save()
            }
            say("saved")
            exit(0)
        default:
            fail("nested-perform <store> <main|private>")
        }
    }

    /// Makes a private-queue child of `parent`, and in its `performAndWait` reads the object (the parent
    /// fills the fault) and saves a new note (the save pushes into the parent).
    private static func readAndSave(inChildOf parent: ManagedObjectContext, id: ManagedObjectID) throws {
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try child.performAndWait {
            let seed = try child.existingObject(with: id)
            let copy = try child.insertNewObject(forEntityName: "Note")
            try copy.setValue("copy of \(try seed.value(forKey: "title") as? String ?? "?")", forKey: "title")
            try child.save()
        }
    }
}
