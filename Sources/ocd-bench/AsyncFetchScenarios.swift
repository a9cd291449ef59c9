import Foundation
import OpenCoreData

// Issue 5, asynchronous fetching: AsynchronousFetchRequest run through `context.execute(_:)` on a
// private-queue context, the bench thread waiting for the completion block.

enum AsyncFetchScenarios {
    static let all: [Scenario] = [fetchAll, fetchIDs, cancel, performLatency]

    /// Starts an asynchronous fetch on `context`'s queue and returns the moment `execute` was called and
    /// the result object.
    static func start<T>(_ request: AsynchronousFetchRequest<T>, in context: ManagedObjectContext) throws
        -> (start: Double, result: AsynchronousFetchResult<T>) {
        try context.performAndWait {
            let start = monotonicSeconds()
            let result = try context.execute(request)
            return (start, result)
        }
    }

    /// Fetches every item asynchronously on `context` (objects, no batch size, progress reported) and waits
    /// for the completion block, which sums the objects' primary keys; records first_progress_ms in `figures`.
    static func fetchAllSummingKeys(in context: ManagedObjectContext, figures: Figures) throws -> Int {
        let done = Latch()
        let checksum = Shared(0)
        let firstProgress = Shared<Double?>(nil)
        let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item")) { result in
            var sum = result.finalResult?.count ?? -1
            for object in result.finalResult ?? [] { sum &+= Int(object.objectID.primaryKey) }
            checksum.value = sum
            done.signal()
        }
        request.progressHandler = { _ in
            let now = monotonicSeconds()
            firstProgress.update { if $0 == nil { $0 = now } }
        }
        let (start, _) = try start(request, in: context)
        try done.wait(what: "the asynchronous fetch's completion")
        if let first = firstProgress.value { figures.recordMilliseconds("first_progress_ms", from: start, to: first) }
        return checksum.value
    }

    /// (5a) Fetch every object asynchronously; also the time to the first progress report.
    static let fetchAll = Scenario(
        name: "async-fetch-all", targetRatio: 2.0,
        summary: "AsynchronousFetchRequest for all N items (objects, no batch size, progressInterval 500) executed on a private-queue context; timed from execute to the completion block (which sums the objects' primary keys). Also first_progress_ms: execute → first progress report. Raw: SELECT every column, rows stepped into structs, primary keys summed."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        let figures = Figures([FigureSpec("first_progress_ms", .median, target: 50)])
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(url)
            return { try fetchAllSummingKeys(in: fixtures.makeContext(coordinator), figures: figures) }
        }, raw: {
            let db = try RawConnection(path: url.path)
            return {
                let select = try db.prepare("SELECT \(RawItem.columns) FROM ZITEM")
                var items: [RawItem] = []
                while try select.step() { items.append(RawItem(select)) }
                var sum = items.count
                for item in items { sum &+= Int(item.primaryKey) }
                return sum
            }
        }, peer: {
            let pool = try PeerBaselines.pool(url)
            return { try PeerBaselines.asyncFetchAll(pool) }
        }, figures: figures)
    }

    /// (5b) Fetch object IDs asynchronously.
    static let fetchIDs = Scenario(
        name: "async-fetch-ids", targetRatio: 1.2,
        summary: "AsynchronousFetchRequest for the object IDs of all N items (resultType .managedObjectID), execute → completion. Raw: SELECT Z_PK FROM ZITEM into [Int64]."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(url)
            return {
                let context = fixtures.makeContext(coordinator)
                let done = Latch()
                let checksum = Shared(0)
                let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObjectID>(objectIDsOf: "Item")) { result in
                    var sum = result.finalResult?.count ?? -1
                    for id in result.finalResult ?? [] { sum &+= Int(id.primaryKey) }
                    checksum.value = sum
                    done.signal()
                }
                _ = try start(request, in: context)
                try done.wait(what: "the asynchronous ID fetch's completion")
                return checksum.value
            }
        }, raw: {
            let db = try RawConnection(path: url.path)
            return {
                let select = try db.prepare("SELECT Z_PK FROM ZITEM")
                var ids: [Int64] = []
                while try select.step() { ids.append(select.int64(0)) }
                var sum = ids.count
                for id in ids { sum &+= Int(id) }
                return sum
            }
        }, peer: {
            let pool = try PeerBaselines.pool(url)
            return { try PeerBaselines.asyncFetchKeys(pool) }
        })
    }

    /// (5c) Cancel mid-fetch; how long until the completion block runs.
    static let cancel = Scenario(
        name: "async-fetch-cancel", targetRatio: nil,
        summary: "20 asynchronous fetches of all N items per timed run; each is cancelled (result.cancel(), from the bench thread) as soon as the first progress report arrives. cancel_to_completion_ms: cancel() → completion block, p99 over all fetches of all runs. No raw side."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        let fetches = 20
        let figures = Figures([
            FigureSpec("cancel_to_completion_ms", .p99, target: 50),
            FigureSpec("cancel_to_completion_median_ms", .median),
            FigureSpec("cancelled_share", .median, unit: "of fetches"),
        ])
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(url)
            return {
                let context = fixtures.makeContext(coordinator)
                var cancelled = 0
                for _ in 0..<fetches {
                    let progressed = Latch()
                    let done = Latch()
                    let finishedAt = Shared(0.0)
                    let wasCancelled = Shared(false)
                    let firstReport = Shared(true)
                    let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item")) { result in
                        finishedAt.value = monotonicSeconds()
                        wasCancelled.value = result.finalResult == nil && result.operationError != nil
                        done.signal()
                    }
                    request.progressHandler = { _ in
                        if firstReport.update({ let first = $0; $0 = false; return first }) { progressed.signal() }
                    }
                    let (_, result) = try start(request, in: context)
                    try progressed.wait(what: "the first progress report")
                    let cancelledAt = monotonicSeconds()
                    result.cancel()
                    try done.wait(what: "the cancelled fetch's completion")
                    figures.recordMilliseconds("cancel_to_completion_ms", from: cancelledAt, to: finishedAt.value)
                    figures.recordMilliseconds("cancel_to_completion_median_ms", from: cancelledAt, to: finishedAt.value)
                    if wasCancelled.value { cancelled += 1 }
                }
                figures.record("cancelled_share", Double(cancelled) / Double(fetches))
                return cancelled
            }
        }, raw: nil, note: "\(fetches) cancelled fetches per timed run; the time column is their total", figures: figures)
    }

    /// (5d) The asking context stays responsive while the fetch runs and its objects are registered.
    static let performLatency = Scenario(
        name: "async-fetch-perform-latency", targetRatio: nil,
        summary: "While an asynchronous fetch of all N items runs (until its completion block), the bench thread submits context.perform {} to the asking context one at a time (1 ms apart) and times how long each block waits before it runs. perform_latency_ms: p99 over all blocks of all runs. No raw side."
    ) { size, fixtures in
        let url = try fixtures.populatedStore(size: size)
        let figures = Figures([
            FigureSpec("perform_latency_ms", .p99, target: 10),
            FigureSpec("perform_latency_max_ms", .max),
            FigureSpec("perform_blocks", .median, unit: "blocks per fetch"),
        ])
        return ScenarioRun(rows: size, ours: {
            let coordinator = try fixtures.openCoordinator(url)
            return {
                let context = fixtures.makeContext(coordinator)
                let done = Latch()
                let finished = Shared(false)
                let count = Shared(0)
                let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item")) { result in
                    count.value = result.finalResult?.count ?? -1
                    finished.value = true
                    done.signal()
                }
                _ = try start(request, in: context)
                var blocks = 0
                while !finished.value {
                    let ran = Latch()
                    let submitted = monotonicSeconds()
                    context.perform {
                        let latency = (monotonicSeconds() - submitted) * 1000
                        figures.record("perform_latency_ms", latency)
                        figures.record("perform_latency_max_ms", latency)
                        ran.signal()
                    }
                    try ran.wait(what: "a perform block")
                    blocks += 1
                    usleep(1000)
                }
                try done.wait(what: "the asynchronous fetch's completion")
                figures.record("perform_blocks", Double(blocks))
                return count.value
            }
        }, raw: nil, figures: figures)
    }
}
