import Foundation

/// Told when a ``ContextOperation`` finishes, on the operation's completion queue (the main queue by
/// default).
public protocol ContextOperationDelegate: AnyObject {
    /// The operation finished with its values, or with the error its work threw.
    func operation(_ operation: ContextOperation, didCompleteWith result: Result<[String: any Sendable], Error>)
}

/// An `Operation` that does its work on a private-queue context of its own, on a shared coordinator,
/// and reports to a delegate or closure on the main queue (seed 001's `CoreDataOperation`).
///
/// Subclass and override ``performWork(in:)``, or pass the work as a closure:
///
/// ```swift
/// let average = ContextOperation(coordinator: coordinator) { context in
///     let sessions = try context.fetch(FetchRequest<ManagedObject>(entityName: "Session"))
///     let total = try sessions.reduce(0.0) { $0 + ((try $1.value(forKey: "duration") as? Double) ?? 0) }
///     return ["result": sessions.isEmpty ? 0 : total / Double(sessions.count)]
/// } completion: { operation, result in
///     print(operation.identifier, result)
/// }
/// operationQueue.addOperation(average)
/// ```
///
/// Only values cross back: object IDs and plain values, never objects.
open class ContextOperation: Operation, @unchecked Sendable {
    // @unchecked Sendable: `resultStorage` is written once in `main()` before the completion is queued,
    // and read only after; the rest is immutable or set before the operation is queued.

    /// The operation's own private-queue context.
    public let privateContext: ManagedObjectContext
    /// Told on ``completionQueue`` when the work is done.
    public weak var delegate: ContextOperationDelegate?
    /// Identifies the operation to its delegate.
    public var identifier = 0
    /// Where the delegate and completion are called.
    public var completionQueue: DispatchQueue = .main
    /// The result, once finished.
    public private(set) var result: Result<[String: any Sendable], Error>?

    private let work: ((ManagedObjectContext) throws -> [String: any Sendable])?
    private let completion: ((ContextOperation, Result<[String: any Sendable], Error>) -> Void)?

    /// An operation whose work a subclass provides in ``performWork(in:)``.
    public init(coordinator: PersistentStoreCoordinator, delegate: ContextOperationDelegate? = nil) {
        privateContext = ManagedObjectContext(concurrencyType: .privateQueue)
        privateContext.persistentStoreCoordinator = coordinator
        self.delegate = delegate
        self.work = nil
        self.completion = nil
        super.init()
    }

    /// An operation running `work`, reporting to `completion` on the main queue.
    public init(coordinator: PersistentStoreCoordinator,
                work: @escaping (ManagedObjectContext) throws -> [String: any Sendable],
                completion: @escaping (ContextOperation, Result<[String: any Sendable], Error>) -> Void) {
        privateContext = ManagedObjectContext(concurrencyType: .privateQueue)
        privateContext.persistentStoreCoordinator = coordinator
        self.work = work
        self.completion = completion
        super.init()
    }

    /// Override: fetch what the operation is for and return plain values (and object IDs).
    ///
    /// - Throws: whatever the override (or the `work` closure) throws; the operation stores it as a failed
    ///   ``result`` and hands it to the delegate or completion. The default without `work` throws nothing.
    open func performWork(in context: ManagedObjectContext) throws -> [String: any Sendable] {
        guard let work else { return [:] }
        return try work(context)
    }

    /// Runs ``performWork(in:)`` on ``privateContext`` (or fails with ``ObjectGraphError/cancelled`` when
    /// cancelled first), keeps the outcome in ``result`` and reports it on ``completionQueue``.
    open override func main() {
        let outcome: Result<[String: any Sendable], Error>
        if isCancelled {
            outcome = .failure(ObjectGraphError.cancelled)
        } else {
            outcome = privateContext.performAndWait { Result { try performWork(in: privateContext) } }
        }
        result = outcome
        let box = UncheckedBox(self)
        completionQueue.async {
            let operation = box.value
            operation.delegate?.operation(operation, didCompleteWith: outcome)
            operation.completion?(operation, outcome)
        }
    }
}
