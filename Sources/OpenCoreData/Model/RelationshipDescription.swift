import Foundation

/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, Sendable, Hashable {
    /// Related objects stay; their inverse no longer points at the deleted object.
    case nullify = "Nullify"
    /// Related objects are deleted too.
    case cascade = "Cascade"
    /// The delete is refused (at save) while related objects exist.
    case deny = "Deny"
    /// Nothing is done; the inverse may be left dangling (as in Core Data, rarely what you want).
    case noAction = "No Action"
}

/// A relationship from one entity to another: to-one, to-many, or ordered to-many.
///
/// ```swift
/// let items = RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "list")
/// items.deleteRule = .cascade
/// ```
public final class RelationshipDescription: PropertyDescription, @unchecked Sendable {
    /// The destination entity's name, resolved when the model is built.
    public var destinationEntityName: String { didSet { checkMutable() } }
    /// The inverse relationship's name on the destination entity, if any.
    public var inverseName: String? { didSet { checkMutable() } }
    /// Whether the relationship holds a set of objects rather than one.
    public var isToMany: Bool { didSet { checkMutable() } }
    /// Whether a to-many relationship keeps its objects in order.
    public var isOrdered = false { didSet { checkMutable() } }
    /// The smallest number of related objects (checked on save; 0 means none required).
    public var minCount = 0 { didSet { checkMutable() } }
    /// The largest number of related objects (0 means unbounded; a to-one has 1).
    public var maxCount: Int { didSet { checkMutable() } }
    /// What deleting the source object does to the destination objects.
    public var deleteRule: DeleteRule = .nullify { didSet { checkMutable() } }

    /// The destination entity, set when the model is built. (Weak, like the links below: the model owns
    /// its entities; keep the model — a coordinator does — while you use them.)
    public internal(set) var destinationEntity: EntityDescription! {
        get { destinationLink?.entity }
        set { destinationLink = newValue?.link }
    }
    private weak var destinationLink: EntityLink?
    /// The inverse relationship, set when the model is built.
    public internal(set) weak var inverseRelationship: RelationshipDescription?

    /// Creates a relationship.
    public init(name: String, destination: String, toMany: Bool = false, inverse: String? = nil,
                deleteRule: DeleteRule = .nullify, isOptional: Bool = true, isOrdered: Bool = false) {
        self.destinationEntityName = destination
        self.isToMany = toMany
        self.inverseName = inverse
        self.maxCount = toMany ? 0 : 1
        super.init(name: name)
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.isOrdered = isOrdered
    }

    /// The inverse as the store sees it: nil when either side is transient. A stored relationship whose
    /// inverse is transient (mogenerator's `Company.assistants`, inverse `Assistant.company`) is stored as
    /// one without an inverse, since the transient side has no column; the context still keeps both sides
    /// in step in memory. Inferred: Core Data loads such models, and no store written with one is at hand.
    var storedInverse: RelationshipDescription? {
        guard !isTransient, let inverse = inverseRelationship, !inverse.isTransient else { return nil }
        return inverse
    }

    /// Both this relationship and its stored inverse are to-many.
    var isManyToMany: Bool { isToMany && (storedInverse?.isToMany ?? false) }
}
