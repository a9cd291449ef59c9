import Foundation
import OpenCoreData

// Issue 7, the fetched results controller: FetchedResultsController over all N items with
// fetchBatchSize 20, sorted by createdAt (the same order as Z_PK in the fixture), optionally in 50
// sections by `category` (i mod 50).

enum ResultsControllerScenarios {
    static let all: [Scenario] = [fetch, fetchSections, insertOne, thousandChanges, batchOnAccess, batchOnAccessTyped]

    static let batchSize = 20

    static func makeController(_ context: ManagedObjectContext, sections: Bool) throws -> FetchedResultsController<ManagedObject> {
        try makeController(context, sections: sections, request: FetchRequest<ManagedObject>(entityName: "Item"))
    }

    /// A controller of the request's result type (`FetchRequest<BenchItem>()` gives `BenchItem`s).
    static func makeController<Result>(_ context: ManagedObjectContext, sections: Bool,
                                       request: FetchRequest<Result>) throws -> FetchedResultsController<Result> {
        request.fetchBatchSize = batchSize
        request.sortDescriptors = sections
            ? [QuerySortDescriptor(key: "category"), QuerySortDescriptor(key: "createdAt")]
            : [QuerySortDescriptor(key: "createdAt")]
        return try FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                            sectionNameKeyPath: sections ? "category" : nil, cacheName: nil)
    }

    /// rows + 1,000 × sections, on both sides.
    static func checksum(rows: Int, sections: Int) -> Int { rows + 1000 * sections }

    /// performFetch, with or without sections; memory growth per row measured after it.
    static func fetchScenario(sections: Bool) -> Scenario {
        Scenario(
            name: sections ? "frc-fetch-sections" : "frc-fetch", targetRatio: sections ? 1.5 : 1.3,
            summary: sections
                ? "FetchedResultsController over all N items, fetchBatchSize 20, sectionNameKeyPath category (50 values), sorted by category then createdAt: performFetch. bytes_per_row: RSS growth from before the controller is made to after performFetch (heap trimmed), divided by N (target ≤ 40). Raw: SELECT Z_PK, ZCATEGORY … ORDER BY ZCATEGORY, ZCREATEDAT, Z_PK into [Int64] plus section sizes. Peer: a GRDB ValueObservation of the records ordered by category, createdAt, split into sections, started and waited for until its first value."
                : "FetchedResultsController over all N items, fetchBatchSize 20, sorted by createdAt, no sections: performFetch. bytes_per_row: RSS growth from before the controller is made to after performFetch (heap trimmed), divided by N (target ≤ 40). Raw: SELECT Z_PK FROM ZITEM ORDER BY ZCREATEDAT, Z_PK into [Int64]. Peer: a GRDB ValueObservation of the records ordered by createdAt, started and waited for until its first value."
        ) { size, fixtures in
            let url = try fixtures.populatedStore(size: size)
            let figures = Figures([FigureSpec("bytes_per_row", .median, target: 40, unit: "B", measuredIn: .memory)])
            return ScenarioRun(rows: size, ours: {
                let coordinator = try fixtures.openCoordinator(url)
                return {
                    let context = fixtures.makeContext(coordinator)
                    return try context.performAndWait {
                        // Memory is read in the memory run only: the trims would be timed.
                        let measuresMemory = RunKind.current == .memory
                        if measuresMemory { ProcessMemory.trimHeap() }
                        let before = measuresMemory ? ProcessMemory.residentBytes() : 0
                        let controller = try makeController(context, sections: sections)
                        try controller.performFetch()
                        if measuresMemory {
                            ProcessMemory.trimHeap()
                            let after = ProcessMemory.residentBytes()
                            figures.record("bytes_per_row", Double(after - before) / Double(max(1, size)))
                        }
                        let counts = controller.sections?.map(\.numberOfObjects) ?? []
                        return checksum(rows: counts.reduce(0, +), sections: counts.count)
                    }
                }
            }, raw: {
                let db = try RawConnection(path: url.path)
                return {
                    if !sections {
                        let select = try db.prepare("SELECT Z_PK FROM ZITEM ORDER BY ZCREATEDAT, Z_PK")
                        var ids: [Int64] = []
                        while try select.step() { ids.append(select.int64(0)) }
                        return checksum(rows: ids.count, sections: 1)
                    }
                    let select = try db.prepare("SELECT Z_PK, ZCATEGORY FROM ZITEM ORDER BY ZCATEGORY, ZCREATEDAT, Z_PK")
                    var ids: [Int64] = []
                    var sectionSizes: [Int] = []
                    var current: Int64?
                    while try select.step() {
                        ids.append(select.int64(0))
                        let category = select.int64(1)
                        if category != current { sectionSizes.append(0); current = category }
                        sectionSizes[sectionSizes.count - 1] += 1
                    }
                    return checksum(rows: ids.count, sections: sectionSizes.count)
                }
            }, peer: {
                let pool = try PeerBaselines.pool(url)
                return { try PeerBaselines.observeOnce(pool, sections: sections, rows: size) }
            }, figures: figures)
        }
    }

    static let fetch = fetchScenario(sections: false)
    static let fetchSections = fetchScenario(sections: true)

    /// Records when the controller's reports end.
    final class ReportClock: FetchedResultsControllerDelegate {
        var didChangeTimes: [Double] = []
        var objectChanges = 0
        func controller(_ controller: FetchedResultsController<ManagedObject>, didChange object: ManagedObject,
                        at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            objectChanges += 1
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController<ManagedObject>) {
            didChangeTimes.append(monotonicSeconds())
        }
    }

    /// A controller over a private copy of the N-item store, fetched, with a delegate (all untimed).
    static func liveController(size: Int, fixtures: Fixtures)
        throws -> (context: ManagedObjectContext, controller: FetchedResultsController<ManagedObject>, clock: ReportClock) {
        let coordinator = try fixtures.openCoordinator(try fixtures.copyOfPopulatedStore(size: size))
        let context = fixtures.makeContext(coordinator)
        let clock = ReportClock()
        let controller = try context.performAndWait {
            let controller = try makeController(context, sections: false)
            controller.delegate = clock
            try controller.performFetch()
            return controller
        }
        return (context, controller, clock)
    }

    /// Inserts `count` new items (after every existing one in createdAt order), saves, and returns ms
    /// from just before `save()` to the last did-change-content report, and the save alone.
    static func insertAndSave(count: Int, serial: Int, size: Int, context: ManagedObjectContext,
                              clock: ReportClock) throws -> (delivery: Double, save: Double, reports: Int) {
        let (start, saved) = try context.performAndWait {
            clock.didChangeTimes = []
            for k in 0..<count {
                let i = size + serial * count + k + 1
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue(Seed.name(i), forKey: "name")
                try item.setValue(Date(timeIntervalSinceReferenceDate: Seed.createdAt(i)), forKey: "createdAt")
                try item.setValue(Seed.group(i), forKey: "group")
                try item.setValue(Seed.category(i), forKey: "category")
            }
            let start = monotonicSeconds()
            try context.save()
            return (start, monotonicSeconds())
        }
        // Anything the save queued on the context's queue has run once this returns.
        let times = context.performAndWait { clock.didChangeTimes }
        guard let last = times.last, last >= start else {
            throw ScenarioSkipped(reason: "the controller's delegate heard nothing after save()")
        }
        return ((last - start) * 1000, (saved - start) * 1000, times.count)
    }

    /// (7b) One inserted object in an N-row controller.
    static let insertOne = Scenario(
        name: "frc-insert-one", targetRatio: nil,
        summary: "A fetched controller over N items (batch size 20, sorted by createdAt, delegate set; untimed). Timed: 20 times, insert one item and save(); delivery_ms = from just before save() to the delegate's last controllerDidChangeContent (median over all saves, target ≤ 2 ms). save_ms = save() alone. No raw side. Peer: a GRDB ValueObservation of the records ordered by createdAt on a copy of the store (started untimed); timed: the same saves as one-item write transactions, each waited for until the observed list holds it; peer_delivery_ms = from before the write to the list's new value."
    ) { size, fixtures in
        let saves = 20
        let figures = Figures([
            FigureSpec("delivery_ms", .median, target: 2), FigureSpec("delivery_p99_ms", .p99),
            FigureSpec("save_ms", .median), FigureSpec("reports_per_save", .median, unit: "reports"),
            FigureSpec("peer_delivery_ms", .median),
        ])
        return ScenarioRun(rows: size, ours: {
            let (context, controller, clock) = try liveController(size: size, fixtures: fixtures)
            return {
                try withExtendedLifetime(controller) {
                    for serial in 0..<saves {
                        let timing = try insertAndSave(count: 1, serial: serial, size: size, context: context, clock: clock)
                        figures.record("delivery_ms", timing.delivery)
                        figures.record("delivery_p99_ms", timing.delivery)
                        figures.record("save_ms", timing.save)
                        figures.record("reports_per_save", Double(timing.reports))
                    }
                }
                return context.performAndWait { controller.sections?.first?.numberOfObjects ?? 0 }
            }
        }, raw: nil, peer: {
            let pool = try PeerBaselines.pool(try fixtures.copyOfPopulatedStore(size: size))
            let entity = try PeerBaselines.itemEntityNumber(pool)
            let list = PeerLiveList(pool: pool, sections: false)
            _ = try list.waitForCount(size, what: "the peer observation's first value")
            return {
                try PeerBaselines.insertAndObserve(pool, list: list, start: size, saves: saves, count: 1, entity: entity) {
                    figures.record("peer_delivery_ms", $0)
                }
            }
        }, note: "\(saves) saves of one insert per timed run; the time column is their total", figures: figures)
    }

    /// (7c) 1,000 changes in one save.
    static let thousandChanges = Scenario(
        name: "frc-1000-changes", targetRatio: nil,
        summary: "As frc-insert-one, but each save carries 1,000 inserted items; 3 saves per timed run. delivery_ms: just before save() → the delegate's last controllerDidChangeContent (median, target ≤ 50 ms). No raw side. Peer: as in frc-insert-one, each write inserting 1,000 records."
    ) { size, fixtures in
        let saves = 3
        let figures = Figures([
            FigureSpec("delivery_ms", .median, target: 50), FigureSpec("save_ms", .median),
            FigureSpec("reports_per_save", .median, unit: "reports"), FigureSpec("peer_delivery_ms", .median),
        ])
        return ScenarioRun(rows: size, ours: {
            let (context, controller, clock) = try liveController(size: size, fixtures: fixtures)
            return {
                try withExtendedLifetime(controller) {
                    for serial in 0..<saves {
                        let timing = try insertAndSave(count: 1000, serial: serial, size: size, context: context, clock: clock)
                        figures.record("delivery_ms", timing.delivery)
                        figures.record("save_ms", timing.save)
                        figures.record("reports_per_save", Double(timing.reports))
                    }
                }
                return context.performAndWait { controller.sections?.first?.numberOfObjects ?? 0 }
            }
        }, raw: nil, peer: {
            let pool = try PeerBaselines.pool(try fixtures.copyOfPopulatedStore(size: size))
            let entity = try PeerBaselines.itemEntityNumber(pool)
            let list = PeerLiveList(pool: pool, sections: false)
            _ = try list.waitForCount(size, what: "the peer observation's first value")
            return {
                try PeerBaselines.insertAndObserve(pool, list: list, start: size, saves: saves, count: 1000, entity: entity) {
                    figures.record("peer_delivery_ms", $0)
                }
            }
        }, note: "\(saves) saves of 1,000 inserts per timed run; the time column is their total", figures: figures)
    }

    /// (7d) Batches of 20 loaded on access through the controller, each name read with `value(forKey:)`.
    static let batchOnAccess = batchOnAccessScenario(typed: false)

    /// (7e) The same, each name read through a typed `@Managed` property of an `Item` subclass.
    static let batchOnAccessTyped = batchOnAccessScenario(typed: true)

    /// The timed body of the batch-access scenarios: each chosen batch's 20 objects by index path, and
    /// `read` of each.
    static func readBatches<Result>(_ batchIndexes: [Int], of controller: FetchedResultsController<Result>,
                                    in context: ManagedObjectContext, read: (Result) throws -> Int) throws -> Int {
        try context.performAndWait {
            var checksum = 0
            let count = controller.sections?.first?.numberOfObjects ?? 0
            for batch in batchIndexes {
                let range = (batch * batchSize)..<min(batch * batchSize + batchSize, count)
                for index in range {
                    checksum &+= try read(try controller.object(at: IndexPath(item: index, section: 0)))
                }
                checksum &+= range.count
            }
            return checksum
        }
    }

    static func batchOnAccessScenario(typed: Bool) -> Scenario {
        Scenario(
            name: typed ? "frc-batch-typed" : "frc-batch-on-access", targetRatio: 1.3,
            summary: "A fetched controller over N items (batch size 20, sorted by createdAt; made and fetched untimed). Timed: min(1000, N/20) random batch-aligned runs of 20 index paths, object(at:) and name of each (the first access loads the batch)"
                + (typed ? ", through a FetchedResultsController<Item> over FetchRequest<Item>() (Item a subclass), the name read through its typed @Managed property" : ", the name read with value(forKey:)")
                + ". Raw: the same IDs in the same order, one prepared 20-placeholder SELECT … WHERE Z_PK IN (…) per batch."
        ) { size, fixtures in
            let url = try fixtures.populatedStore(size: size)
            let batchCount = max(1, size / batchSize)
            let sampleCount = min(1000, batchCount)
            var generator = SeededGenerator(seed: 0xF2C_BA7C4 &+ UInt64(size))
            var chosen = Array(0..<batchCount)
            chosen.shuffle(using: &generator)
            let batchIndexes = Array(chosen.prefix(sampleCount))
            // The store stays open across runs on both sides, as in an app: each run is a new screen.
            let coordinator = try fixtures.openCoordinator(url, typed: typed)
            let rawIDs = try RawBaselines.keys(path: url.path, sql: "SELECT Z_PK FROM ZITEM ORDER BY ZCREATEDAT, Z_PK")
            let rawDB = try RawConnection(path: url.path)
            return ScenarioRun(rows: sampleCount * batchSize, ours: {
                let context = fixtures.makeContext(coordinator)
                if typed {
                    // A typed controller hands out `BenchItem`s: no cast at the call site.
                    let controller = try context.performAndWait {
                        let controller = try makeController(context, sections: false, request: FetchRequest<BenchItem>())
                        try controller.performFetch()
                        return controller
                    }
                    return { try readBatches(batchIndexes, of: controller, in: context) { $0.name?.utf8.count ?? 0 } }
                }
                let controller = try context.performAndWait {
                    let controller = try makeController(context, sections: false)
                    try controller.performFetch()
                    return controller
                }
                return {
                    try readBatches(batchIndexes, of: controller, in: context) {
                        (try $0.value(forKey: "name") as? String)?.utf8.count ?? 0
                    }
                }
            }, raw: {
                let ids = rawIDs, db = rawDB
                let batches = batchIndexes.map { batch in
                    Array(ids[(batch * batchSize)..<min(batch * batchSize + batchSize, ids.count)])
                }
                return { try RawBaselines.loadBatches(db, batches: batches) }
            }, note: "\(sampleCount) random batches of 20 per timed run", perRunDivisor: (key: "us_per_batch", count: sampleCount))
        }
    }
}
