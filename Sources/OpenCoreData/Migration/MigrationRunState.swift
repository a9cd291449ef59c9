import Foundation
import Synchronization

/// What a running migration shares with other threads: how far it is, and the error it was cancelled with
/// (``MigrationManager/migrationProgress``, ``MigrationManager/cancelMigrationWithError(_:)``).
final class MigrationRunState: Sendable {
    private struct Values {
        var progress: Float = 0
        var cancellation: Cancellation?
    }

    /// The error an app cancelled with, handed from its thread to the migration's and thrown there once.
    private struct Cancellation: @unchecked Sendable {
        let error: any Error
    }

    private let values = Mutex(Values())

    /// From 0 to 1.
    var progress: Float {
        get { values.withLock { $0.progress } }
        set { values.withLock { $0.progress = newValue } }
    }

    /// The error the migration stops with at its next batch; nil while it is not cancelled.
    var cancellation: (any Error)? {
        get { values.withLock { $0.cancellation?.error } }
        set { values.withLock { $0.cancellation = newValue.map(Cancellation.init) } }
    }
}
