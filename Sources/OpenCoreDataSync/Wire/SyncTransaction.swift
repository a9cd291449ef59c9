import Foundation

/// One client save as it travels: the changes one local transaction made, under an ID that makes sending it
/// twice apply it once.
public struct SyncTransaction: Sendable, Hashable, Codable {
    /// Unique across every client: the client's ID, a colon, and the local history token of the save
    /// (`"<client UUID>:<token>"`). The server keeps the IDs it has applied and acknowledges a repeat without
    /// applying it again.
    public var id: String
    /// The client that made the save (its UUID as text). Pulls return every client's transactions, the
    /// puller's own included, since the server's order decides between them.
    public var origin: String
    /// The records the save changed, in the order they are to be applied.
    public var changes: [SyncRecordChange]
    /// When the server applied it (0 in a push; set in what a pull returns). Tokens grow within a zone.
    public var serverToken: Int64

    /// A transaction to push or one pulled.
    public init(id: String, origin: String, changes: [SyncRecordChange], serverToken: Int64 = 0) {
        self.id = id
        self.origin = origin
        self.changes = changes
        self.serverToken = serverToken
    }
}
