import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which contexts' queues the current thread holds while it runs a `performAndWait` block.
///
/// `DispatchQueue.getSpecific` sees only the queue a thread runs right now (and its targets). A thread that
/// runs a child context's `performAndWait` block still holds the queue it called from: the main queue (on
/// the main thread, or on a worker draining it after `dispatchMain()` or in main-actor code after an
/// `await`), or a parent's private queue. A `sync` onto that queue from inside the block would wait for
/// itself (libdispatch stops the process: "dispatch_sync called on queue already owned by current
/// thread"). So `performAndWait` records, for the thread that runs its block, the queues its caller held;
/// the context's "am I on my queue?" test consults the record.
///
/// A real per-thread value, not a task-local one: a `Task` created inside a block inherits task-local
/// values and would run elsewhere believing it holds the queue.
enum QueueOwnership {
    /// The queues one thread holds (their identities), innermost last.
    final class Held {
        var queues: [ObjectIdentifier] = []
    }

    /// The per-thread key; each thread's `Held` is retained by the key and released when the thread ends.
    /// Unmanaged because a pthread key holds a raw pointer: each thread's `Held` is retained once when it is
    /// set (``current``) and released by the key's destructor when the thread ends; reads take it unretained
    /// while the thread, which owns it, runs. Not a fast path.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            guard let pointer = pointer as UnsafeMutableRawPointer? else { return }
            Unmanaged<Held>.fromOpaque(pointer).release()
        }
        precondition(status == 0, "pthread_key_create failed (\(status))")
        return key
    }()

    /// The current thread's record, made on first use.
    private static var current: Held {
        if let pointer = pthread_getspecific(key) { return Unmanaged<Held>.fromOpaque(pointer).takeUnretainedValue() }
        let held = Held()
        pthread_setspecific(key, Unmanaged.passRetained(held).toOpaque())
        return held
    }

    /// The queues the current thread holds through `performAndWait` calls further up its stack.
    static var heldQueues: [ObjectIdentifier] {
        guard let pointer = pthread_getspecific(key) else { return [] }
        return Unmanaged<Held>.fromOpaque(pointer).takeUnretainedValue().queues
    }

    /// Whether the current thread holds `queue` through a `performAndWait` further up its stack.
    static func holds(_ queue: ObjectIdentifier) -> Bool {
        guard let pointer = pthread_getspecific(key) else { return false }
        return Unmanaged<Held>.fromOpaque(pointer).takeUnretainedValue().queues.contains(queue)
    }

    /// Runs `body` on the current thread with `queues` recorded as held, then restores the record.
    static func holding<T>(_ queues: [ObjectIdentifier], _ body: () throws -> T) rethrows -> T {
        let held = current
        let saved = held.queues
        held.queues = queues
        defer { held.queues = saved }
        return try body()
    }
}
