import Foundation

/// Requests that know how to run themselves against a context (so `execute(_:)` can take any of them).
protocol ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult
}

extension ManagedObjectContext {
    /// Executes a request: an asynchronous fetch (returns at once with an ``AsynchronousFetchResult``),
    /// a batch update, delete or insert, or a persistent-history fetch or delete. Call it on the context's
    /// queue.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedRequest(requestType:)`` for a request type a context cannot run;
    ///   for a malformed request ``ObjectGraphError/emptyBatchUpdate(entity:)`` (a batch update without
    ///   `propertiesToUpdate`), ``ObjectGraphError/batchDeleteWithoutSelection`` (a batch delete without a fetch
    ///   request or IDs), ``ObjectGraphError/abstractEntity(name:)`` (a batch insert of an abstract entity),
    ///   ``ObjectGraphError/notABatchAttribute(entity:key:row:)`` (a key that is not a stored attribute),
    ///   ``ObjectGraphError/unsupportedBatchValue(entity:key:reason:)`` (a new value the store's SQL cannot write);
    ///   ``ObjectGraphError/noPersistentStore`` when the context has no coordinator or store;
    ///   ``ObjectGraphError/unknownEntity(_:)`` and ``ObjectGraphError/unknownKey(entity:key:)`` for names the
    ///   model lacks; ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` or
    ///   ``ObjectGraphError/valueOutOfRange(entity:key:value:)`` for a batch value that does not fit its
    ///   attribute; ``ObjectGraphError/validationFailed(_:)`` for a batch insert row missing a required value
    ///   or breaking a uniqueness constraint, or a batch delete a `deny` rule refuses;
    ///   ``ObjectGraphError/unsupportedConcurrencyType(context:request:)`` for an asynchronous fetch on a
    ///   confinement context; ``QueryLanguageError`` when a predicate does not compile to SQL or a history
    ///   predicate cannot be evaluated; ``PersistentHistoryError/tokenOfAnotherStore(token:store:)`` for a
    ///   history request whose token belongs to another store; ``StoreError`` when the store cannot be read or
    ///   written (nothing is written then).
    @discardableResult
    public func execute<Request: PersistentStoreRequest>(_ request: Request) throws -> PersistentStoreResult {
        QueueCheck.use(of: self, "execute(_:)")
        guard let executable = request as? ContextExecutable else {
            throw ObjectGraphError.unsupportedRequest(requestType: "\(type(of: request))")
        }
        return try HistoryAuthorship.$current.withValue(historyAuthorship) { try executable.execute(in: self) }
    }

    /// Starts an asynchronous fetch and returns its result object at once.
    ///
    /// - Throws: ``ObjectGraphError/unsupportedConcurrencyType(context:request:)`` on a confinement context;
    ///   what planning the fetch throws, as for a synchronous fetch (``ObjectGraphError/noPersistentStore``,
    ///   ``ObjectGraphError/unknownEntity(_:)``, ``ObjectGraphError/negativeFetchBound(entity:bound:value:)``,
    ///   ``QueryLanguageError``). Errors while the SQL runs are not thrown here: they arrive in
    ///   ``AsynchronousFetchResult/operationError``.
    public func execute<T>(_ request: AsynchronousFetchRequest<T>) throws -> AsynchronousFetchResult<T> {
        QueueCheck.use(of: self, "execute(_:)")
        return try request.start(in: self)
    }

