#if DEBUG
import Foundation

/// The debug-build check run at the end of each mutating entry point of a fast-path structure (the object
/// registry, row blocks and their builder, the spare pool, a batched result's slots): a broken invariant stops
/// the program where it broke, naming it, rather than surfacing later as a wrong object or a crash elsewhere.
/// Not built in release: every call site sits inside `#if DEBUG`, so the fast paths pay nothing there.
enum InvariantCheck {
    private static let lock = NSLock()
    // Guarded by `lock`, which every read and write takes. Debug builds only, not a fast path: a plain lock
    // rather than a global `Mutex`, which ThreadSanitizer reports as an access race.
    nonisolated(unsafe) private static var counts: [String: Int] = [:]

    /// Stops the program when `problems` (what `structure`'s `invariantViolations` found after `mutation`)
    /// is not empty; counts the check either way (``runs(of:)``).
    static func verify(_ structure: StaticString, after mutation: StaticString, _ problems: [String]) {
        lock.withLock { counts["\(structure)", default: 0] += 1 }
        guard problems.isEmpty else {
            preconditionFailure("\(structure) invariants broken after \(mutation): \(problems.joined(separator: "; "))")
        }
    }

    /// How many checks of `structure` have run in this process (tests show the hooks run).
    static func runs(of structure: String) -> Int {
        lock.withLock { counts[structure, default: 0] }
    }
}
#endif
