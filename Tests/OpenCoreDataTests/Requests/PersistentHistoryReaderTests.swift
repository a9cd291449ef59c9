import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Registered history readers: pruning never removes a transaction a registered reader has not seen,
/// whichever process prunes, until the reader moves its mark or unregisters. Checked against a naive
/// reference, and across two real processes (the crash worker as the reader).
@Suite struct PersistentHistoryReaderTests {
    typealias Stack = PersistentHistoryTests.Stack

    static func save(_ context: ManagedObjectContext, title: String) throws {
        let note = try context.insertNewObject(forEntityName: "Note")
        try note.setValue(title, forKey: "title")
        try context.save()
    }

    static func numbers(_ context: ManagedObjectContext) throws -> [Int64] {
        try PersistentHistoryTests.history(context).transactions.map(\.transactionNumber)
    }

    static func prune(_ context: ManagedObjectContext, before token: PersistentHistoryToken?) throws -> PersistentHistoryResult {
        try #require(try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: token)) as? PersistentHistoryResult)
    }

    @Test func pruningKeepsWhatARegisteredReaderHasNotSeenAndSaysWhoKeptIt() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let context = stack.context(coordinator)
        for index in 1...4 { try Self.save(context, title: "N\(index)") }
        let all = try PersistentHistoryTests.history(context).transactions
        try coordinator.registerPersistentHistoryReader(named: "indexer", seenThrough: all[0].token)
        try coordinator.registerPersistentHistoryReader(named: "sync", seenThrough: all[2].token)

        let first = try Self.prune(context, before: all[3].token)
        #expect(first.count == 1)
        #expect(first.heldBackByReaders == ["indexer", "sync"])
        #expect(try Self.numbers(context) == all[1...].map(\.transactionNumber))
        // The unseen transactions keep their changes too.
        #expect(try PersistentHistoryTests.history(context, after: all[0].token).transactions.allSatisfy { $0.changes?.count == 1 })

        // A prune that reaches no further than every reader's mark deletes what it asked for.
        try coordinator.registerPersistentHistoryReader(named: "indexer", seenThrough: all[2].token)
        let second = try Self.prune(context, before: all[1].token)
        #expect(second.count == 1 && second.heldBackByReaders.isEmpty)