    /// Fetches without blocking the caller or the context's queue while the SQL runs; cancelling the
    /// calling Task interrupts the SQL. The objects are registered in this context: use them on its queue.
    ///
    /// Named apart from `fetch(_:)` so that Core Data's `try context.fetch(request)` still means the
    /// synchronous fetch inside an `async` function (an `async` overload of the same name would win there).
    ///
    /// - Throws: the fetch's error (``ObjectGraphError``, ``QueryLanguageError``, ``StoreError``), or
    ///   ``ObjectGraphError/cancelled`` when the Task was cancelled.
    public func fetchInBackground<T>(_ request: FetchRequest<T>) async throws -> [T] {
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            let box: UncheckedBox<[T]> = try await withCheckedThrowingContinuation { continuation in
                let asynchronous = AsynchronousFetchRequest(fetchRequest: request) { result in
                    if let objects = result.finalResult {
                        continuation.resume(returning: UncheckedBox(objects))
                    } else {
                        continuation.resume(throwing: result.operationError ?? ObjectGraphError.cancelled)
                    }
                }
                self.perform {
                    do {
                        let result = try asynchronous.start(in: self)
                        cancellation.onCancel { result.cancel() }
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            return box.value
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Fetches in the background and delivers the result in batches as they are read, each batch
    /// already registered in this context (so `object(with:)` on its queue reads no SQL): a list can
    /// fill in while the fetch runs. Cancelling the consuming Task stops the SQL.
    public func fetchBatches(_ request: FetchRequest<ManagedObject>, batchSize: Int = 1000)
        -> AsyncThrowingStream<[ManagedObjectID], Error> {
        AsyncThrowingStream { continuation in
            let cancellation = CancellationFlag()
            continuation.onTermination = { _ in cancellation.cancel() }
            self.perform {
                let plan: FetchPlan<ManagedObject>
                do {
                    plan = try FetchPlan(request: request, context: self)
                } catch {
                    continuation.finish(throwing: error)
                    return
                }
                let query = plan.storeQuery
                let size = max(1, batchSize)
                DispatchQueue.global(qos: .userInitiated).async {
                    do {
                        var pending: [RowValues] = []
                        func flush(_ rows: [RowValues]) {
                            let box = UncheckedBox(rows)
                            self.performAndWait {
                                guard let objects = try? FetchPlan(request: request, context: self).materializeWithoutPending(box.value) else { return }
                                continuation.yield(objects.map(\.objectID))
                            }
                        }
                        try query.readRows(cancellation: cancellation) { row in
                            pending.append(row)
                            if pending.count >= size { flush(pending); pending.removeAll(keepingCapacity: true) }
                        }
                        if !pending.isEmpty { flush(pending) }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: StoreError.from(error, path: query.store.displayPath))
                    }
                }
            }
        }
    }
}

extension CancellationFlag {
    /// Runs `action` when cancelled (at once if already cancelled).
    func onCancel(_ action: @escaping @Sendable () -> Void) {
        if isCancelled { action(); return }
        addHandler(action)
    }
}

extension AsynchronousFetchRequest: ContextExecutable {
    func execute(in context: ManagedObjectContext) throws -> PersistentStoreResult {
        try start(in: context)
    }

    func start(in context: ManagedObjectContext) throws -> AsynchronousFetchResult<Result> {
        guard context.concurrencyType != .confinement else {
            throw ObjectGraphError.unsupportedConcurrencyType(
                context: "\(context.concurrencyType) context \(context)",
                request: "asynchronous fetch request \(self)")
        }
        let request = fetchRequest.copy()
        let plan = try FetchPlan(request: request, context: context)
        let query = plan.storeQuery
        // A Progress made while another is current becomes its child (Foundation's implicit tree), so
        // `becomeCurrent(withPendingUnitCount:)` … `resignCurrent()` around `execute` works as in Core Data.
        let progress = Progress(totalUnitCount: estimatedResultCount > 0 ? Int64(estimatedResultCount) : -1)
        let cancellation = CancellationFlag()
        progress.cancellationHandler = { cancellation.cancel() }
        let result = AsynchronousFetchResult(request: self, progress: progress, context: context,
                                             cancellation: cancellation)
        let interval = max(1, progressInterval)
        let resultType = request.resultType
        let usesRows = resultType == .managedObject && context.parent == nil
        let completion = UncheckedBox(completionBlock)
        let resultBox = UncheckedBox(result)
        let contextBox = UncheckedBox(context)

        DispatchQueue.global(qos: .userInitiated).async {
            let result = resultBox.value
            do {
                var rows: [RowValues] = []
                var ids: [ManagedObjectID] = []
                var prepared: [ManagedObject] = []
                if usesRows {
                    rows = try query.readRows(cancellation: cancellation, progressInterval: interval) { result.report($0) }
                    // Objects are allocated here, off the context's queue; the queue only registers them.
                    prepared = try ObjectMaterializer.makeUnregistered(for: rows, query: query, cancellation: cancellation)
                } else if resultType != .count {
                    ids = try query.readIDs(cancellation: cancellation, progressInterval: interval) { result.report($0) }
                }
                if cancellation.isCancelled { throw ObjectGraphError.cancelled }
                Self.complete(result: result, context: contextBox.value, request: request, rows: rows,
                              prepared: prepared, ids: ids, completion: completion)
            } catch {
                let failure = UncheckedBox(StoreError.from(error, path: query.store.displayPath))
                contextBox.value.perform {
                    result.operationError = failure.value
                    result.finish()
                    completion.value?(result)
                }
            }
        }
        return result
    }

    /// Registers the rows on the context's queue in slices, so other work on the queue keeps running,
    /// then applies pending changes and calls the completion.
    ///
    /// Each slice queues the next one when it ends. Queued all at once, they would run back to back: a
    /// `perform` block submitted meanwhile would wait behind every one of them.
    private static func complete(result: AsynchronousFetchResult<Result>, context: ManagedObjectContext,
                                 request: FetchRequest<Result>, rows: [RowValues], prepared: [ManagedObject],
                                 ids: [ManagedObjectID], completion: UncheckedBox<((AsynchronousFetchResult<Result>) -> Void)?>) {
        // A slice takes a few milliseconds; the registry grows (or is trimmed) once, first, not inside one.
        let slice = 2_000
        let box = UncheckedBox((rows, prepared))
        let registered = UncheckedBox(ObjectAccumulator())
        let chain = SliceChain()
        chain.next = { start in
            context.perform {
                if start == 0 && !rows.isEmpty {
                    context.prepareRegistry(forAdding: rows.count)
                    registered.value.objects.reserveCapacity(rows.count)
                }
                if start < rows.count && !result.cancellation.isCancelled {
                    let range = start..<min(start + slice, rows.count)
                    if let plan = try? FetchPlan(request: request, context: context),
                       let objects = try? plan.materializeWithoutPending(box.value.0, range: range, prepared: box.value.1) {
                        registered.value.objects.append(contentsOf: objects)
                    }
                    chain.next?(start + slice)
                    return
                }
                chain.next = nil
                do {
                    // Cancelled while registering: what was registered stays (unchanged objects), but the
                    // request ends as cancelled, as it would have before.
                    if result.cancellation.isCancelled { throw ObjectGraphError.cancelled }
                    let plan = try FetchPlan(request: request, context: context)
                    switch request.resultType {
                    case .managedObject:
                        let objects: [ManagedObject]
                        if context.parent != nil || rows.isEmpty && !ids.isEmpty {
                            objects = try plan.applyPendingIfNeeded(ids.map { try context.object(with: $0) })
                        } else {
                            objects = try plan.applyPendingIfNeeded(registered.value.objects)
                        }
                        result.finalResult = Self.cast(objects)
                    case .managedObjectID:
                        result.finalResult = Self.castIDs(try plan.finishIDs(ids))
                    case .count:
                        let count = try plan.count()
                        result.finalResult = [count as? Result].compactMap { $0 }
                    case .dictionary:
                        result.finalResult = try plan.fetchDictionaries().compactMap { $0 as? Result }
                    }
                    if result.progress.totalUnitCount < 0 {
                        result.progress.totalUnitCount = Int64(result.finalResult?.count ?? 0)
                    }
                    result.progress.completedUnitCount = max(result.progress.completedUnitCount,
                                                             Int64(result.finalResult?.count ?? 0))
                } catch {
                    result.operationError = error
                }
                result.finish()
                completion.value?(result)
            }
        }
        chain.next?(0)
    }
}

/// The step that queues the next slice of a registration (cleared when the last one has run).
final class SliceChain: @unchecked Sendable {
    // @unchecked Sendable: set before the first slice is queued, then used only on the context's queue.
    var next: ((Int) -> Void)?
}

/// Collects the objects registered slice by slice on the context's queue.
final class ObjectAccumulator {
    var objects: [ManagedObject] = []
}

extension AsynchronousFetchRequest {
    /// The objects as the request's result type: a plain reinterpretation when it is `ManagedObject`, a
    /// checked cast per element for subclasses.
    static func cast(_ objects: [ManagedObject]) -> [Result] {
        // Safe: the same type, so the same array (`async-fetch-all`).
        if Result.self == ManagedObject.self { return unsafeBitCast(objects, to: [Result].self) }
        return objects.compactMap { $0 as? Result }
    }

    /// The IDs as the request's result type: a plain reinterpretation when it is `ManagedObjectID` (a
    /// cast per element cost more than reading the keys).
    static func castIDs(_ ids: [ManagedObjectID]) -> [Result] {
        // Safe: the same type, so the same array (`async-fetch-ids`).
        if Result.self == ManagedObjectID.self { return unsafeBitCast(ids, to: [Result].self) }
        return ids.compactMap { $0 as? Result }
    }
}

extension FetchPlan {
    /// Registers rows as objects without applying pending changes (a slice of a larger result).
    func materializeWithoutPending(_ rows: [RowValues], range: Range<Int>? = nil,
                                   prepared: [ManagedObject]? = nil) throws -> [ManagedObject] {
        try materialize(rows, range: range, prepared: prepared, applyingPending: false)
    }
}
