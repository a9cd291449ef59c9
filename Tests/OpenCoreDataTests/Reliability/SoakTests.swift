import Foundation
import Synchronization
import Testing
@testable import OpenCoreData

/// Something else that tracks the store during the soak (the fetched results controller, when its branch
/// lands): started with the coordinator before the load begins, asked at the end whether what it shows
/// matches the item names a fresh fetch returns.
protocol SoakObserver: Sendable {
    func start(coordinator: PersistentStoreCoordinator)
    /// Problems found (empty: it agrees with the store).
    func finish(expectedItemNames: Set<String>) -> [String]
}

/// Add observers here (e.g. a fetched results controller on Item sorted by name).
enum SoakObservers {
    static func make() -> [any SoakObserver] { [] }
}

extension Reliability {
    /// A bounded soak: one writer saving continuously (inserts, edits, deletes with a cascade), three readers
    /// fetching, and an asynchronous fetch cancelled and restarted over and over. Nothing may fail, memory must
    /// stop growing after the warm-up, and the end state must equal a fresh fetch.
    @Suite(.serialized) struct SoakTests {
        /// Seconds of load; `OCD_SOAK_SECONDS` lengthens it (scripts/soak.sh).
        static var seconds: Double { ProcessInfo.processInfo.environment["OCD_SOAK_SECONDS"].flatMap(Double.init) ?? 8 }
        /// Whether readers keep their contexts without resetting them. Off by default: the registry keeps every
        /// object it fetched (MemoryRetentionTests), which would swamp every other growth. `OCD_SOAK_LONG_LIVED_READERS=1`.
        static var longLivedReaders: Bool { ProcessInfo.processInfo.environment["OCD_SOAK_LONG_LIVED_READERS"] == "1" }
        /// RSS growth allowed between the end of the warm-up (a third of the run) and the end.
        static let growthBound = 16 << 20

        static func residentBytes() -> Int {
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let fields = text.split(separator: " ")
            return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
        }

        /// A thread of its own for each part of the load: the global queue's few threads would run them in turn.
        static func onThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread { body(); group.leave() }.start()
        }

