import Foundation
import Synchronization
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Every persistent-history request, and the registry of history readers, answer the same on an SQLite file
/// and on a PostgreSQL server, through real coordinators and contexts; and the same as a naive reading of
/// the whole history (fetches) or a naive model of pruning (deletes).
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct StoreAgnosticHistoryTests {
    static let tracked = StoreOptions(persistentHistoryTracking: true)

    /// Writes seven transactions through one coordinator's context: the seed (author "seeder"), two updates
    /// and a delete ("editor", context "desk"), a batch update ("batcher"), an insert ("importer"), a
    /// cascading delete ("editor") and an update ("importer").
    static func writeHistory(_ location: SharedStoreLocation) throws {
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = try location.coordinator()
        context.transactionAuthor = "seeder"
        try ShelfModel.seed(context)
        context.transactionAuthor = "editor"
        context.name = "desk"
        let books = try context.fetch(bookRequest())
        try books[0].setValue("Book 00 revised", forKey: "title")
        try books[1].setValue(Int64(1), forKey: "pages")
        try context.save()
        context.delete(books[2])
        try context.save()
        context.transactionAuthor = "batcher"
        context.name = nil
        let update = BatchUpdateRequest(entityName: "Book")
        update.predicate = try QueryPredicate(format: "pages >= 180")
        update.propertiesToUpdate = ["pages": Int64(5)]
        _ = try context.execute(update)
        // The batch update went around the context: forget the versions it read before.
        context.reset()
        context.transactionAuthor = "importer"
        let author = try context.insertNewObject(forEntityName: "Author")
        try author.setValue("Author 9", forKey: "name")
        let book = try context.insertNewObject(forEntityName: "Book")
        try book.setValue("Book 99", forKey: "title")
        try book.setValue(author, forKey: "author")
        try context.save()
        context.transactionAuthor = "editor"
        context.delete(try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first {
            try $0.value(forKey: "name") as? String == "Author 0"
        }))
        try context.save()
        context.transactionAuthor = "importer"
        let green = FetchRequest<ManagedObject>(entityName: "Tag")
        green.predicate = try QueryPredicate(format: "label == 'green'")
        let tag = try #require(try context.fetch(green).first)
        try tag.setValue("renamed", forKey: "label")
        try context.save()
    }

    static func run(_ context: ManagedObjectContext, _ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        try #require(try context.execute(request) as? PersistentHistoryResult)
    }

    static func everything(_ context: ManagedObjectContext) throws -> [PersistentHistoryTransaction] {
        let after: PersistentHistoryToken? = nil
        return try run(context, .fetchHistory(after: after)).transactions
    }

    // MARK: Fetching

    /// A fetch request of the matrix below, made for one store (dates and tokens come from its own history).
    struct FetchCase {
        var label: String
        var request: PersistentHistoryChangeRequest
        /// The scope as a naive filter on the whole history.
        var selects: (PersistentHistoryTransaction) -> Bool
    }

    static func fetchCases(storeIdentifier: String, history: [PersistentHistoryTransaction]) throws -> [FetchCase] {
        func token(_ number: Int64) -> PersistentHistoryToken {
            PersistentHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: number)
        }
        let fourth = history[3].timestamp
        var scopes: [(String, () -> PersistentHistoryChangeRequest, (PersistentHistoryTransaction) -> Bool)] = [
            ("after nil", { .fetchHistory(after: Optional<PersistentHistoryToken>.none) }, { _ in true }),
            ("after #3", { .fetchHistory(after: token(3)) }, { $0.transactionNumber > 3 }),
            ("after #7", { .fetchHistory(after: token(7)) }, { _ in false }),
            ("after #100", { .fetchHistory(after: token(100)) }, { _ in false }),
            ("after transaction #5", { .fetchHistory(after: history[4]) }, { $0.transactionNumber > 5 }),
            ("after distant past", { .fetchHistory(after: Date.distantPast) }, { _ in true }),
            ("after the 4th's date", { .fetchHistory(after: fourth) }, { $0.timestamp > fourth }),
            ("after distant future", { .fetchHistory(after: Date.distantFuture) }, { _ in false }),
            ("numbers {}", { .fetchHistory(withTransactionNumbers: []) }, { _ in false }),
            ("numbers {2, 5, 6, 42}", { .fetchHistory(withTransactionNumbers: [2, 5, 6, 42]) }, { [2, 5, 6].contains($0.transactionNumber) }),
            // More numbers than one statement binds: read in several runs, still oldest first.
            ("numbers 1…1200 odd", { .fetchHistory(withTransactionNumbers: Set(stride(from: 1, through: 1200, by: 2))) },
             { $0.transactionNumber % 2 == 1 }),
        ]
        scopes.append(("numbers {7}", { .fetchHistory(withTransactionNumbers: [7]) }, { $0.transactionNumber == 7 }))
        let predicates: [(String?, String?)] = [(nil, nil), ("author == 'editor'", nil), (nil, "entityName == 'Book'"),
                                                 ("author != 'seeder'", "changeType == 2"), ("contextName == nil", "changeType == 1")]
        let types: [PersistentHistoryChangeRequest.ResultType] = [.transactionsAndChanges, .transactionsOnly, .changesOnly,
                                                                  .count, .transactionIDs, .statusOnly]
        var cases: [FetchCase] = []
        for (label, make, selects) in scopes {
            for limit in [0, 2] {
                for type in types {
                    for (predicate, changePredicate) in predicates {
                        let request = make()
                        request.fetchLimit = limit
                        request.resultType = type
                        request.predicate = try predicate.map { try QueryPredicate(format: $0) }
                        request.changePredicate = try changePredicate.map { try QueryPredicate(format: $0) }
                        cases.append(FetchCase(label: "\(label) limit \(limit) \(type) \(predicate ?? "-") \(changePredicate ?? "-")",
                                               request: request, selects: selects))
                    }
                }
            }
        }
        return cases
    }

    /// What a naive reading gives: the whole history filtered by the scope, cut at the limit, without
    /// changes when the result type shows none, then the request's predicates and shape.
    static func reference(_ fetch: FetchCase, history: [PersistentHistoryTransaction]) throws -> PersistentHistoryResult {
        var selected = history.filter(fetch.selects)
        if fetch.request.fetchLimit > 0 { selected = Array(selected.prefix(fetch.request.fetchLimit)) }
        if !fetch.request.needsChanges {
            selected = selected.map {
                .recorded(transactionNumber: $0.transactionNumber, timestamp: $0.timestamp, author: $0.author,
                          contextName: $0.contextName, bundleID: $0.bundleID, processID: $0.processID,
                          storeIdentifier: $0.storeIdentifier, changes: nil)
            }
        }
        return try fetch.request.result(from: selected)
    }

    /// Each fetch of the matrix (scopes × limits × result types × predicates) answers the same on both
    /// stores, and the same as the naive reading of the store's whole history.
    @Test func everyFetchAnswersAlikeOnBothStoresAndAsANaiveReading() throws {
        var answers: [StoreKind: [String]] = [:]
        for kind in [StoreKind.sqlite, .postgreSQL] {
            let location = try SharedStoreLocation(kind, model: ShelfModel.make(), options: Self.tracked)
            try Self.writeHistory(location)
            let context = try location.context()
            let history = try Self.everything(context)
            try #require(history.map(\.transactionNumber) == Array(1...7), "\(kind)")
            let describer = HistoryDescription(history: history)
            var lines: [String] = []
            let storeIdentifier = try #require(try context.persistentStoreCoordinator?.currentPersistentHistoryToken()).storeIdentifier
            for fetch in try Self.fetchCases(storeIdentifier: storeIdentifier, history: history) {
                let answer = describer.lines(try Self.run(context, fetch.request))
                #expect(answer == describer.lines(try Self.reference(fetch, history: history)), "\(kind) \(fetch.label)")
                lines.append("\(fetch.label): " + answer.joined(separator: " | "))
            }
            answers[kind] = lines
        }
        let sqlite = try #require(answers[.sqlite]), postgreSQL = try #require(answers[.postgreSQL])
        #expect(sqlite.count == postgreSQL.count)
        for (onSQLite, onPostgreSQL) in zip(sqlite, postgreSQL) { #expect(onSQLite == onPostgreSQL) }
    }

    /// A coordinator opened without history tracking reads (and prunes) the history another one recorded,
    /// on both stores; on a store that never had history, fetches are empty and prunes delete nothing.
    @Test(arguments: agnosticKinds)
    func aStoreOpenedWithoutTrackingReadsTheHistoryItHolds(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make(), options: Self.tracked)
        try Self.writeHistory(location)
        let history = try Self.everything(location.context())
        let untracked = ManagedObjectContext(concurrencyType: .confinement)
        untracked.persistentStoreCoordinator = try location.coordinator(options: StoreOptions())
        let describer = HistoryDescription(history: history)
        #expect(describer.lines(try Self.run(untracked, .fetchHistory(after: Optional<PersistentHistoryToken>.none)))
                == describer.lines(PersistentHistoryResult(resultType: .transactionsAndChanges, transactions: history, count: 7)))
        #expect(try untracked.persistentStoreCoordinator?.currentPersistentHistoryToken()?.transactionNumber == 7)
        #expect(try Self.run(untracked, .deleteHistory(before: history[1].token)).count == 2)

        let bare = try SharedStoreLocation(kind, model: ShelfModel.make())
        let context = try bare.context()
        try ShelfModel.seed(context)
        #expect(try Self.everything(context).isEmpty)
        #expect(try Self.run(context, .deleteHistory(before: Optional<PersistentHistoryToken>.none)).count == 0)
        #expect(try context.persistentStoreCoordinator?.currentPersistentHistoryToken()?.transactionNumber == 0)
        #expect(try context.persistentStoreCoordinator?.persistentHistoryReaders().isEmpty == true)
    }

    // MARK: Pruning and readers

    /// A naive model of pruning: the transactions left, the readers' marks.
    struct NaiveHistory {
        var remaining: [(number: Int64, timestamp: Date)]
        var readers: [String: Int64] = [:]

        /// Deletes what `selects` picks, but none after the oldest reader's mark; returns count and the
        /// readers that held some back, by name.
        mutating func prune(_ selects: (Int64, Date) -> Bool) -> (count: Int, heldBack: [String]) {
            var selected = remaining.filter { selects($0.number, $0.timestamp) }.map(\.number)
            var heldBack: [String] = []
            if let newest = selected.max(), let oldest = readers.values.min(), oldest < newest {
                heldBack = readers.filter { $0.value < newest }.map(\.key).sorted()
                selected = selected.filter { $0 <= oldest }
            }
            remaining.removeAll { selected.contains($0.number) }
            return (selected.count, heldBack)
        }
    }

    /// Pruning by token, by date and by transaction, with readers registering, moving and unregistering,
    /// does on both stores what the naive model does: the same counts, the same readers holding back, the
    /// same transactions left. New transactions keep counting up after everything was pruned.
    @Test(arguments: agnosticKinds)
    func pruningWithReadersMatchesANaiveModel(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make(), options: Self.tracked)
        try Self.writeHistory(location)
        let coordinator = try location.coordinator()
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        let history = try Self.everything(context)
        var naive = NaiveHistory(remaining: history.map { ($0.transactionNumber, $0.timestamp) })

        func register(_ name: String, _ seen: Int64?) throws {
            try coordinator.registerPersistentHistoryReader(named: name, seenThrough: seen.map { history[Int($0) - 1].token })
            naive.readers[name] = seen ?? 0
        }
        func prune(_ request: PersistentHistoryChangeRequest, _ selects: (Int64, Date) -> Bool) throws {
            let result = try Self.run(context, request)
            let expected = naive.prune(selects)
            #expect(result.count == expected.count && result.heldBackByReaders == expected.heldBack,
                    "\(kind): \(result.count) \(result.heldBackByReaders) against \(expected)")
            #expect(try Self.everything(context).map(\.transactionNumber) == naive.remaining.map(\.number), "\(kind)")
            let readers = try coordinator.persistentHistoryReaders()
            #expect(readers.map(\.name) == naive.readers.keys.sorted())
            #expect(readers.map(\.seenThrough.transactionNumber) == naive.readers.keys.sorted().map { naive.readers[$0]! })
        }

        try register("sync", 4)
        try register("indexer", 2)
        try prune(.deleteHistory(before: history[4].token)) { number, _ in number <= 5 }
        try register("indexer", 6)
        let fifth = history[4].timestamp
        try prune(.deleteHistory(before: fifth)) { _, date in date < fifth }
        #expect(try coordinator.unregisterPersistentHistoryReader(named: "sync"))
        #expect(try !coordinator.unregisterPersistentHistoryReader(named: "sync"))
        naive.readers["sync"] = nil
        try prune(.deleteHistory(before: Optional<PersistentHistoryToken>.none)) { _, _ in true }
        try register("late", nil)
        try prune(.deleteHistory(before: history[6])) { number, _ in number <= 7 }
        #expect(try coordinator.unregisterPersistentHistoryReader(named: "late"))
        #expect(try coordinator.unregisterPersistentHistoryReader(named: "indexer"))
        naive.readers = [:]
        try prune(.deleteHistory(before: Date.distantFuture)) { _, _ in true }
        #expect(try Self.everything(context).isEmpty)

        // Numbers are never reused: the next save is transaction 8.
        let tag = try context.insertNewObject(forEntityName: "Tag")
        try tag.setValue("after", forKey: "label")
        try context.save()
        #expect(try Self.everything(context).map(\.transactionNumber) == [8])
    }

    /// A reader that registers while another coordinator prunes without pause and a third saves: once the
    /// registration has returned, every transaction then in the history stays there (the prune that read
    /// the marks before it has finished deleting, or waits and sees it). Checked over many rounds, each
    /// letting prunes run between registrations.
    @Test(arguments: agnosticKinds)
    func aReaderRegisteringDuringPrunesKeepsWhatWasThere(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make(), options: Self.tracked)
        let writer = try location.context(.privateQueue), pruner = try location.context(.privateQueue)
        let registrant = try location.context(.privateQueue)
        let stopped = Mutex(false), prunes = Mutex(0), failures = Mutex<[String]>([])
        @Sendable func waitForPrunes(_ count: Int) -> Bool {
            let target = prunes.withLock { $0 } + count
            // Bounds a stalled pruner only; nothing is asserted about how long prunes take.
            let deadline = Date().addingTimeInterval(60)
            while prunes.withLock({ $0 }) < target {
                if Date() > deadline || stopped.withLock({ $0 }) { return false }
                Thread.sleep(forTimeInterval: 0.001)
            }
            return true
        }
        DispatchQueue.concurrentPerform(iterations: 3) { role in
            do {
                switch role {
                case 0:
                    for index in 0..<60 {
                        try writer.performAndWait {
                            let tag = try writer.insertNewObject(forEntityName: "Tag")
                            try tag.setValue("tag \(index)", forKey: "label")
                            try writer.save()
                        }
                    }
                case 1:
                    while !stopped.withLock({ $0 }) {
                        _ = try pruner.performAndWait {
                            try pruner.execute(PersistentHistoryChangeRequest.deleteHistory(before: Optional<PersistentHistoryToken>.none))
                        }
                        prunes.withLock { $0 += 1 }
                        // SQLite's busy handler is not fair: a connection writing without a pause can keep the
                        // others' writes waiting past their busy timeout.
                        if kind == .sqlite { Thread.sleep(forTimeInterval: 0.002) }
                    }
                default:
                    defer { stopped.withLock { $0 = true } }
                    let coordinator = try #require(registrant.persistentStoreCoordinator)
                    for round in 0..<20 {
                        try coordinator.registerPersistentHistoryReader(named: "late", seenThrough: nil)
                        let before = try Set(registrant.performAndWait { try Self.everything(registrant).map(\.transactionNumber) })
                        guard waitForPrunes(2) else { return failures.withLock { $0.append("the pruner stopped") } }
                        let after = try Set(registrant.performAndWait { try Self.everything(registrant).map(\.transactionNumber) })
                        if !before.isSubset(of: after) {
                            failures.withLock { $0.append("round \(round): lost \(before.subtracting(after).sorted())") }
                        }
                        try coordinator.unregisterPersistentHistoryReader(named: "late")
                        guard waitForPrunes(1) else { return failures.withLock { $0.append("the pruner stopped") } }
                    }
                }
            } catch {
                failures.withLock { $0.append("role \(role): \(error)") }
                stopped.withLock { $0 = true }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(kind): \(failures.withLock { $0 })")
    }

    /// A PostgreSQL store whose history predates the reader registry (the table dropped here) gets it on
    /// its next open with history, not on a read-only one; until then it lists no readers.
    @Test func postgreSQLAddsTheRegistryToAnOlderHistoryOnAWritableOpenOnly() throws {
        let configuration = try PostgreSQLTestServer.freshConfiguration(poolSize: 2)
        defer { PostgreSQLTestServer.drop(configuration) }
        let model = try ShelfModel.make()
        func registryExists(_ store: PostgreSQLStore) throws -> Bool {
            try store.pool.withSession { try PostgreSQLHistory.presence(in: $0).readerRegistry }
        }
        let first = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true)
        #expect(try registryExists(first))
        try first.pool.withSession { _ = try $0.execute("DROP TABLE \(HistoryReaderRegistry.table)") }
        first.close()
        var readOnly = Self.tracked
        readOnly.readOnly = true
        let reading = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true, options: readOnly)
        #expect(try !registryExists(reading))
        #expect(try reading.historyReaders().isEmpty)
        reading.close()
        let writing = try PostgreSQLStore(model: model, configuration: configuration, recordsHistory: true, options: Self.tracked)
        defer { writing.close() }
        #expect(try registryExists(writing))
        try writing.registerHistoryReader("indexer", seen: 0)
        #expect(try writing.historyReaders().map(\.name) == ["indexer"])
    }

    /// Refusals are the same on both stores: a token of another store (fetch, prune, register), readers on a
    /// store opened without tracking, a bad reader name, a prune or registration on a read-only store.
    @Test func refusalsAreTheSameOnBothStores() throws {
        var refusals: [StoreKind: [String]] = [:]
        for kind in [StoreKind.sqlite, .postgreSQL] {
            let location = try SharedStoreLocation(kind, model: ShelfModel.make(), options: Self.tracked)
            try Self.writeHistory(location)
            let coordinator = try location.coordinator()
            let context = ManagedObjectContext(concurrencyType: .confinement)
            context.persistentStoreCoordinator = coordinator
            let foreign = PersistentHistoryToken(storeIdentifier: "ANOTHER-STORE", transactionNumber: 2)
            let untracked = try location.coordinator(options: StoreOptions())
            var readOnlyOptions = Self.tracked
            readOnlyOptions.readOnly = true
            let readOnly = ManagedObjectContext(concurrencyType: .confinement)
            readOnly.persistentStoreCoordinator = try location.coordinator(options: readOnlyOptions)
            let attempts: [() throws -> Void] = [
                { _ = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: foreign)) },
                { _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: foreign)) },
                { try coordinator.registerPersistentHistoryReader(named: "r", seenThrough: foreign) },
                { try coordinator.registerPersistentHistoryReader(named: "", seenThrough: nil) },
                { try coordinator.registerPersistentHistoryReader(named: String(repeating: "x", count: 257), seenThrough: nil) },
                { try untracked.registerPersistentHistoryReader(named: "r", seenThrough: nil) },
                { _ = try untracked.unregisterPersistentHistoryReader(named: "r") },
                { _ = try readOnly.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture)) },
                { try readOnly.persistentStoreCoordinator?.registerPersistentHistoryReader(named: "r", seenThrough: nil) },
            ]
            var seen: [String] = []
            for attempt in attempts {
                do {
                    try attempt()
                    seen.append("no error")
                } catch let error as PersistentHistoryError {
                    switch error {
                    case .tokenOfAnotherStore(let token, _): seen.append("tokenOfAnotherStore \(token)")
                    case .trackingOff: seen.append("trackingOff")
                    case .invalidReaderName(let name): seen.append("invalidReaderName \(name.count)")
                    }
                } catch StoreError.readOnly {
                    seen.append("readOnly")
                }
            }
            // Nothing was pruned or registered.
            #expect(try Self.everything(context).count == 7)
            #expect(try coordinator.persistentHistoryReaders().isEmpty)
            refusals[kind] = seen
        }
        #expect(refusals[.sqlite] == ["tokenOfAnotherStore ANOTHER-STORE:2", "tokenOfAnotherStore ANOTHER-STORE:2",
                                      "tokenOfAnotherStore ANOTHER-STORE:2", "invalidReaderName 0", "invalidReaderName 257",
                                      "trackingOff", "trackingOff", "readOnly", "readOnly"])
        #expect(refusals[.postgreSQL] == refusals[.sqlite])
    }

    // MARK: Tombstones

    /// Boxes of items, an item's subentity (crates, in the items' table) with one more preserved attribute;
    /// every kind of value preserved, and one attribute that is not.
    static func tombstoneModel() throws -> ManagedObjectModel {
        func preserved(_ attribute: AttributeDescription) { attribute.preservesValueInHistoryOnDeletion = true }
        return try ManagedObjectModel {
            EntityDescription("Box") {
                Attribute("name", .string, configure: preserved)
                ToMany("items", "Item", inverse: "box", deleteRule: .cascade)
            }
            EntityDescription("Item") {
                Attribute("label", .string, configure: preserved)
                Attribute("count", .integer64, configure: preserved)
                Attribute("weight", .double, configure: preserved)
                Attribute("fragile", .boolean, configure: preserved)
                Attribute("packed", .date, configure: preserved)
                Attribute("photo", .binaryData, configure: preserved)
                Attribute("note", .string)
                ToOne("box", "Box", inverse: "items")
            }
            EntityDescription("Crate", parent: "Item") {
                Attribute("grade", .integer16, configure: preserved)
            }
        }
    }

    /// The tombstone an item `index` (a crate when `crate`) seeded by ``seedBoxes(_:)`` must leave.
    static func expectedTombstone(item index: Int, crate: Bool) -> [String: PersistentHistoryChange.TombstoneValue] {
        var values: [String: PersistentHistoryChange.TombstoneValue] = [
            "label": .text("item \(index)"), "count": .integer(Int64(index * 7)), "weight": .real(Double(index) + 0.25),
            "fragile": .integer(index % 2 == 0 ? 1 : 0), "packed": .real(1_000_000.5 + Double(index)),
            "photo": index % 3 == 0 ? .null : .data(Data([UInt8(index), 0, 255])),
        ]
        if crate { values["grade"] = .integer(Int64(index)) }
        return values
    }

    /// Two boxes of four items each (the last of each a crate); returns nothing, the values follow the index.
    static func seedBoxes(_ context: ManagedObjectContext) throws {
        for boxIndex in 0..<2 {
            let box = try context.insertNewObject(forEntityName: "Box")
            try box.setValue("box \(boxIndex)", forKey: "name")
            for index in boxIndex * 4..<boxIndex * 4 + 4 {
                let crate = index % 4 == 3
                let item = try context.insertNewObject(forEntityName: crate ? "Crate" : "Item")
                try item.setValue("item \(index)", forKey: "label")
                try item.setValue(Int64(index * 7), forKey: "count")
                try item.setValue(Double(index) + 0.25, forKey: "weight")
                try item.setValue(index % 2 == 0, forKey: "fragile")
                try item.setValue(Date(timeIntervalSinceReferenceDate: 1_000_000.5 + Double(index)), forKey: "packed")
                if index % 3 != 0 { try item.setValue(Data([UInt8(index), 0, 255]), forKey: "photo") }
                try item.setValue("not kept", forKey: "note")
                if crate { try item.setValue(Int16(index), forKey: "grade") }
                try item.setValue(box, forKey: "box")
            }
        }
        try context.save()
    }

    /// Deleting objects whose attributes are preserved after deletion keeps their values in the history's
    /// delete changes (tombstones), by a save (a plain delete, a cascade), by a batch delete (by predicate,
    /// and one that cascades), on both stores alike, and as the seeded values say.
    @Test func tombstonesOfSavesAndBatchDeletesAreTheSameOnBothStores() throws {
        var results: [StoreKind: [String]] = [:]
        for kind in [StoreKind.sqlite, .postgreSQL] {
            let location = try SharedStoreLocation(kind, model: Self.tombstoneModel(), options: Self.tracked)
            let context = try location.context()
            try Self.seedBoxes(context)
            func fetch(_ entity: String, _ format: String) throws -> ManagedObject {
                let request = FetchRequest<ManagedObject>(entityName: entity)
                request.predicate = try QueryPredicate(format: format)
                return try #require(try context.fetch(request).first, "\(kind) \(format)")
            }
            // A save: item 1 alone, then box 0 with items 0, 2 and crate 3 (a cascade).
            context.delete(try fetch("Item", "label == 'item 1'"))
            try context.save()
            context.delete(try fetch("Box", "name == 'box 0'"))
            try context.save()
            // Batch deletes: items 4 and 5 by predicate, then box 1 by ID, cascading to item 6 and crate 7.
            let byPredicate = FetchRequest<ManagedObject>(entityName: "Item")
            byPredicate.predicate = try QueryPredicate(format: "count IN {28, 35}")
            _ = try context.execute(BatchDeleteRequest(fetchRequest: byPredicate))
            _ = try context.execute(BatchDeleteRequest(objectIDs: [try fetch("Box", "name == 'box 1'").objectID]))

            let transactions = try Self.everything(context)
            try #require(transactions.count == 5, "\(kind): \(transactions.count) transactions")
            var lines: [String] = []
            for (number, transaction) in transactions.enumerated() where number > 0 {
                for change in (transaction.changes ?? []).filter({ $0.changeType == .delete }) {
                    let tombstone = try #require(change.tombstone, "\(kind): a delete without tombstone")
                    let entity = change.changedObjectID.entity.name
                    if entity == "Box" {
                        #expect(tombstone.count == 1 && tombstone["name"] != nil, "\(kind)")
                    } else {
                        guard case .text(let label) = tombstone["label"], let index = Int(label.dropFirst(5)) else {
                            Issue.record("\(kind): \(tombstone)")
                            continue
                        }
                        #expect(tombstone == Self.expectedTombstone(item: index, crate: entity == "Crate"), "\(kind) \(label)")
                    }
                    lines.append("#\(number + 1) \(entity) " + tombstone.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " "))
                }
            }
            #expect(lines.count == 10, "\(kind): \(lines)")
            results[kind] = lines.sorted()
        }
        #expect(results[.postgreSQL] == results[.sqlite])
    }

    // MARK: The change feed across a prune

    /// Another coordinator's change feed goes on after the history it had read up to is pruned: the next
    /// save reaches its automatically merging context, and fetching after its old token (pointing into
    /// the pruned history) gives the transactions after it that are left.
    @Test(arguments: agnosticKinds)
    func aPruneDoesNotBreakAnotherCoordinatorsChangeFeed(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: ShelfModel.make(),
                                               options: StoreOptions(persistentHistoryTracking: true, remoteChangeNotifications: true))
        let writer = try location.context()
        func save(_ title: String) throws {
            let book = try writer.insertNewObject(forEntityName: "Book")
            try book.setValue(title, forKey: "title")
            try writer.save()
        }
        try save("one")
        let reader = ManagedObjectContext(concurrencyType: .privateQueue)
        reader.persistentStoreCoordinator = try location.coordinator()
        reader.automaticallyMergesChangesFromParent = true
        let controller = try reader.performAndWait {
            let controller = try FetchedResultsController(fetchRequest: try bookRequest(), managedObjectContext: reader,
                                                          sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            return controller
        }
        func shown() throws -> [String] {
            try reader.performAndWait { try titles(Array(controller.fetchedObjects.map(Array.init) ?? [])) }
        }
        try save("two")
        #expect(try PostgreSQLRemoteChangeTests.eventually { try shown() == ["one", "two"] })
        let readerToken = try #require(try reader.performAndWait { try Self.everything(reader).last?.token })

        #expect(try Self.run(writer, .deleteHistory(before: Optional<PersistentHistoryToken>.none)).count == 2)
        try save("three")
        try save("four")
        #expect(try PostgreSQLRemoteChangeTests.eventually { try shown() == ["four", "one", "three", "two"] }, "\(kind)")
        let after = try reader.performAndWait { try Self.run(reader, .fetchHistory(after: readerToken)) }
        #expect(after.transactions.map(\.transactionNumber) == [3, 4])
    }
}

