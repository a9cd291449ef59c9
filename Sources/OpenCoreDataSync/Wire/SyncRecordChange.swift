import Foundation

/// One object's change as it travels between replicas, named by its record ID.
///
/// An upsert carries the properties that changed (every stored property for an object the sender just
/// inserted); the receiver applies them property by property, so two replicas editing different properties
/// of one object both keep their edit. A delete carries no values and wins over any later upsert of the same
/// record: a deleted record never comes back.
///
/// Relationships travel from one side only, so that the two sides of a pair cannot disagree: a to-one
/// relationship always; a to-many relationship only when its inverse is also to-many (then from the side whose
/// name sorts first) or it has no inverse. The receiver's object graph sets the other side.
public struct SyncRecordChange: Sendable, Hashable, Codable {
    /// Whether the record was inserted or updated, or deleted.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Inserted or updated: `values` holds the properties that changed.
        case upsert
        /// Deleted: `values` is empty.
        case delete
    }

    /// The record ID every replica knows the object by.
    public var recordID: UUID
    /// The object's entity, by name.
    public var entity: String
    /// Upsert or delete.
    public var kind: Kind
    /// Property name to value, for an upsert.
    public var values: [String: SyncValue]

    /// A change of one record.
    public init(recordID: UUID, entity: String, kind: Kind, values: [String: SyncValue] = [:]) {
        self.recordID = recordID
        self.entity = entity
        self.kind = kind
        self.values = values
    }
}