        @Test func writerReadersAndCancelledFetchesRunClean() throws {
            let stack = try TestStack(model: TestModels.todo())
            let coordinator = stack.coordinator
            let observers = SoakObservers.make()
            for observer in observers { observer.start(coordinator: coordinator) }
            let deadline = ContinuousClock.now + .seconds(Self.seconds)
            let warmUpEnd = ContinuousClock.now + .seconds(Self.seconds / 3)
            let shared = SoakState()

            let group = DispatchGroup()
            // The writer: one long-lived context, as an app's background importer would keep.
            Self.onThread(group) {
                defer { shared.writing.store(false, ordering: .releasing) }
                let context = ManagedObjectContext(concurrencyType: .confinement)
                context.persistentStoreCoordinator = coordinator
                var names: Set<String> = []
                var lists: [ManagedObject] = []
                var round = 0
                while ContinuousClock.now < deadline {
                    round += 1
                    do {
                        let list = try context.insertNewObject(forEntityName: "TodoList")
                        try list.setValue("list \(round)", forKey: "title")
                        for index in 0..<5 {
                            let item = try context.insertNewObject(forEntityName: "Item")
                            try item.setValue("r\(round)-\(index)", forKey: "name")
                            try item.setValue(Data(count: 512), forKey: "blob")
                            try item.setValue(list, forKey: "list")
                            names.insert("r\(round)-\(index)")
                        }
                        if let edited = lists.last {
                            try edited.setValue("list \(round) edited", forKey: "title")
                        }
                        lists.append(list)
                        if lists.count > 20 {
                            // Cascade: the oldest list takes its items with it.
                            let victim = lists.removeFirst()
                            for item in try victim.value(forKey: "items") as? Set<ManagedObject> ?? [] {
                                if let name = try item.value(forKey: "name") as? String { names.remove(name) }
                            }
                            context.delete(victim)
                        }
                        try context.save()
                        shared.saves.add(1, ordering: .relaxed)
                        shared.expected.withLock { $0 = names }
                    } catch {
                        shared.record("save \(round)", error)
                        context.rollback()
                    }
                    if ContinuousClock.now > warmUpEnd {
                        let resident = Self.residentBytes()
                        shared.memory.withLock { value in
                            if value.afterWarmUp == 0 { value.afterWarmUp = resident }
                            value.peak = max(value.peak, resident)
                        }
                    }
                }
            }
            // Readers: long-lived contexts, like view contexts, fetching and touching every item.
            for reader in 0..<3 {
                Self.onThread(group) {
                    let context = ManagedObjectContext(concurrencyType: .confinement)
                    context.persistentStoreCoordinator = coordinator
                    while shared.writing.load(ordering: .acquiring) {
                        do {
                            for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                                _ = try item.value(forKey: "name")
                            }
                            shared.fetches.add(1, ordering: .relaxed)
                            if !Self.longLivedReaders { context.reset() }
                        } catch {
                            shared.record("reader \(reader)", error)
                        }
                    }
                }
            }
            // An asynchronous fetch, cancelled at a random moment, restarted.
            Self.onThread(group) {
                let context = ManagedObjectContext(concurrencyType: .privateQueue)
                context.persistentStoreCoordinator = coordinator
                while shared.writing.load(ordering: .acquiring) {
                    let done = DispatchSemaphore(value: 0)
                    let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item")) { result in
                        if result.finalResult != nil {
                            shared.completed.add(1, ordering: .relaxed)
                        } else if let error = result.operationError, !(error is CancellationError),
                                  !"\(error)".localizedCaseInsensitiveContains("cancel") {
                            shared.record("asynchronous fetch", error)
                        } else {
                            shared.cancelled.add(1, ordering: .relaxed)
                        }
                        done.signal()
                    }
                    let started: AsynchronousFetchResult<ManagedObject>? = context.performAndWait {
                        do { return try context.execute(request) } catch { shared.record("asynchronous start", error); return nil }
                    }
                    guard let started else { break }
                    defer { if !Self.longLivedReaders { context.performAndWait { context.reset() } } }
                    Thread.sleep(forTimeInterval: Double.random(in: 0...0.004))
                    started.cancel()
                    if done.wait(timeout: .now() + 10) == .timedOut { shared.record("asynchronous fetch", SoakState.Stuck()); break }
                }
            }
            #expect(group.wait(timeout: .now() + Self.seconds + 60) == .success, "the load did not stop")

            #expect(shared.failures.withLock { $0 }.isEmpty, "\(shared.failures.withLock { $0 }.prefix(5))")
            let fresh = PersistentStoreCoordinator(managedObjectModel: stack.model)
            try fresh.addPersistentStore(type: .sqlite, at: stack.url)
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = fresh
            let stored = Set(try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).compactMap { try $0.value(forKey: "name") as? String })
            let names = shared.expected.withLock { $0 }
            #expect(stored == names, "missing \(names.subtracting(stored).prefix(5)), unexpected \(stored.subtracting(names).prefix(5))")
            #expect(try StoreInvariants.violations(at: stack.url, model: stack.model).isEmpty)
            for observer in observers {
                let problems = observer.finish(expectedItemNames: stored)
                #expect(problems.isEmpty, "\(type(of: observer)): \(problems)")
            }
            let (afterWarmUp, peak) = shared.memory.withLock { $0 }
            let growth = peak - afterWarmUp
            print("SoakTests: \(Self.seconds) s, \(shared.saves.load(ordering: .relaxed)) saves, \(shared.fetches.load(ordering: .relaxed)) reader fetches, "
                  + "\(shared.completed.load(ordering: .relaxed)) asynchronous fetches completed, \(shared.cancelled.load(ordering: .relaxed)) cancelled; "
                  + "RSS \(afterWarmUp >> 20) MB after warm-up, peak \(peak >> 20) MB (growth \(growth >> 10) KB)")
            #expect(growth < Self.growthBound, "RSS grew \(growth >> 20) MB after the warm-up")
        }
    }
}

/// What the soak's threads share.
final class SoakState: Sendable {
    struct Stuck: Error {}
    let writing = Atomic<Bool>(true)
    let failures = Mutex<[String]>([])
    let saves = Atomic<Int>(0), fetches = Atomic<Int>(0), cancelled = Atomic<Int>(0), completed = Atomic<Int>(0)
    /// The item names the writer's last successful save left in the store.
    let expected = Mutex<Set<String>>([])
    let memory = Mutex<(afterWarmUp: Int, peak: Int)>((0, 0))
    func record(_ what: String, _ error: Error) {
        failures.withLock { $0.append("\(what): \(error)") }
    }
}
