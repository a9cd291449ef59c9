import Foundation
import Synchronization
import Testing
@testable import OpenCoreData

/// Commits by another coordinator or another process reach a coordinator watching its store: the
/// remote-change notification fires, and with history the changes are merged into the contexts that merge
/// automatically, so a results controller on them moves as for a local save.
@Suite struct RemoteChangeTests {
    typealias Stack = PersistentHistoryTests.Stack

    /// Waits for `condition` on the main thread's clock; the deadline only bounds how long a failure takes.
    static func eventually(_ seconds: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return try condition()
    }

    /// A private-queue context that merges automatically, and a fetched controller on it over `entity`
    /// sorted by title.
    static func mergingController(on coordinator: PersistentStoreCoordinator, entity: String) throws
        -> (ManagedObjectContext, FetchedResultsController<ManagedObject>) {
        let reader = ManagedObjectContext(concurrencyType: .privateQueue)
        reader.persistentStoreCoordinator = coordinator
        reader.automaticallyMergesChangesFromParent = true
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.sortDescriptors = [QuerySortDescriptor(key: "title")]
        let controller = try reader.performAndWait {
            let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: reader,
                                                          sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            return controller
        }
        return (reader, controller)
    }

    static func watchingCoordinator(_ stack: Stack, tracking: Bool = true) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
        try coordinator.addPersistentStore(type: .sqlite, at: stack.url, options: StoreOptions(
            persistentHistoryTracking: tracking, remoteChangeNotifications: true))
        return coordinator
    }

    @Test func anotherCoordinatorsSaveIsNotifiedAndMergedIntoAResultsController() throws {
        let stack = try Stack()
        let writerCoordinator = try stack.coordinator()
        let writer = stack.context(writerCoordinator, author: "writer")
        let first = try writer.insertNewObject(forEntityName: "Note")
        try first.setValue("first", forKey: "title")
        try writer.save()

        let watching = try Self.watchingCoordinator(stack)
        // What each notification carried: its history token and store UUID.
        let notifications = Mutex<[(token: PersistentHistoryToken?, store: String?)]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: PersistentStoreCoordinator.remoteChangeNotification, object: watching, queue: nil) { note in
            let token = note.userInfo?[PersistentStoreCoordinator.historyTokenKey] as? PersistentHistoryToken
            let store = note.userInfo?[PersistentStoreCoordinator.storeUUIDKey] as? String
            notifications.withLock { $0.append((token, store)) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let (reader, controller) = try Self.mergingController(on: watching, entity: "Note")
        let reports = Mutex<[FetchedResultsDifference]>([])
        reader.performAndWait { controller.onDifference = { difference in reports.withLock { $0.append(difference) } } }

        let second = try writer.insertNewObject(forEntityName: "Note")
        try second.setValue("second", forKey: "title")
        try first.setValue("a first", forKey: "title")
        try writer.save()

        #expect(Self.eventually { reports.withLock { $0.contains { !$0.insertions.isEmpty } } })
        let titles = try reader.performAndWait {
            try (controller.fetchedObjects.map(Array.init) ?? []).map { try $0.value(forKey: "title") as? String }
        }
        #expect(titles == ["a first", "second"])
        // The notification is posted after the merge is queued, so it may come a moment after the report.
        let current = try writerCoordinator.currentPersistentHistoryToken()
        #expect(Self.eventually { notifications.withLock { $0.contains { $0.token == current } } })
        #expect(notifications.withLock { $0 }.allSatisfy { $0.store == watching.persistentStores.first?.identifier })
    }

    @Test func ownSavesAreNotMergedTwice() throws {
        let stack = try Stack()
        let watching = try Self.watchingCoordinator(stack)
        let writer = stack.context(watching)
        let sibling = ManagedObjectContext(concurrencyType: .privateQueue)
        sibling.persistentStoreCoordinator = watching
        sibling.automaticallyMergesChangesFromParent = true
        let merged = Mutex(0)
        let observer = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.objectsDidChangeNotification, object: sibling, queue: nil) { _ in
            merged.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let seen = Mutex(false)
        let remoteObserver = NotificationCenter.default.addObserver(
            forName: PersistentStoreCoordinator.remoteChangeNotification, object: watching, queue: nil) { _ in
            seen.withLock { $0 = true }
        }
        defer { NotificationCenter.default.removeObserver(remoteObserver) }
        let note = try writer.insertNewObject(forEntityName: "Note")
        try note.setValue("mine", forKey: "title")
        try writer.save()
        // The watcher sees the commit (its connection is not the writer's) and says so...
        #expect(Self.eventually { seen.withLock { $0 } })
        // ...but the sibling heard of the save once, from the coordinator, not again from the history.
        sibling.performAndWait {}
        #expect(merged.withLock { $0 } <= 1)
    }

    @Test func withoutHistoryTheNotificationStillComes() throws {
        let stack = try Stack()
        let writerCoordinator = try stack.coordinator(tracking: false)
        let writer = stack.context(writerCoordinator)
        let seed = try writer.insertNewObject(forEntityName: "Note")
        try seed.setValue("seed", forKey: "title")
        try writer.save()
        let watching = try Self.watchingCoordinator(stack, tracking: false)
        let received = Mutex<[Bool]>([])   // whether each notification carried a history token
        let observer = NotificationCenter.default.addObserver(
            forName: PersistentStoreCoordinator.remoteChangeNotification, object: watching, queue: nil) { note in
            let hasToken = note.userInfo?[PersistentStoreCoordinator.historyTokenKey] != nil
            received.withLock { $0.append(hasToken) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try seed.setValue("changed", forKey: "title")
        try writer.save()
        #expect(Self.eventually { !received.withLock { $0 }.isEmpty })
        #expect(received.withLock { $0 }.allSatisfy { !$0 })
    }

    @Test(.enabled(if: OcdBinary.url != nil))
    func anImportInAnotherProcessReachesThisProcess() throws {
        let binary = try #require(OcdBinary.url)
        let folder = try OcdBinary.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let modelPath = try InteropFixtures.url("Library.xcdatamodeld").path
        let storePath = folder.appendingPathComponent("Library.sqlite").path
        let csv = folder.appendingPathComponent("books.csv")
        try Data("title,isbn\nDune,9780441013593\n".utf8).write(to: csv)
        let created = try OcdBinary.run(["import", storePath, "--model", modelPath, "--entity", "Book", "--csv", csv.path,
                                         "--history"], binary: binary)
        #expect(created.status == 0, "\(created.stderr)")

        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath))
        let watching = PersistentStoreCoordinator(managedObjectModel: model)
        try watching.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: storePath), options: StoreOptions(
            persistentHistoryTracking: true, remoteChangeNotifications: true))
        let (reader, controller) = try Self.mergingController(on: watching, entity: "Book")
        // This process's watch, seen from another process: `ocd watch` prints the next transaction.
        let watcher = try ChildProcess.start(binary.path, ["watch", storePath, "--model", modelPath, "--count", "1"],
                                             captureErrors: true)
        defer { watcher.kill() }
        // It says "Watching …" on standard error once its store is open and watched.
        var banner = ""
        while !banner.contains("Watching"), let chunk = watcher.errorOutput?.availableData, !chunk.isEmpty {
            banner += String(decoding: chunk, as: UTF8.self)
        }
        #expect(banner.contains("Watching"), "\(banner)")

        try Data("title,isbn\nEmma,9780141439587\nUlysses,9780199535675\n".utf8).write(to: csv)
        let second = try OcdBinary.run(["import", storePath, "--model", modelPath, "--entity", "Book", "--csv", csv.path,
                                        "--author", "second import"], binary: binary)
        #expect(second.status == 0, "\(second.stderr)")

        #expect(Self.eventually { reader.performAndWait { controller.fetchedObjects?.count == 3 } })
        let titles = try reader.performAndWait {
            try (controller.fetchedObjects.map(Array.init) ?? []).map { try $0.value(forKey: "title") as? String }
        }
        #expect(titles == ["Dune", "Emma", "Ulysses"])

        #expect(try watcher.wait(seconds: 30) == 0)
        let line = watcher.readAllOutput()
        let json = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        #expect(json["author"] as? String == "second import")
        #expect((json["inserted"] as? [String])?.count == 2)
    }
}
