import Foundation
import OpenCoreData

// Persistent history and remote changes (docs/HISTORY.md): what recording history adds to a save, reading
// many transactions back against raw SQLite, and how soon another coordinator hears of a commit.

enum HistoryScenarios {
    static let all: [Scenario] = [save, fetch, remoteLatency]

    static let objectsPerSave = 1000
    static let savesPerRun = 10

    static func options(history: Bool, watch: Bool = false) -> StoreOptions {
        StoreOptions(persistentHistoryTracking: history, remoteChangeNotifications: watch)
    }

    /// Inserts `objectsPerSave` items and saves, `savesPerRun` times; returns the objects saved.
    static func saveBatches(_ context: ManagedObjectContext) throws -> Int {
        try context.performAndWait {
            var saved = 0
            for batch in 0..<savesPerRun {
                for offset in 1...objectsPerSave {
                    let i = batch * objectsPerSave + offset
                    let item = try context.insertNewObject(forEntityName: "Item")
                    try item.setValue(Seed.name(i), forKey: "name")
                    try item.setValue(Date(timeIntervalSinceReferenceDate: Seed.createdAt(i)), forKey: "createdAt")
                    try item.setValue(Seed.group(i), forKey: "group")
                }
                try context.save()
                context.reset()
                saved += objectsPerSave
            }
            return saved
        }
    }

    /// (8a) Saves with history on, against the same saves with it off.
    static let save = Scenario(
        name: "history-save", targetRatio: 1.3,
        summary: "10 saves of 1,000 new Items each (name, createdAt, group) into an empty store with persistent history tracking on: each save also writes its ATRANSACTION row and 1,000 ACHANGE rows in the same transaction. The 'raw' column here is the same saves through the library with history off (the cost of history is the ratio). N does not change the work."
    ) { _, fixtures in
        func side(history: Bool) -> PreparedRun {
            {
                let url = fixtures.freshURL(history ? "history-on" : "history-off")
                try fixtures.createEmptyStore(at: url)
                let coordinator = PersistentStoreCoordinator(managedObjectModel: fixtures.model)
                try coordinator.addPersistentStore(type: .sqlite, at: url, options: options(history: history))
                return { try saveBatches(fixtures.makeContext(coordinator)) }
            }
        }
        return ScenarioRun(rows: objectsPerSave * savesPerRun, ours: side(history: true), raw: side(history: false),
                           note: "raw = the library with history off")
    }

    /// A store whose history holds `count` transactions of one inserted item each (made once per count).
    private static let historyStores = Shared<[Int: URL]>([:])

    static func storeWithHistory(transactions count: Int, fixtures: Fixtures) throws -> URL {
        if let url = historyStores.value[count], FileManager.default.fileExists(atPath: url.path) { return url }
        let url = fixtures.directory.appendingPathComponent("history-\(count).sqlite")
        fixtures.remove(url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: fixtures.model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: options(history: true))
        let context = fixtures.makeContext(coordinator)
        context.transactionAuthor = "bench"
        try context.performAndWait {
            for i in 1...count {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue(Seed.name(i), forKey: "name")
                try context.save()
                context.reset()
            }
        }
        historyStores.update { $0[count] = url }
        return url
    }

