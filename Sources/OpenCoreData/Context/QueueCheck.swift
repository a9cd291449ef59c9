import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The debug-build check that a context and its objects are used on the context's queue: the counterpart
/// of Core Data's `-com.apple.CoreData.ConcurrencyDebug 1` (GRDB's `SchedulingWatchdog` is the model).
///
/// The rule is Core Data's, and the one the context's `isOnQueue` tells: a main-queue context is
/// used on the main queue (the main thread, or a block the main queue runs), a private-queue context inside
/// its `perform` or `performAndWait` blocks (a `performAndWait` of another context inside one keeps the
/// caller's queues held, see `QueueOwnership`); a confinement context belongs to whichever thread calls
/// and is not checked. What is checked: the context's entry points (`fetch`, `count`, `execute`, `save`,
/// `obtainPermanentIDs`, `insertNewObject`, `insert`, `delete`, `object(with:)` and so `existingObject`,
/// `registeredObject(for:)`, `refresh`, `refreshAllObjects`, `reset`, `rollback`,
/// `mergeChanges(fromContextDidSave:)` and the merges that end there, `processPendingChanges`, `hasChanges`
/// and the registered, inserted, updated and deleted object sets, `undo`, `redo`) and its objects' value
/// reads and writes (`value(forKey:)` and what reads through it, `setValue(_:forKey:)`, `@Managed`
/// properties, `add(_:toKey:)`, `remove(_:fromKey:)`). Object IDs, the context's settings and the calls
/// that hop onto the queue themselves (`perform`, `performAndWait`, `fetchInBackground`, `fetchBatches`)
/// may be used anywhere.
///
/// Off unless switched on, as Core Data's is: by `OCD_CONCURRENCY_DEBUG=1` in the environment when the
/// process starts, or by ``isEnabled``. A violation is a programmer error and stops the program with a
/// message naming the context, what was used and the thread found. Release builds compile the check out
/// (`#if DEBUG`): the value accessors it guards are the library's hottest paths.
package enum QueueCheck {
    /// Receives a violation instead of the default stop (see ``reportViolations(of:to:)``).
    package typealias Reporter = @Sendable (QueueViolation) -> Void

    /// Whether this build has the check at all (debug builds do; release builds compile it out).
    package static var isCompiledIn: Bool {
        #if DEBUG
        return true
        #else
        return false
        #endif
    }

    /// The process-wide switch: every context and object is checked while it is on. Starts as the
    /// environment says (`OCD_CONCURRENCY_DEBUG=1`). Always off in release builds, where setting it does
    /// nothing. Tests that run beside others watch their own contexts with ``reportViolations(of:to:)``
    /// instead of turning this on for the whole process.
    package static var isEnabled: Bool {
        get {
            #if DEBUG
            return state.withLock { $0.isEnabled }
            #else
            return false
            #endif
        }
        set {
            #if DEBUG
            update { $0.isEnabled = newValue }
            #endif
        }
    }

    /// Test hook: checks `context` and its objects whether or not the check is switched on, and hands
    /// their violations to `reporter` instead of stopping the program, until
    /// ``stopReportingViolations(of:)``. Does nothing in release builds.
    package static func reportViolations(of context: ManagedObjectContext, to reporter: @escaping Reporter) {
        #if DEBUG
        update { $0.reporters[ObjectIdentifier(context)] = reporter }
        #endif
    }

    /// Ends what ``reportViolations(of:to:)`` started for `context`.
    package static func stopReportingViolations(of context: ManagedObjectContext) {
        #if DEBUG
        update { $0.reporters.removeValue(forKey: ObjectIdentifier(context)) }
        #endif
    }

    // MARK: The checks

    /// Checks that `context` is used on its queue, by the entry point `operation` (a method's name).
    @inline(__always)
    static func use(of context: ManagedObjectContext, _ operation: StaticString) {
        #if DEBUG
        if isChecking.load(ordering: .relaxed) { verify(context, operation: "\(operation)", entity: nil, key: nil) }
        #endif
    }

    /// Checks that `object` is used on its context's queue, for a read or write of its property `key`. An
    /// object in no context (not inserted yet, or let go of) is not checked.
    @inline(__always)
    static func access(to object: ManagedObject, key: String, writing: Bool) {
        #if DEBUG
        if isChecking.load(ordering: .relaxed), let context = object.managedObjectContext {
            verify(context, operation: writing ? "setValue(_:forKey:)" : "value(forKey:)",
                   entity: object.entity.name, key: key)
        }
        #endif
    }

    #if DEBUG
    /// What the environment said when the process started.
    private static let isSwitchedOnByEnvironment = ProcessInfo.processInfo.environment["OCD_CONCURRENCY_DEBUG"] == "1"

    private struct State {
        var isEnabled = QueueCheck.isSwitchedOnByEnvironment
        var reporters: [ObjectIdentifier: Reporter] = [:]
        var isChecking: Bool { isEnabled || !reporters.isEmpty }
    }

    private static let state = Mutex(State())
    /// Whether any check runs: what every checked call reads first, so a switched-off check costs one
    /// atomic load in debug builds. Kept equal to `state.isChecking` by `update`.
    private static let isChecking = Atomic<Bool>(isSwitchedOnByEnvironment)

    private static func update(_ change: (inout State) -> Void) {
        state.withLock { state in
            change(&state)
            isChecking.store(state.isChecking, ordering: .relaxed)
        }
    }

    /// Out of line: only reached while checking.
    @inline(never)
    private static func verify(_ context: ManagedObjectContext, operation: String, entity: String?, key: String?) {
        guard !context.isOnQueue else { return }
        let reporter: Reporter? = state.withLock { state in
            state.reporters[ObjectIdentifier(context)] ?? (state.isEnabled ? stop : nil)
        }
        guard let reporter else { return }
        reporter(QueueViolation(context: context.description, operation: operation, entity: entity, key: key,
                                thread: currentThreadDescription()))
    }

    /// The default answer to a violation: a programmer error, so the program stops at the culprit.
    private static let stop: Reporter = { violation in fatalError(violation.description) }

    /// The thread a violation happened on, for the message: the main thread or another (by its pthread
    /// identity; Linux gives dispatch's worker threads no names), and the context queue it runs.
    private static func currentThreadDescription() -> String {
        let thread = Thread.isMainThread ? "the main thread" : "thread 0x\(String(pthread_self(), radix: 16)) (not the main thread)"
        return thread + ", running " + (ManagedObjectContext.runningQueueName ?? "no context's queue")
    }
    #endif
}

/// A use of a context or of one of its objects off the context's queue, as ``QueueCheck`` found it.
package struct QueueViolation: Sendable, CustomStringConvertible {
    /// The context's description: its name, if any, and its concurrency type.
    package let context: String
    /// The entry point used: a context method's name, or `value(forKey:)` / `setValue(_:forKey:)`.
    package let operation: String
    /// The object's entity, for a read or write of an object's value.
    package let entity: String?
    /// The key read or written, for a read or write of an object's value.
    package let key: String?
    /// The thread (and dispatch queue) the use happened on.
    package let thread: String

    /// The message the program stops with.
    package var description: String {
        let what = entity.map { "\($0).\(key ?? "?") (\(operation))" } ?? operation
        return "OpenCoreData concurrency violation: \(context) used off its queue: \(what) on \(thread). "
            + "Use a context and its objects inside its perform/performAndWait blocks (a main-queue context "
            + "on the main queue); pass object IDs between queues."
    }
}
