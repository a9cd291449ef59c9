import Foundation

/// One record as the server holds it (`GET /v1/records`): the server's copy, which every replica converges on.
public struct SyncRecordState: Sendable, Hashable, Codable {
    /// The record ID.
    public var recordID: UUID
    /// The entity, by name.
    public var entity: String
    /// Every property the record's upserts carried, merged in the server's order (empty once deleted).
    public var values: [String: SyncValue]
    /// Whether a delete reached it (a deleted record never comes back).
    public var deleted: Bool

    /// A record's state.
    public init(recordID: UUID, entity: String, values: [String: SyncValue], deleted: Bool) {
        self.recordID = recordID
        self.entity = entity
        self.values = values
        self.deleted = deleted
    }
}
