import Foundation
import Synchronization
import Testing
@testable import OpenCoreData

final class QueueCheckedNote: ManagedObject {
    @Managed("title") var title: String?
}

/// Collects what the queue check reports for the contexts it watches (the check's test hook): a test sees
/// its violations without the program stopping, and without switching the check on for the tests that run
/// beside it.
final class ViolationLog: Sendable {
    private let entries = Mutex<[QueueViolation]>([])
    private let contexts: [ManagedObjectContext]

    init(watching contexts: ManagedObjectContext...) {
        self.contexts = contexts
        for context in contexts {
            QueueCheck.reportViolations(of: context) { violation in self.entries.withLock { $0.append(violation) } }
        }
    }

    /// Ends the watch; call it (deferred) before the test ends.
    func stop() {
        for context in contexts { QueueCheck.stopReportingViolations(of: context) }
    }

    /// The violations reported since the last call.
    func take() -> [QueueViolation] {
        entries.withLock { entries in
            defer { entries.removeAll() }
            return entries
        }
    }
}

/// The debug-build check that a context and its objects are used on the context's queue: off-queue uses are
/// reported naming the context, the entry point (entity and key for an object's value) and the thread; uses
/// inside `perform`/`performAndWait`, nested or through a parent, and the library's own deliveries on the
/// queue are not. Each test that shows a use is not reported ends with one off-queue use that must be, so it
/// fails if the check is gone.
@Suite(.enabled(if: QueueCheck.isCompiledIn, "the queue check is compiled into debug builds only"))
struct QueueCheckTests {
    static func stack() throws -> TestStack {
        try TestStack(model: ManagedObjectModel {
            EntityDescription("Note", class: QueueCheckedNote.self) {
                Attribute("title", .string)
            }
        })
    }

    static let notes = FetchRequest<ManagedObject>(entityName: "Note")

    /// A private-queue context holding one saved note, made inside `performAndWait`.
    static func seeded(_ stack: TestStack, name: String) throws -> (ManagedObjectContext, QueueCheckedNote) {
        let context = stack.context(.privateQueue)
        context.name = name
        let note = try context.performAndWait {
            let note = try context.insertNew(QueueCheckedNote.self)
            note.title = "seed"
            try context.save()
            return note
        }
        return (context, note)
    }

    @Test func aPrivateQueueContextUsedOutsideItsBlocksIsReportedAtEachEntryPoint() throws {
        let stack = try Self.stack()
        let (context, note) = try Self.seeded(stack, name: "importer")
        let log = ViolationLog(watching: context)
        defer { log.stop() }
        let uses: [(String, () throws -> Void)] = [
            ("fetch(_:)", { _ = try context.fetch(Self.notes) as [ManagedObject] }),
            ("count(for:)", { _ = try context.count(for: Self.notes) }),
            ("object(with:)", { _ = try context.object(with: note.objectID) }),
            ("registeredObject(for:)", { _ = context.registeredObject(for: note.objectID) }),
            ("insertNewObject(forEntityName:)", { _ = try context.insertNewObject(forEntityName: "Note") }),
            ("hasChanges", { _ = context.hasChanges }),
            ("insertedObjects", { _ = context.insertedObjects }),
            ("processPendingChanges()", { context.processPendingChanges() }),
            ("save()", { try context.save() }),
            ("delete(_:)", { context.delete(note) }),
            ("rollback()", { context.rollback() }),
            ("refresh(_:mergeChanges:)", { context.refresh(note, mergeChanges: false) }),
            ("mergeChanges(fromContextDidSave:)", { context.mergeChanges(fromContextDidSave: ContextDidSave()) }),
            ("execute(_:)", { _ = try context.execute(AsynchronousFetchRequest(fetchRequest: Self.notes)) }),
            ("reset()", { context.reset() }),
        ]
        for (operation, use) in uses {
            try use()
            let reported = log.take()
            #expect(reported.first?.operation == operation, "\(operation) was not reported: \(reported)")
            for violation in reported {
                #expect(violation.context == "<ManagedObjectContext 'importer' PrivateQueueConcurrencyType>")
                #expect(violation.entity == nil && violation.key == nil)
            }
        }
    }

