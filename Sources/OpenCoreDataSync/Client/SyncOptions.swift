import Foundation

/// How a ``SyncEngine`` works.
public struct SyncOptions: Sendable, Hashable {
    /// How pulled changes meet local ones not pushed yet (``SyncMergePolicy/localChangesWin`` by default).
    public var mergePolicy: SyncMergePolicy
    /// How long the engine waits between rounds when nothing tells it sooner (local saves do).
    public var pollInterval: Duration
    /// The most local transactions one push sends.
    public var pushBatchSize: Int
    /// The most server transactions one pull asks for (each page is applied in one save).
    public var pullPageSize: Int
    /// The `transactionAuthor` of the saves that apply pulled changes; the engine never pushes them back.
    public var author: String

    /// Options; every argument has the default described on its property.
    public init(mergePolicy: SyncMergePolicy = .localChangesWin, pollInterval: Duration = .seconds(1),
                pushBatchSize: Int = 200, pullPageSize: Int = 500, author: String = "OpenCoreDataSync") {
        self.mergePolicy = mergePolicy
        self.pollInterval = pollInterval
        self.pushBatchSize = max(1, pushBatchSize)
        self.pullPageSize = max(1, pullPageSize)
        self.author = author
    }
}
