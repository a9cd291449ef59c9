import Foundation

/// What a fetch returns.
public enum FetchRequestResultType: Sendable, Hashable {
    /// Managed objects, registered in the context.
    case managedObject
    /// Object IDs only (no rows are read beyond the keys).
    case managedObjectID
    /// `[String: Any]` dictionaries of ``FetchRequest/propertiesToFetch`` (attributes, expressions).
    case dictionary
    /// The number of matching objects.
    case count
}

/// Describes what to fetch: an entity, a predicate, an order, limits, and the shape of the result.
///
/// ```swift
/// let request = FetchRequest<ManagedObject>(entityName: "Item")
/// request.predicate = try QueryPredicate(format: "done == NO")
/// request.sortDescriptors = [QuerySortDescriptor(key: "createdAt", ascending: true)]
/// request.fetchBatchSize = 20
/// let items = try context.fetch(request)
/// ```
public final class FetchRequest<Result>: PersistentStoreRequest, @unchecked Sendable, CustomStringConvertible {
    // @unchecked Sendable: a request is configured, then handed to a context; execution copies what it
    // needs and never mutates it. Configure it on one thread at a time.

    /// The entity's name.
    public var entityName: String
    /// Which objects: nil for all.
    public var predicate: QueryPredicate?
    /// The order; through to-one relationships with dotted keys (`details.closeDate`).
    public var sortDescriptors: [QuerySortDescriptor] = []
    /// At most this many results (0: no limit).
    public var fetchLimit = 0
    /// Skip this many results first.
    public var fetchOffset = 0
    /// With a value above 0, only IDs are read at first and objects are read this many at a time as
    /// they are used.
    public var fetchBatchSize = 0
    /// The shape of the result.
    public var resultType: FetchRequestResultType = .managedObject
    /// Whether unsaved inserts, changes and deletes in the context show in the result. A child context's
    /// parents are its store: their unsaved changes show either way.
    public var includesPendingChanges = true
    /// Whether objects of sub-entities match too.
    public var includesSubentities = true
    /// For dictionary results: attribute names (dotted paths through to-one relationships allowed) and
    /// ``ExpressionDescription``s.
    public var propertiesToFetch: [Any]?
    /// For dictionary results: group by these attribute names.
    public var propertiesToGroupBy: [Any]?
    /// For grouped dictionary results: keep only groups matching this predicate.
    public var havingPredicate: QueryPredicate?
    /// For dictionary results: leave out duplicate dictionaries.
    public var returnsDistinctResults = false
    /// Whether fetched objects may stay faults until used (rows are read at once either way here,
    /// unless ``fetchBatchSize`` is set).
    public var returnsObjectsAsFaults = true
    /// The stores the fetch reads (empty: all).
    public var affectedStores: [PersistentStore] = []
    /// Relationship key paths (`details`, `details.bank`, `items`) whose related objects are read together
    /// with the results — one `Z_PK IN (…)` query per relationship and batch instead of one per object.
    public var relationshipKeyPathsForPrefetching: [String] = []

    /// Creates a request for an entity.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// The entity, predicate, sort descriptors and result type, for logs and debugging.
    public var description: String {
        "<FetchRequest (entity: \(entityName); predicate: (\(predicate?.predicateFormat ?? "null")); sortDescriptors: (\(sortDescriptors.map(\.description).joined(separator: ", "))); type: \(resultType))>"
    }

    /// A copy, for executing without later edits to the original showing.
    func copy() -> FetchRequest<Result> { copy(as: Result.self) }

    /// A copy with another result type: the same query, for code that works on objects whatever class the
    /// caller asked for (a typed fetched results controller).
    func copy<Other>(as type: Other.Type) -> FetchRequest<Other> {
        let copy = FetchRequest<Other>(entityName: entityName)
        copy.predicate = predicate
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.fetchBatchSize = fetchBatchSize
        copy.resultType = resultType
        copy.includesPendingChanges = includesPendingChanges
        copy.includesSubentities = includesSubentities
        copy.propertiesToFetch = propertiesToFetch
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        copy.returnsDistinctResults = returnsDistinctResults
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.affectedStores = affectedStores
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        return copy
    }
}

extension FetchRequest where Result == ManagedObjectID {
    /// A request for object IDs.
    public convenience init(objectIDsOf entityName: String) {
        self.init(entityName: entityName)
        resultType = .managedObjectID
    }
}

extension FetchRequest where Result == [String: Any] {
    /// A request for dictionaries.
    public convenience init(dictionariesOf entityName: String) {
        self.init(entityName: entityName)
        resultType = .dictionary
    }
}