    @Test func anObjectReadOrWrittenOffItsContextsQueueIsReportedWithItsEntityAndKey() throws {
        let stack = try Self.stack()
        let (context, note) = try Self.seeded(stack, name: "editor")
        let log = ViolationLog(watching: context)
        defer { log.stop() }
        func reported(_ use: () throws -> Void) rethrows -> [String] {
            try use()
            return log.take().map { "\($0.entity ?? "-").\($0.key ?? "-") \($0.operation)" }
        }
        // Each use reported once: a typed read checks in its fast path and not again when it falls back.
        #expect(try reported { _ = try note.value(forKey: "title") } == ["Note.title value(forKey:)"])
        #expect(reported { _ = note.title } == ["Note.title value(forKey:)"])
        #expect(try reported { try note.setValue("changed", forKey: "title") } == ["Note.title setValue(_:forKey:)"])
        #expect(reported { _ = note.title } == ["Note.title value(forKey:)"])
        #expect(reported { note.title = "typed" } == ["Note.title setValue(_:forKey:)"])
        // A fault filled by an off-queue read.
        context.performAndWait { context.refresh(note, mergeChanges: false) }
        #expect(reported { _ = note.title } == ["Note.title value(forKey:)"])
        // The same object on its queue: nothing.
        #expect(reported { context.performAndWait { _ = note.title } } == [])

        try note.setValue("again", forKey: "title")
        let message = try #require(log.take().first).description
        #expect(message.hasPrefix("OpenCoreData concurrency violation: <ManagedObjectContext 'editor' PrivateQueueConcurrencyType> used off its queue: Note.title (setValue(_:forKey:)) on "))
    }

