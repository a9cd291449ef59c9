import Foundation

/// What a ``SyncEngine`` is doing, as its ``SyncEngine/states`` sequence and
/// ``SyncEngine/stateDidChangeNotification`` report it.
public enum SyncState: Sendable, Hashable {
    /// Not started, or stopped.
    case stopped
    /// Up to date with what it last heard from the server; waiting for a local save or news.
    case idle
    /// Sending local transactions.
    case pushing
    /// Fetching and applying the server's transactions.
    case pulling
    /// The server cannot be reached; local saves keep accumulating and are sent once it can.
    case offline(reason: String)
    /// The last round failed for another reason (a refusal, a malformed answer, a store error).
    case error(String)
}
