import Foundation
import Synchronization

/// A test seam: work run between a residual selection (``ResidualQuery``, ``ResidualKeySelection``) and the
/// statement that acts on the selected keys (a batch delete or update, a dictionary query), so a test can change
/// rows from another session at exactly that point. Empty in production: the cost is one lock and a lookup.
///
/// Keyed by store identifier (`NSStoreUUID`), so tests running at once on other stores are not affected.
package enum ResidualSelectionHook {
    private static let actions = Mutex<[String: @Sendable () -> Void]>([:])

    /// Sets (or with nil removes) the work run after each residual selection on the store `storeIdentifier`.
    package static func set(_ action: (@Sendable () -> Void)?, forStore storeIdentifier: String) {
        actions.withLock { $0[storeIdentifier] = action }
    }

    /// Runs the work set for `storeIdentifier`, if any.
    static func run(forStore storeIdentifier: String) {
        guard let action = actions.withLock({ $0.isEmpty ? nil : $0[storeIdentifier] }) else { return }
        action()
    }
}
