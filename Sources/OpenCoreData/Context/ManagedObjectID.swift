import Foundation
import Synchronization

/// Identifies a store within a coordinator, for object IDs and their URIs.
final class StoreIdentity: Sendable {
    let uuid: String
    init(uuid: String) { self.uuid = uuid }
}

/// The identity of an object, valid in every context of the same coordinator.
///
/// IDs are values: pass them between contexts and queues, never the objects. A new object has a
/// temporary ID until its first save (or ``ManagedObjectContext/obtainPermanentIDs(for:)``).
///
/// ```swift
/// let id = item.objectID                       // on the main context
/// background.perform { let same = try background.existingObject(with: id) }
/// ```
public struct ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The object's entity.
    public let entity: EntityDescription
    /// The row's primary key (`Z_PK`); 0 for a temporary ID.
    public let primaryKey: Int64
    let temporaryKey: UInt64
    let store: StoreIdentity?

    static let temporaryCounter = Atomic<UInt64>(0)

    init(entity: EntityDescription, primaryKey: Int64, store: StoreIdentity?) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.temporaryKey = 0
        self.store = store
    }

    init(temporaryFor entity: EntityDescription) {
        self.entity = entity
        self.primaryKey = 0
        self.temporaryKey = Self.temporaryCounter.add(1, ordering: .relaxed).newValue
        self.store = nil
    }

    /// Whether the object has not been saved yet.
    public var isTemporaryID: Bool { temporaryKey != 0 }

    /// A URI that names the object: `x-coredata://STORE-UUID/Entity/pN`, or `x-coredata:///Entity/tN`
    /// for a temporary ID.
    public func uriRepresentation() -> URL {
        if isTemporaryID {
            return URL(string: "x-coredata:///\(entity.name)/t\(temporaryKey)")!
        }
        return URL(string: "x-coredata://\(store?.uuid ?? "")/\(entity.name)/p\(primaryKey)")!
    }

    public var description: String { "<\(uriRepresentation().absoluteString)>" }

    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.primaryKey == rhs.primaryKey && lhs.temporaryKey == rhs.temporaryKey && lhs.entity === rhs.entity
            && lhs.store === rhs.store
    }

    public func hash(into hasher: inout Hasher) {
        // One combined word: IDs are hashed in every registry operation, and equality still compares
        // every field.
        hasher.combine(UInt64(bitPattern: primaryKey) &* 0x9E37_79B9_7F4A_7C15 ^ temporaryKey
                       ^ UInt64(truncatingIfNeeded: entity.entityNumber) << 56)
    }
}
