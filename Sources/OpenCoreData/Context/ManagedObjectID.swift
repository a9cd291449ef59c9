import Foundation
import Synchronization

/// Identifies a store within a coordinator, for object IDs and their URIs.
///
/// Each identity gets a process-wide index, and object IDs hold that index rather than a reference: an ID is
/// made for every row a fetch returns, and a reference would cost a retain and a release each time. The
/// identities are kept for the life of the process (one small object per store opened) so an index always
/// resolves.
package final class StoreIdentity: Sendable {
    let uuid: String
    /// 1-based; 0 in an ID means "no store" (a temporary ID).
    let index: UInt32

    package init(uuid: String) {
        self.uuid = uuid
        index = Self.lastIndex.add(1, ordering: .relaxed).newValue
        Self.lock.lock()
        Self.all[index] = self
        Self.lock.unlock()
    }

    private static let lastIndex = Atomic<UInt32>(0)
    // Guarded by `lock` (a plain lock: ThreadSanitizer reports a global `Mutex` value as an access race).
    private static let lock = NSLock()
    nonisolated(unsafe) private static var all: [UInt32: StoreIdentity] = [:]

    /// The identity an ID's store index names.
    static func identity(at index: UInt32) -> StoreIdentity? {
        guard index > 0 else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return all[index]
    }
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
    /// The row's primary key (`Z_PK`); 0 for a temporary ID. Set only by a context giving a spare object
    /// another row of the same entity (see ``SparePool``).
    public internal(set) var primaryKey: Int64
    let temporaryKey: UInt64
    /// The store's ``StoreIdentity/index`` (0 for a temporary ID).
    let storeIndex: UInt32
    var store: StoreIdentity? { StoreIdentity.identity(at: storeIndex) }

    static let temporaryCounter = Atomic<UInt64>(0)

    package init(entity: EntityDescription, primaryKey: Int64, store: StoreIdentity?) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.temporaryKey = 0
        self.storeIndex = store?.index ?? 0
    }

    /// An ID in the same store as another (no lookup of the store's identity).
    init(entity: EntityDescription, primaryKey: Int64, storeIndex: UInt32) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.temporaryKey = 0
        self.storeIndex = storeIndex
    }

    package init(temporaryFor entity: EntityDescription) {
        self.entity = entity
        self.primaryKey = 0
        self.temporaryKey = Self.temporaryCounter.add(1, ordering: .relaxed).newValue
        self.storeIndex = 0
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

    /// The ID's URI (``uriRepresentation()``) in angle brackets.
    public var description: String { "<\(uriRepresentation().absoluteString)>" }

    /// Whether both name the same object: the same entity, key (or temporary key) and store.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.primaryKey == rhs.primaryKey && lhs.temporaryKey == rhs.temporaryKey && lhs.entity === rhs.entity
            && lhs.storeIndex == rhs.storeIndex
    }

    /// Hashes the key, temporary key and entity, in step with `==`.
    public func hash(into hasher: inout Hasher) {
        // One combined word: IDs are hashed in every registry operation, and equality still compares
        // every field.
        hasher.combine(UInt64(bitPattern: primaryKey) &* 0x9E37_79B9_7F4A_7C15 ^ temporaryKey
                       ^ UInt64(truncatingIfNeeded: entity.entityNumber) << 56)
    }
}
