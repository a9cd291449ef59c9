import Foundation
import GRDB
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Notices commits to a store file made through any other connection (another process, another
/// coordinator), without reading the data tables: SQLite's `data_version` on a connection of its own
/// changes when someone else commits. On Linux the watcher sleeps until the file's folder changes
/// (inotify: a commit writes the WAL) and checks then, with a slow timer as a backstop; elsewhere it checks
/// on a short timer. Idle, it costs a blocked thread.
final class RemoteChangeWatcher: StoreChangeWatch, @unchecked Sendable {
    // @unchecked Sendable: `stopped` is atomic; the connection and descriptors are used by the watching
    // thread only, and closed by it.

    /// How long the watcher sleeps between checks when nothing wakes it (the backstop on Linux, the
    /// polling interval elsewhere), in milliseconds.
    static let backstopMilliseconds: Int32 = 1000
    static let pollingMilliseconds: Int32 = 20
    /// After a folder event: check every `hotMilliseconds`, `hotChecks` times, before sleeping again.
    static let hotMilliseconds: Int32 = 2
    static let hotChecks = 50

    private let path: String
    private let onChange: @Sendable () -> Void
    private let stopped = Mutex<Bool>(false)
    /// Written to by `stop()` so a sleeping watcher wakes at once.
    private var wakePipe: [Int32] = [-1, -1]
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?

    /// Starts watching `path`; `onChange` runs on the watching thread after each commit it notices.
    /// - Throws: `StoreError` when the file cannot be opened for reading.
    init(path: String, onChange: @escaping @Sendable () -> Void) throws {
        self.path = path
        self.onChange = onChange
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "OpenCoreData.RemoteChangeWatcher"
        let connection: DatabaseQueue
        do {
            connection = try DatabaseQueue(path: path, configuration: configuration)
        } catch let error as DatabaseError {
            throw StoreError.fromOpening(error, path: path)
        }
        _ = pipe(&wakePipe)
        // The starting version and the folder watch are taken before init returns: a commit made right
        // after the store is opened must not be folded into the starting point, nor happen before the watch.
        let initialVersion = Self.dataVersion(connection)
        #if os(Linux)
        let notify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if notify >= 0 {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            _ = inotify_add_watch(notify, folder, UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO))
        }
        #else
        let notify: Int32 = -1
        #endif
        let thread = Thread { [self] in
            run(connection, version: initialVersion, notify: notify)
            if notify >= 0 { close(notify) }
            try? connection.close()
            finished.signal()
        }
        thread.name = "OpenCoreData remote changes"
        thread.stackSize = 1 << 18
        self.thread = thread
        thread.start()
    }

    /// Stops watching and waits for the watching thread to end (no `onChange` runs after this returns,
    /// unless called from `onChange` itself). The watching thread holds the watcher until then: its owner
    /// must call this.
    package func stop() {
        let wasStopped = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !wasStopped else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe[1], &byte, 1)
        if Thread.current !== thread { finished.wait() }
    }

    deinit {
        for descriptor in wakePipe where descriptor >= 0 { close(descriptor) }
    }

    private static func dataVersion(_ connection: DatabaseQueue) -> Int? {
        try? connection.read { try Int.fetchOne($0, sql: "PRAGMA data_version") }
    }

    /// The watching loop: sleeps until the folder changes (or the timer runs out), then compares versions.
    private func run(_ connection: DatabaseQueue, version initial: Int?, notify: Int32) {
        var version = initial
        let timeout = notify >= 0 ? Self.backstopMilliseconds : Self.pollingMilliseconds
        var descriptors = [pollfd(fd: wakePipe[0], events: Int16(POLLIN), revents: 0),
                           pollfd(fd: notify, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 4096)
        // A commit writes the log (an event) before it publishes itself in the shared-memory index (a
        // mapped page: no event), so a check right after the event can come too early. After each event
        // the watcher keeps checking on a short timer for a while before it sleeps again.
        var hotChecksLeft = 0
        while !stopped.withLock({ $0 }) {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            _ = poll(&descriptors, notify >= 0 ? 2 : 1, hotChecksLeft > 0 ? Self.hotMilliseconds : timeout)
            if stopped.withLock({ $0 }) { break }
            if notify >= 0, descriptors[1].revents != 0 {
                // The events only say "look now"; drain them.
                while read(notify, &buffer, buffer.count) > 0 {}
                hotChecksLeft = Self.hotChecks
            } else if hotChecksLeft > 0 {
                hotChecksLeft -= 1
            }
            let current = Self.dataVersion(connection)
            if current != version {
                version = current
                onChange()
            }
        }
    }
}

extension SQLiteStore {
    /// Whether commits made elsewhere (another process, another coordinator on the same file) can be
    /// noticed: file stores only (an in-memory store has no other writers).
    package var canNoticeCommitsElsewhere: Bool { type == .sqlite && url != nil }

    /// Starts watching for commits made elsewhere; `onChange` runs on the watching thread after each one
    /// it notices. Nil for a store that cannot have them (``canNoticeCommitsElsewhere``). The caller must
    /// `stop()` the watcher.
    ///
    /// - Throws: ``StoreError`` when the file cannot be opened for reading.
    package func watchCommitsElsewhere(_ onChange: @escaping @Sendable () -> Void) throws -> (any StoreChangeWatch)? {
        guard canNoticeCommitsElsewhere, let url else { return nil }
        return try RemoteChangeWatcher(path: url.path, onChange: onChange)
    }
}
