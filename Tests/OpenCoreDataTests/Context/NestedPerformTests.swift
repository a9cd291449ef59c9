import Foundation
import Testing
@testable import OpenCoreData

/// A child context's `performAndWait` run by a thread that already holds the parent's queue: the parent
/// fills the child's faults and takes its save at once, instead of `sync`ing onto a queue the thread holds
/// (which stops the process). Run in the worker process (`nested-perform`), since that stop would end the
/// test run.
@Suite struct NestedPerformTests {
    @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage),
          arguments: ["main", "private"])
    func childOfAQueueTheThreadHoldsReadsAndSaves(_ parentKind: String) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Nested.sqlite")
        let result = try WorkerProcess.run(["nested-perform", url.path, parentKind])
        #expect(result.status == 0, "the worker died (status \(result.status)): \(result.output)")
        if parentKind == "main" {
            // The case to reproduce: main-actor code on a worker thread draining the main queue.
            #expect(result.output == "saved (main thread: false)\n")
        } else {
            #expect(result.output == "saved\n")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let titles = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            .map { try $0.value(forKey: "title") as? String }
        #expect(Set(titles) == ["seed", "copy of seed"])
    }

    /// Nesting inside one process where no queue is held twice: a private child of a private parent,
    /// called from outside both, and the parent's own `performAndWait` inside its `perform`.
    @Test func performAndWaitInsideAPerformOfTheSameContextRunsAtOnce() async throws {
        let stack = try TestStack(model: TestModels.todo())
        let parent = stack.context(.privateQueue)
        let name: String? = try await parent.perform {
            try parent.performAndWait {
                let item = try parent.insertNewObject(forEntityName: "Item")
                try item.setValue("inner", forKey: "name")
                try parent.save()
                return try item.value(forKey: "name") as? String
            }
        }
        #expect(name == "inner")
    }
}
