import Foundation

/// Why a sync step failed. Each case names its culprit; the engine reports it in ``SyncState/error(_:)`` and
/// tries again on its next round (a refusal by the server is not retried until something changes).
public enum SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The container cannot be synced: no SQLite store, history tracking off, or the store is read-only.
    case storeNotSyncable(reason: String)
    /// The server answered with a refusal (`reason` is ``SyncErrorResponse/reason``: `unauthorized`,
    /// `model-mismatch`, `invalid-change`, …).
    case refused(status: Int, reason: String, message: String)
    /// The server could not be reached (offline, refused connection, timeout).
    case unreachable(server: String, reason: String)
    /// The server's answer was not what the protocol says.
    case malformedResponse(reason: String)
    /// A pulled change does not fit the local model (an entity, key or value kind it does not have).
    case invalidServerChange(entity: String, key: String?, recordID: UUID, reason: String)

    /// One line naming the culprit.
    public var description: String {
        switch self {
        case .storeNotSyncable(let reason): "the store cannot be synced: \(reason)"
        case .refused(let status, let reason, let message): "the server refused (\(status) \(reason)): \(message)"
        case .unreachable(let server, let reason): "the server \(server) cannot be reached: \(reason)"
        case .malformedResponse(let reason): "the server's answer is malformed: \(reason)"
        case .invalidServerChange(let entity, let key, let recordID, let reason):
            "a pulled change of \(entity)\(key.map { ".\($0)" } ?? "") (record \(recordID)) does not fit the model: \(reason)"
        }
    }
}