/// A history result spelled out without what differs between stores by nature (store UUID, timestamps,
/// change IDs): each object by its entity and the rank of its key among that entity's keys in the store's
/// whole history, so two stores that went through the same saves give the same lines.
struct HistoryDescription {
    private var ranks: [String: [Int64: Int]] = [:]

    init(history: [PersistentHistoryTransaction]) {
        var keys: [String: Set<Int64>] = [:]
        for change in history.flatMap({ $0.changes ?? [] }) {
            keys[change.changedObjectID.entity.name, default: []].insert(change.changedObjectID.primaryKey)
        }
        for (entity, entityKeys) in keys {
            ranks[entity] = Dictionary(uniqueKeysWithValues: entityKeys.sorted().enumerated().map { ($1, $0) })
        }
    }

    func line(_ change: PersistentHistoryChange) -> String {
        let id = change.changedObjectID
        let rank = ranks[id.entity.name]?[id.primaryKey].map(String.init) ?? "?\(id.primaryKey)"
        let keys = change.updatedProperties.map { "[" + $0.sorted().joined(separator: ",") + "]" } ?? ""
        let tombstone = change.tombstone.map { " tombstone \($0.count)" } ?? ""
        return "\(change.changeType) \(id.entity.name)#\(rank)\(keys)\(tombstone) in #\(change.transactionNumber)"
    }

    func lines(_ result: PersistentHistoryResult) -> [String] {
        var lines = ["\(result.resultType) count \(result.count) numbers \(result.transactionNumbers)"]
        for transaction in result.transactions {
            let changes = transaction.changes.map { "changes: " + $0.map(line).sorted().joined(separator: ", ") } ?? "no changes"
            lines.append("#\(transaction.transactionNumber) \(transaction.author ?? "-") \(transaction.contextName ?? "-") "
                + "\(transaction.processID ?? "-") \(changes)")
        }
        lines += result.changes.map(line).sorted()
        return lines
    }
}