    /// (8b) Reading 10,000 transactions with their changes.
    static let fetch = Scenario(
        name: "history-fetch", targetRatio: 2.0,
        summary: "PersistentHistoryChangeRequest.fetchHistory(after: nil), result .transactionsAndChanges, on a store whose history holds 10,000 transactions of one insert each (min(N, 10,000) at small N); the transaction numbers and change IDs are summed. Raw: the same two SELECTs (transactions joined to their interned author and names; then their changes) stepped into structs."
    ) { size, fixtures in
        let count = min(size, 10_000)
        let url = try storeWithHistory(transactions: count, fixtures: fixtures)
        return ScenarioRun(rows: count, ours: {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: fixtures.model)
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: options(history: true))
            let context = fixtures.makeContext(coordinator)
            return {
                try context.performAndWait {
                    let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(
                        after: nil as PersistentHistoryToken?)) as? PersistentHistoryResult
                    var sum = 0
                    for transaction in result?.transactions ?? [] {
                        sum &+= Int(transaction.transactionNumber) &+ (transaction.author?.utf8.count ?? 0)
                        for change in transaction.changes ?? [] { sum &+= Int(change.changeID) &+ Int(change.changedObjectID.primaryKey) }
                    }
                    return sum
                }
            }
        }, raw: {
            let db = try RawConnection(path: url.path)
            return { try rawHistory(db) }
        })
    }

    /// The raw twin of a history fetch: transactions with their author's name, then their changes.
    static func rawHistory(_ db: RawConnection) throws -> Int {
        struct Transaction { var number: Int64; var timestamp: Double; var author: String?; var context: String? }
        struct Change { var id: Int64; var type: Int64; var entity: Int64; var key: Int64; var transaction: Int64 }
        let transactions = try db.prepare("""
            SELECT t.Z_PK, t.ZTIMESTAMP, a.ZNAME, c.ZNAME FROM ATRANSACTION t
            LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS
            LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS
            WHERE t.Z_PK > 0 ORDER BY t.Z_PK
            """)
        var headers: [Transaction] = []
        while try transactions.step() {
            headers.append(Transaction(number: transactions.int64(0), timestamp: transactions.double(1),
                                       author: transactions.string(2), context: transactions.string(3)))
        }
        transactions.reset()
        guard let first = headers.first?.number, let last = headers.last?.number else { return 0 }
        let select = try db.prepare("SELECT Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY Z_PK")
        select.bind(1, first)
        select.bind(2, last)
        var changes: [Int64: [Change]] = [:]
        while try select.step() {
            let change = Change(id: select.int64(0), type: select.int64(1), entity: select.int64(2), key: select.int64(3),
                                transaction: select.int64(4))
            changes[change.transaction, default: []].append(change)
        }
        select.reset()
        var sum = 0
        for header in headers {
            sum &+= Int(header.number) &+ (header.author?.utf8.count ?? 0)
            for change in changes[header.number] ?? [] { sum &+= Int(change.id) &+ Int(change.key) }
        }
        return sum
    }

    /// (8c) From another coordinator's save to this coordinator's remote-change notification.
    static let remoteLatency = Scenario(
        name: "history-remote-latency", targetRatio: nil,
        summary: "Two coordinators on one store with history: one saves one new Item 20 times per timed run; the other watches (remoteChangeNotifications). latency_ms: from just before save() to the watcher's notification carrying that save's transaction (p99 over all saves, target ≤ 50 ms; median beside it). No raw side."
    ) { _, fixtures in
        let saves = 20
        let figures = Figures([FigureSpec("latency_ms", .p99, target: 50), FigureSpec("latency_median_ms", .median)])
        return ScenarioRun(rows: saves, ours: {
            let url = fixtures.freshURL("history-watch")
            try fixtures.createEmptyStore(at: url)
            let writerCoordinator = PersistentStoreCoordinator(managedObjectModel: fixtures.model)
            try writerCoordinator.addPersistentStore(type: .sqlite, at: url, options: options(history: true))
            let watching = PersistentStoreCoordinator(managedObjectModel: fixtures.model)
            try watching.addPersistentStore(type: .sqlite, at: url, options: options(history: true, watch: true))
            let heard = Shared<[(transaction: Int64, at: Double)]>([])
            let arrived = DispatchSemaphore(value: 0)
            let observer = NotificationCenter.default.addObserver(
                forName: PersistentStoreCoordinator.remoteChangeNotification, object: watching, queue: nil) { note in
                let number = (note.userInfo?[PersistentStoreCoordinator.historyTokenKey] as? PersistentHistoryToken)?.transactionNumber ?? 0
                let now = monotonicSeconds()
                heard.update { $0.append((number, now)) }
                arrived.signal()
            }
            let context = fixtures.makeContext(writerCoordinator)
            return {
                defer { NotificationCenter.default.removeObserver(observer) }
                for serial in 1...saves {
                    let start = monotonicSeconds()
                    try context.performAndWait {
                        let item = try context.insertNewObject(forEntityName: "Item")
                        try item.setValue(Seed.name(serial), forKey: "name")
                        try context.save()
                    }
                    let expected = try writerCoordinator.currentPersistentHistoryToken()?.transactionNumber ?? 0
                    let deadline = DispatchTime.now() + 10
                    while !heard.value.contains(where: { $0.transaction >= expected }) {
                        if arrived.wait(timeout: deadline) == .timedOut {
                            throw LatchTimeout(what: "the remote-change notification of transaction \(expected)", seconds: 10)
                        }
                    }
                    if let at = heard.value.first(where: { $0.transaction >= expected })?.at {
                        figures.recordMilliseconds("latency_ms", from: start, to: at)
                        figures.recordMilliseconds("latency_median_ms", from: start, to: at)
                    }
                    heard.value = []
                }
                return withExtendedLifetime(watching) { saves }
            }
        }, raw: nil, note: "\(saves) saves per timed run; the time column is their total", figures: figures)
    }
}
