import Foundation

/// Tells the crash harness's worker (`ocd-crash-worker`) when a migrated copy is being written back over
/// a store (``StoreFileReplacement``), so that SIGKILLs can be aimed before, during and after the
/// write-back (docs/RELIABILITY.md). Reached with `@_spi(CrashHarness) import OpenCoreData`; not part of
/// the public API.
@_spi(CrashHarness) public enum MigrationWriteBackObserver {
    /// The two moments reported.
    public enum Moment: Sendable {
        /// The copy is about to be written back (the store is still as it was).
        case willWriteBack
        /// The backup step returned: the store holds the migrated content.
        case didWriteBack
    }

    /// The observer and its lock.
    private final class State: @unchecked Sendable {
        // @unchecked Sendable: `observer` is read and written under `lock` only.
        let lock = NSLock()
        var observer: (@Sendable (Moment) -> Void)?
    }

    private static let state = State()

    /// Called in the migrating thread at each moment; nil (the default) calls nothing.
    public static var observer: (@Sendable (Moment) -> Void)? {
        get { state.lock.withLock { state.observer } }
        set { state.lock.withLock { state.observer = newValue } }
    }

    static func report(_ moment: Moment) { observer?(moment) }
}
