import Foundation

/// A fetch that runs in the background, reports progress as rows arrive, can be cancelled, and hands its
/// result to a completion on the context's queue, while the context stays usable.
///
/// ```swift
/// let fetch = FetchRequest<ManagedObject>(entityName: "Item")
/// let asynchronous = AsynchronousFetchRequest(fetchRequest: fetch) { result in
///     // on the context's queue
///     print("fetched", result.finalResult?.count ?? 0)
/// }
/// asynchronous.progressHandler = { count in print("Fetched \(count) Records") }
/// context.perform {
///     let result = try? context.execute(asynchronous)
///     // result?.cancel() stops it
/// }
/// ```
///
/// A `.confinement` context refuses it, as Core Data refuses it: the result must be merged on a queue.
public final class AsynchronousFetchRequest<Result>: PersistentStoreRequest, @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: configured before `execute`, read-only afterwards.

    /// The fetch to run.
    public let fetchRequest: FetchRequest<Result>
    /// Called once, on the context's queue, with the result or the error (cancellation included).
    public let completionBlock: ((AsynchronousFetchResult<Result>) -> Void)?
    /// The expected number of results, used as the progress's total (0: unknown).
    public var estimatedResultCount = 0
    /// Called as rows arrive (on a background thread) with the number fetched so far. Linux has no KVO,
    /// so this (or ``AsynchronousFetchResult/progressUpdates``) is how to observe progress.
    public var progressHandler: (@Sendable (Int64) -> Void)?
    /// How many rows between progress reports.
    public var progressInterval = 500
    /// The stores the fetch reads (the fetch request's ``FetchRequest/affectedStores``).
    public var affectedStores: [PersistentStore] {
        get { fetchRequest.affectedStores }
        set { fetchRequest.affectedStores = newValue }
    }

    /// Creates an asynchronous fetch.
    public init(fetchRequest: FetchRequest<Result>, completionBlock: ((AsynchronousFetchResult<Result>) -> Void)? = nil) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
    }

    /// The request and its fetch request, for logs and debugging.
    public var description: String { "<AsynchronousFetchRequest with fetch request \(fetchRequest)>" }
}

/// The running or finished result of an ``AsynchronousFetchRequest``: returned at once by `execute`,
/// filled in when the fetch completes.
public final class AsynchronousFetchResult<Result>: PersistentStoreResult, @unchecked Sendable {
    // @unchecked Sendable: `finalResult` and `operationError` are written once on the context's queue
    // before the completion runs, and read there; the progress state is guarded by `lock`.

    /// The request this result belongs to.
    public let fetchRequest: AsynchronousFetchRequest<Result>
    /// The fetched objects (nil until completion, and after an error or cancellation).
    public internal(set) var finalResult: [Result]?
    /// The error, if the fetch failed or was cancelled (``ObjectGraphError/cancelled``).
    public internal(set) var operationError: Error?
    /// Foundation progress: `completedUnitCount` counts objects fetched so far; `cancel()` stops the fetch.
    public let progress: Progress
    /// The context the objects belong to.
    public private(set) weak var managedObjectContext: ManagedObjectContext?

    let cancellation: CancellationFlag
    private let lock = NSLock()
    private var handlers: [@Sendable (Int64) -> Void] = []
    private let updates = ContinuationStore<Int64>()
    private var isFinished = false

    init(request: AsynchronousFetchRequest<Result>, progress: Progress, context: ManagedObjectContext,
         cancellation: CancellationFlag) {
        self.fetchRequest = request
        self.progress = progress
        self.managedObjectContext = context
        self.cancellation = cancellation
        if let handler = request.progressHandler { handlers.append(handler) }
    }

    /// Stops the fetch: the SQL is interrupted, the completion is told it was cancelled, and nothing
    /// lands in the context.
    public func cancel() {
        progress.cancel()
        cancellation.cancel()
    }

    /// Calls `handler` (on a background thread) each time more rows have arrived.
    public func onProgress(_ handler: @escaping @Sendable (Int64) -> Void) {
        lock.withLock { handlers.append(handler) }
    }

    /// The number of rows fetched so far, each time it moves; ends when the fetch ends.
    public var progressUpdates: AsyncStream<Int64> { updates.makeStream() }

    func report(_ count: Int) {
        let value = Int64(count)
        if progress.totalUnitCount >= 0 && value > progress.totalUnitCount { progress.totalUnitCount = value }
        progress.completedUnitCount = value
        let current = lock.withLock { handlers }
        for handler in current { handler(value) }
        updates.yield(value)
    }

    func finish() {
        lock.withLock { isFinished = true }
        updates.finish()
    }
}
