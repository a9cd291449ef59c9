import Foundation

/// What a save needs to know of a model's derived attributes, worked out once per model.
final class DerivationPlan: @unchecked Sendable {
    // @unchecked Sendable: immutable once made (by its model's initializer).

    /// Per entity (inherited derived attributes included): the slot and description of each derived attribute.
    let derivedSlots: [ObjectIdentifier: [(slot: Int, attribute: AttributeDescription)]]
    /// The inverses of the relationships derivations read: a saved object reached through one of these
    /// tells which objects to recompute.
    let tracedRelationships: Set<ObjectIdentifier>

    /// The plan for a model built from frozen entities; nil when no entity has a derived attribute.
    convenience init?(model: ManagedObjectModel) {
        self.init(entities: model.entities)
        if derivedSlots.isEmpty { return nil }
    }

    private init(entities: [EntityDescription]) {
        var slots: [ObjectIdentifier: [(slot: Int, attribute: AttributeDescription)]] = [:]
        var traced = Set<ObjectIdentifier>()
        for entity in entities {
            for (slot, property) in entity.allProperties.enumerated() {
                guard let attribute = property as? AttributeDescription, let expression = attribute.derivationExpression
                else { continue }
                slots[ObjectIdentifier(entity), default: []].append((slot, attribute))
                for relationship in DerivationCheck.relationships(readBy: expression, of: entity) {
                    if let inverse = relationship.inverseRelationship { traced.insert(ObjectIdentifier(inverse)) }
                }
            }
        }
        derivedSlots = slots
        tracedRelationships = traced
    }

    /// A computed value in the form the attribute's type takes: aggregates give `Int` or `Double` or `Decimal`
    /// where the attribute may be another width or kind of number.
    static func storable(_ value: Any?, for attribute: AttributeDescription) -> Any? {
        guard let value else { return nil }
        switch attribute.attributeType {
        case .integer16, .integer32, .integer64:
            if let number = value as? Double, number.isFinite, number.rounded() == number { return Int64(number) }
            if let number = value as? Decimal { return Int64(truncating: number as NSDecimalNumber) }
            if let number = value as? Int { return Int64(number) }
            return value
        case .double, .float:
            if let number = value as? Int { return Double(number) }
            if let number = value as? Int64 { return Double(number) }
            if let number = value as? Decimal { return NSDecimalNumber(decimal: number).doubleValue }
            return value
        case .decimal:
            if let number = value as? Int { return Decimal(number) }
            if let number = value as? Double { return Decimal(number) }
            return value
        default:
            return value
        }
    }
}
