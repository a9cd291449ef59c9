import OpenCoreData

/// Which of an entity's properties travel between replicas. Clients and the server share this one rule.
///
/// Transient and derived attributes are not stored, or are computed where they are stored, so they stay home.
/// Of a relationship pair only one side travels (see ``SyncRecordChange``): both sides travelling would let two
/// replicas disagree about one link.
public enum SyncedProperties {
    /// The stored attributes of `entity` that travel, by name.
    public static func attributes(of entity: EntityDescription) -> [String: AttributeDescription] {
        entity.attributesByName.filter { _, attribute in
            !attribute.isTransient && !attribute.isDerived
                && attribute.attributeType != .objectID && attribute.attributeType != .composite
        }
    }

    /// The relationships of `entity` whose destinations travel, by name.
    public static func relationships(of entity: EntityDescription) -> [String: RelationshipDescription] {
        entity.relationshipsByName.filter { _, relationship in travels(relationship) }
    }

    /// Whether `relationship`'s destinations travel: one with no inverse or a transient one; the to-one side of a one-to-many
    /// pair; of a one-to-one or many-to-many pair, the side whose name sorts first (entity name, then
    /// relationship name).
    public static func travels(_ relationship: RelationshipDescription) -> Bool {
        if relationship.isTransient { return false }
        // A transient inverse stays home, so the stored side is the pair's only traveller.
        guard let inverse = relationship.inverseRelationship, inverse !== relationship, !inverse.isTransient else { return true }
        if relationship.isToMany != inverse.isToMany { return !relationship.isToMany }
        let mine = (relationship.entity?.name ?? "", relationship.name)
        let theirs = (inverse.entity?.name ?? "", inverse.name)
        return mine <= theirs
    }
}
