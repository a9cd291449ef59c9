import Foundation
import OpenCoreData

/// The store `ocd serve` shows, opened read-only unless `--read-write` asked otherwise, and what its pages
/// need from it: each page is made in a context of its own, so requests answered at once never share objects.
struct StoreBrowser: Sendable {
    /// The store, opened read-only (a write would fail in the store itself, whatever a page did) or, with
    /// `--read-write`, writable.
    let opened: OpenedStore
    /// Whether object pages offer forms that edit and delete (`--read-write`).
    var isWritable = false
    /// Whether the store keeps persistent history: object pages then list the object's changes.
    var keepsHistory = false
    /// A secret made when the server starts, carried by every form and required of every POST: a page of
    /// another site cannot read it, so it cannot make a form this server accepts.
    var formToken = ""
    /// The model's name as `ocd inspect` gives it.
    let modelName: String
    /// The store as pages name it: its path, or its PostgreSQL URL without the password.
    let storeName: String

    /// How many objects a table page shows.
    static let pageSize = 50
    /// How many related objects an object page lists for one to-many relationship.
    static let relatedObjectLimit = 100
    /// How many of an object's changes its page lists, newest first.
    static let historyLimit = 50

    var model: ManagedObjectModel { opened.coordinator.managedObjectModel }

    /// Runs `body` in a new context on the store, on that context's queue, and returns what it returns.
    ///
    /// - Throws: whatever `body` throws.
    func withContext<T>(_ body: (ManagedObjectContext) throws -> T) throws -> T {
        let context = opened.newContext()
        return try context.performAndWait { try body(context) }
    }

    /// Each entity's object count by name, its subentities' objects included (as a fetch counts them).
    ///
    /// - Throws: the store's error when an entity cannot be counted.
    func counts() throws -> [String: Int] {
        try withContext { context in
            var counts: [String: Int] = [:]
            for entity in model.entities {
                counts[entity.name] = try context.count(for: FetchRequest<ManagedObject>(entityName: entity.name))
            }
            return counts
        }
    }

    /// The entity named `name`.
    ///
    /// - Throws: ``BrowserError`` (404) naming the entity when the model has none of that name.
    func entity(named name: String) throws -> EntityDescription {
        guard let entity = model.entitiesByName[name] else {
            throw BrowserError.notFound("The model has no entity named “\(name)”.")
        }
        return entity
    }

    /// The object of `entity` whose primary key is `primaryKey`, in `context`.
    ///
    /// - Throws: ``BrowserError`` (404) when the store has no such object.
    func object(of entity: EntityDescription, primaryKey: Int64, in context: ManagedObjectContext) throws -> ManagedObject {
        guard primaryKey > 0, let store = opened.coordinator.storeBackends.first else {
            throw BrowserError.notFound("\(entity.name) has no object \(primaryKey).")
        }
        let id = ManagedObjectID(entity: entity, primaryKey: primaryKey, store: store.identity)
        do {
            return try context.existingObject(with: id)
        } catch {
            throw BrowserError.notFound("\(entity.name) has no object \(primaryKey).")
        }
    }

    /// The objects a relationship's value holds (one for a to-one, every member for a to-many): an ordered
    /// relationship's in its order, others in primary key order.
    static func relatedObjects(_ value: Any?) -> [ManagedObject] {
        if let object = value as? ManagedObject { return [object] }
        if let ordered = value as? [ManagedObject] { return ordered }
        guard let members = value as? any Sequence else { return [] }
        return objects(in: members).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
    }

    /// The managed objects among a sequence's elements (a to-many value is a set or an ordered set).
    private static func objects<Members: Sequence>(in members: Members) -> [ManagedObject] {
        members.compactMap { $0 as? ManagedObject }
    }
}