    @Test func aMainQueueContextUsedFromAnotherThreadIsReportedNamingTheThread() throws {
        let stack = try Self.stack()
        let view = stack.context(.mainQueue)
        view.name = "view"
        let other = stack.context(.privateQueue)
        let log = ViolationLog(watching: view)
        defer { log.stop() }
        // A thread of its own: certainly not the main thread, and running no queue.
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = try? view.count(for: Self.notes)
            done.signal()
        }.start()
        done.wait()
        let fromThread = log.take()
        #expect(fromThread.map(\.operation) == ["count(for:)"])
        #expect(fromThread.first?.context == "<ManagedObjectContext 'view' MainQueueConcurrencyType>")
        #expect(fromThread.first?.thread.contains("(not the main thread), running no context's queue") == true)
        // Inside another context's block: that queue is not this context's.
        other.performAndWait { _ = view.hasChanges }
        let fromOtherQueue = log.take()
        #expect(fromOtherQueue.map(\.operation) == ["hasChanges"])
        #expect(fromOtherQueue.first?.thread.hasSuffix("running a private context queue") == true)
    }

    @Test func usesInsidePerformPerformAndWaitAndNestedBlocksAreNotReported() async throws {
        let stack = try Self.stack()
        let (context, note) = try Self.seeded(stack, name: "worker")
        let view = stack.context(.mainQueue)
        let log = ViolationLog(watching: context, view)
        defer { log.stop() }
        let id = note.objectID
        try context.performAndWait {
            let fetched = try context.fetch(Self.notes) as [ManagedObject]
            #expect(try fetched.map { try $0.value(forKey: "title") as? String } == ["seed"])
            // Nested in itself, and a write and save inside.
            try context.performAndWait {
                note.title = "nested"
                try context.save()
            }
        }
        let title: String? = try await context.perform {
            let object = try context.existingObject(with: id) as! QueueCheckedNote
            return object.title
        }
        #expect(title == "nested")
        let count = await withCheckedContinuation { continuation in
            context.perform { continuation.resume(returning: (try? context.count(for: Self.notes)) ?? -1) }
        }
        #expect(count == 1)
        // A main-queue context inside its own perform (the main queue's block).
        let viewTitle: String? = try await view.perform {
            try (view.existingObject(with: id) as! QueueCheckedNote).title
        }
        #expect(viewTitle == "nested")
        #expect(log.take().isEmpty)

        _ = context.insertedObjects
        #expect(log.take().map(\.operation) == ["insertedObjects"])
    }

    @Test func childContextsReachingTheirParentAreNotReported() throws {
        let stack = try Self.stack()
        let (parent, note) = try Self.seeded(stack, name: "parent")
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        let log = ViolationLog(watching: parent, child)
        defer { log.stop() }
        let id = note.objectID
        try child.performAndWait {
            // The fault is filled through the parent's performAndWait; the save pushes into the parent.
            let copy = try child.existingObject(with: id) as! QueueCheckedNote
            let added = try child.insertNew(QueueCheckedNote.self)
            added.title = "copy of \(copy.title ?? "?")"
            try child.save()
        }
        // A child used inside its parent's block: the thread holds the parent's queue for the child's block.
        try parent.performAndWait {
            let inner = ManagedObjectContext(concurrencyType: .privateQueue)
            inner.parent = parent
            try inner.performAndWait {
                let counted = try inner.count(for: Self.notes)
                let seed = try inner.existingObject(with: id) as! QueueCheckedNote
                #expect(counted >= 1)
                #expect(seed.title == "seed")
            }
            try parent.save()
        }
        #expect(log.take().isEmpty)

        _ = child.hasChanges
        let reported = log.take()
        #expect(reported.map(\.operation) == ["hasChanges"])
        #expect(reported.first?.context == "<ManagedObjectContext PrivateQueueConcurrencyType>")
    }

    /// Reads the changed objects' titles in the controller's delivery.
    final class TitleReader: FetchedResultsControllerDelegate, @unchecked Sendable {
        // @unchecked Sendable: `titles` is written in the delivery, on the context's queue, and read after
        // `delivered` resumed.
        var titles: [String?] = []
        var delivered: CheckedContinuation<Void, Never>?
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject,
                        at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            titles.append(try? object.value(forKey: "title") as? String)
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) {
            delivered?.resume()
            delivered = nil
        }
    }

    @Test func theResultsControllersDeliveryAndAnAsynchronousFetchsCompletionAreNotReported() async throws {
        let stack = try Self.stack()
        let (writer, _) = try Self.seeded(stack, name: "writer")
        let reader = stack.context(.privateQueue)
        reader.automaticallyMergesChangesFromParent = true
        let log = ViolationLog(watching: reader)
        defer { log.stop() }
        let request = FetchRequest<ManagedObject>(entityName: "Note")
        request.sortDescriptors = [QuerySortDescriptor(key: "title")]
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: reader,
                                                      sectionNameKeyPath: nil, cacheName: nil)
        let delegate = TitleReader()
        controller.delegate = delegate
        try reader.performAndWait { try controller.performFetch() }
        // A save of the writer merged into the reader on its queue, and delivered there.
        await withCheckedContinuation { continuation in
            reader.performAndWait { delegate.delivered = continuation }
            writer.performAndWait {
                let added = try? writer.insertNew(QueueCheckedNote.self)
                added?.title = "merged"
                try? writer.save()
            }
        }
        #expect(delegate.titles == ["merged"])

        let titles: [String?] = await withCheckedContinuation { continuation in
            let fetch = AsynchronousFetchRequest(fetchRequest: request) { result in
                continuation.resume(returning: (result.finalResult ?? []).map { try? $0.value(forKey: "title") as? String })
            }
            reader.perform { _ = try? reader.execute(fetch) }
        }
        #expect(titles == ["merged", "seed"])
        #expect(log.take().isEmpty)

        _ = try reader.fetch(request) as [ManagedObject]
        #expect(log.take().map(\.operation) == ["fetch(_:)"])
    }

    /// In a process of its own, as a program would meet it: with `OCD_CONCURRENCY_DEBUG=1` (or the static
    /// switch) an off-queue use stops the program with the check's message; without, nothing is checked; a
    /// main-queue context used on the main thread is not stopped.
    @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage),
          arguments: [(["OCD_CONCURRENCY_DEBUG=1"], "fetch", "count(for:) on the main thread"),
                      (["OCD_CONCURRENCY_DEBUG=1"], "read", "Note.title (value(forKey:)) on the main thread"),
                      (["-u", "OCD_CONCURRENCY_DEBUG"], "fetch switch", "count(for:) on the main thread"),
                      (["-u", "OCD_CONCURRENCY_DEBUG"], "fetch", nil),
                      (["OCD_CONCURRENCY_DEBUG=1"], "main", nil)] as [([String], String, String?)])
    func anOffQueueUseStopsTheProgramWhenSwitchedOn(environment: [String], use: String, message: String?) throws {
        let directory = TemporaryDirectory()
        let worker = try #require(WorkerProcess.executable).path
        let arguments = environment + [worker, "off-queue", directory.file("OffQueue.sqlite").path]
            + use.split(separator: " ").map(String.init)
        let result = try ChildProcess.run("/usr/bin/env", arguments)
        if let message {
            #expect(result.status > 128, "the worker was not stopped (status \(result.status)): \(result.stdout)")
            #expect(result.stdout == "")
            #expect(result.stderr.contains("OpenCoreData concurrency violation: <ManagedObjectContext 'off-queue' "))
            #expect(result.stderr.contains(message), "\(result.stderr)")
        } else {
            #expect(result.status == 0, "the worker died (status \(result.status)): \(result.stderr)")
            #expect(result.stdout == "finished\n")
        }
    }
}