        // Once the last reader that had not seen a transaction unregisters, it goes.
        #expect(try coordinator.unregisterPersistentHistoryReader(named: "indexer"))
        #expect(try !coordinator.unregisterPersistentHistoryReader(named: "indexer"))
        try coordinator.registerPersistentHistoryReader(named: "sync", seenThrough: all[3].token)
        let third = try Self.prune(context, before: nil)
        #expect(third.count == 2 && third.heldBackByReaders.isEmpty)
        #expect(try Self.numbers(context).isEmpty)
        #expect(try coordinator.persistentHistoryReaders().map(\.name) == ["sync"])
    }

    @Test func pruningByDateIsHeldBackToo() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let context = stack.context(coordinator)
        for index in 1...3 { try Self.save(context, title: "N\(index)") }
        let all = try PersistentHistoryTests.history(context).transactions
        try coordinator.registerPersistentHistoryReader(named: "late", seenThrough: all[0].token)
        let pruned = try #require(try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture))
                                  as? PersistentHistoryResult)
        #expect(pruned.count == 1 && pruned.heldBackByReaders == ["late"])
        #expect(try Self.numbers(context) == all[1...].map(\.transactionNumber))
    }

    @Test func aReaderRegisteredWithoutATokenKeepsEverything() throws {
        let stack = try Stack()
        let coordinator = try stack.coordinator()
        let context = stack.context(coordinator)
        for index in 1...2 { try Self.save(context, title: "N\(index)") }
        try coordinator.registerPersistentHistoryReader(named: "new", seenThrough: nil)
        let pruned = try Self.prune(context, before: nil)
        #expect(pruned.count == 0 && pruned.heldBackByReaders == ["new"])
        #expect(try Self.numbers(context).count == 2)
    }

    @Test func registrationsOutliveTheProcessAndTheTableIsMadeOnlyByARegistration() throws {
        let stack = try Stack()
        var token: PersistentHistoryToken?
        do {
            let coordinator = try stack.coordinator()
            try Self.save(stack.context(coordinator), title: "first")
            let tablesBefore = try DatabaseQueue(path: stack.url.path).read {
                try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE name = 'Z_OCDHISTORYREADER'")
            }
            #expect(tablesBefore.isEmpty)
            #expect(try coordinator.persistentHistoryReaders().isEmpty)
            token = try coordinator.currentPersistentHistoryToken()
            try coordinator.registerPersistentHistoryReader(named: "kept", seenThrough: token)
        }
        let reopened = try stack.coordinator()
        let readers = try reopened.persistentHistoryReaders()
        #expect(readers.map(\.name) == ["kept"] && readers.first?.seenThrough == token)
        // The store still opens for writing: the registry is no foreign object.
        try Self.save(stack.context(reopened), title: "second")
    }

    @Test func badRegistrationsAreRefusedNamingTheCulprit() throws {
        let stack = try Stack()
        let untracked = try stack.coordinator(tracking: false)
        #expect(throws: PersistentHistoryError.trackingOff(path: stack.url.path)) {
            try untracked.registerPersistentHistoryReader(named: "r", seenThrough: nil)
        }
        #expect(throws: PersistentHistoryError.trackingOff(path: stack.url.path)) {
            try untracked.unregisterPersistentHistoryReader(named: "r")
        }
        let coordinator = try stack.coordinator()
        #expect(throws: PersistentHistoryError.invalidReaderName("")) {
            try coordinator.registerPersistentHistoryReader(named: "", seenThrough: nil)
        }
        let long = String(repeating: "x", count: 257)
        #expect(throws: PersistentHistoryError.invalidReaderName(long)) {
            try coordinator.registerPersistentHistoryReader(named: long, seenThrough: nil)
        }
        let foreign = PersistentHistoryToken(storeIdentifier: "OTHER-STORE", transactionNumber: 1)
        #expect(throws: PersistentHistoryError.tokenOfAnotherStore(token: foreign.description, store: stack.url.path)) {
            try coordinator.registerPersistentHistoryReader(named: "r", seenThrough: foreign)
        }
        #expect(try coordinator.persistentHistoryReaders().isEmpty)
        // A name that reads like SQL is only a name.
        try coordinator.registerPersistentHistoryReader(named: "x'); DROP TABLE ATRANSACTION; --", seenThrough: nil)
        #expect(try coordinator.persistentHistoryReaders().map(\.name) == ["x'); DROP TABLE ATRANSACTION; --"])
    }

    /// Random saves, marks, unregistrations and prunes, against a reference that keeps a set of
    /// transaction numbers: a prune removes exactly those at or before both the request's point and every
    /// registered reader's mark, and names the readers that had not seen one it would have removed.
    @Test func randomPrunesMatchANaiveReference() throws {
        var random = SeededGenerator(seed: 2_611)
        for round in 0..<4 {
            let stack = try Stack()
            let coordinator = try stack.coordinator()
            let context = stack.context(coordinator)
            let store = try coordinator.primaryStore().identifier
            var live: [Int64] = []           // the reference: transactions still in the store
            var marks: [String: Int64] = [:] // registered readers
            for step in 0..<40 {
                switch Int.random(in: 0..<5, using: &random) {
                case 0, 1:
                    try Self.save(context, title: "r\(round)s\(step)")
                    live.append(try #require(try coordinator.currentPersistentHistoryToken()).transactionNumber)
                case 2:
                    let name = ["a", "b", "c"].randomElement(using: &random)!
                    let last = live.last ?? 0
                    let mark = Int64.random(in: 0...last, using: &random)
                    try coordinator.registerPersistentHistoryReader(
                        named: name, seenThrough: PersistentHistoryToken(storeIdentifier: store, transactionNumber: mark))
                    marks[name] = mark
                case 3:
                    let name = ["a", "b", "c"].randomElement(using: &random)!
                    #expect(try coordinator.unregisterPersistentHistoryReader(named: name) == (marks.removeValue(forKey: name) != nil))
                default:
                    let requested = Bool.random(using: &random) && Bool.random(using: &random) ? Int64.max : Int64.random(in: 0...((live.last ?? 0) + 1), using: &random)
                    let token = requested == .max ? nil : PersistentHistoryToken(storeIdentifier: store, transactionNumber: requested)
                    let result = try Self.prune(context, before: token)
                    let asked = live.filter { $0 <= requested }
                    let limit = min(requested, marks.values.min() ?? .max)
                    let removed = live.filter { $0 <= limit }
                    let heldBack = asked.last.map { newest in marks.filter { $0.value < newest }.keys.sorted() } ?? []
                    live.removeAll { $0 <= limit }
                    #expect(result.count == removed.count, "round \(round) step \(step)")
                    #expect(result.heldBackByReaders == heldBack, "round \(round) step \(step)")
                }
                #expect(try Self.numbers(context) == live, "round \(round) step \(step)")
            }
        }
    }

    /// The reader is another process (the crash worker): it registers, reads, and marks what it read; this
    /// process saves and prunes in between. Its unseen transactions survive every prune until it has read
    /// them.
    @Test(.enabled(if: WorkerProcess.executable != nil, WorkerProcess.missingMessage))
    func aReaderInAnotherProcessKeepsItsUnseenTransactionsThroughAPrune() throws {
        let directory = TemporaryDirectory()
        let store = directory.file("Readers.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try CrashModel.make())
        try coordinator.addPersistentStore(type: .sqlite, at: store, options: StoreOptions(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        func saveLabel(_ name: String) throws {
            let label = try context.insertNewObject(forEntityName: "Label")
            try label.setValue(name, forKey: "name")
            try context.save()
        }
        func readInWorker() throws -> [Int64] {
            let run = try WorkerProcess.run(["history-read", store.path, "indexer"])
            #expect(run.status == 0, "\(run.output)")
            let words = run.output.split(whereSeparator: \.isWhitespace)
            #expect(words.first == "read", "\(run.output)")
            return words.dropFirst().compactMap { Int64($0) }
        }

        try saveLabel("one")
        try saveLabel("two")
        let before = try Self.numbers(context)
        #expect(try readInWorker() == before)
        try saveLabel("three")
        try saveLabel("four")
        let unseen = try Self.numbers(context).filter { !before.contains($0) }
        #expect(unseen.count == 2)

        // This process prunes everything; the worker's unseen transactions stay.
        let pruned = try Self.prune(context, before: nil)
        #expect(pruned.count == before.count && pruned.heldBackByReaders == ["indexer"])
        #expect(try Self.numbers(context) == unseen)

        // The worker reads exactly them, and marks them seen; now they can go.
        #expect(try readInWorker() == unseen)
        let second = try Self.prune(context, before: nil)
        #expect(second.count == unseen.count && second.heldBackByReaders.isEmpty)
        #expect(try Self.numbers(context).isEmpty)
        #expect(try coordinator.persistentHistoryReaders().first?.seenThrough.transactionNumber == unseen.last)
    }
}
