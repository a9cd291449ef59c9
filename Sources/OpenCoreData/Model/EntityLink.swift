/// What the model's back-references (a property's entity, a relationship's destination, a superentity)
/// point at weakly, instead of the entity itself.
///
/// A weak reference to an object gives it a side table, and from then on every retain and release of it
/// takes Swift's slow path. Entities are retained and released for every object and object ID, so they
/// must never be the target of a weak reference. The link is owned by its entity alone: when the entity
/// goes, so does the link, and the weak references to it read nil as before.
final class EntityLink: @unchecked Sendable {
    // @unchecked Sendable: written once by the entity's initializer and cleared in its deinit.
    // Unsafe: the entity is the link's only strong holder and clears this first thing in its deinit, so while
    // anyone reaches the link (weakly) the pointer is the live entity or nil. Plain `weak` would give the
    // entity a side table (`load-batch-by-id`: 102.9 M → 98.6 M instructions for the link); `unowned(unsafe)`
    // also skips the unowned count's atomic updates and the liveness check per read.
    unowned(unsafe) var entity: EntityDescription?

    init() {}
}
