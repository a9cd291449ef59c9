/// What the model's back-references (a property's entity, a relationship's destination, a superentity)
/// point at weakly, instead of the entity itself.
///
/// A weak reference to an object gives it a side table, and from then on every retain and release of it
/// takes Swift's slow path. Entities are retained and released for every object and object ID, so they
/// must never be the target of a weak reference. The link is owned by its entity alone: when the entity
/// goes, so does the link, and the weak references to it read nil as before.
final class EntityLink: @unchecked Sendable {
    // @unchecked Sendable: written once by the entity's initializer and cleared in its deinit.
    unowned(unsafe) var entity: EntityDescription?

    init() {}
}
