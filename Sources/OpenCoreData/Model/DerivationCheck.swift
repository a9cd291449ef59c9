import Foundation

/// The checks a model makes of its derived attributes when it is built, and what a save needs to know about
/// them afterwards (which relationships each derivation reads through).
///
/// A derivation may read: the object's own stored, non-derived attributes (`name`); an attribute of a to-one's
/// destination (`author.name`); a to-many's `@count`, or `@sum`/`@min`/`@max`/`@avg` of one of its destination's
/// attributes (`items.@sum.price`); constants; `now()`; and functions and arithmetic of those
/// (`canonical:(name)`, `price * quantity`). One relationship step at most, and every relationship read needs
/// an inverse: a change on the related side is traced back through it to the objects to recompute.
enum DerivationCheck {
    static let aggregateOperators: Set<String> = ["@sum", "@min", "@max", "@avg"]

    static func check(_ entities: [EntityDescription]) throws {
        for entity in entities {
            for case let attribute as AttributeDescription in entity.properties {
                guard let expression = attribute.derivationExpression else { continue }
                func refuse(_ reason: String) -> ModelError {
                    .invalidDerivation(entity: entity.name, attribute: attribute.name, reason: reason)
                }
                if attribute.isTransient { throw refuse("a derived attribute is stored, so it cannot be transient") }
                try check(expression, of: entity, refuse: refuse)
            }
        }
    }

    private static func check(_ expression: QueryExpression, of entity: EntityDescription,
                              refuse: (String) -> ModelError) throws {
        switch expression {
        case .constant:
            return
        case .keyPath(.evaluatedObject, let components):
            try checkKeyPath(components, of: entity, refuse: refuse)
        case .arithmetic(_, let left, let right):
            try check(left, of: entity, refuse: refuse)
            try check(right, of: entity, refuse: refuse)
        case .negate(let operand):
            try check(operand, of: entity, refuse: refuse)
        case .function(let function, let arguments):
            if function == .random { throw refuse("random() would give a new value at every save") }
            for argument in arguments { try check(argument, of: entity, refuse: refuse) }
        default:
            throw refuse("'\(expression.expressionFormat)' is not a key path, function or arithmetic a save can compute")
        }
    }

    private static func checkKeyPath(_ components: [String], of entity: EntityDescription,
                                     refuse: (String) -> ModelError) throws {
        let path = components.joined(separator: ".")
        guard let first = components.first, let property = entity.propertiesByName[first] else {
            throw refuse("'\(path)' names '\(components.first ?? "")', which is not a property of '\(entity.name)'")
        }
        func checkStoredAttribute(_ name: String, of owner: EntityDescription) throws {
            guard let attribute = owner.attributesByName[name], !attribute.isTransient else {
                throw refuse("'\(path)': '\(name)' is not a stored attribute of '\(owner.name)'")
            }
            if attribute.isDerived {
                throw refuse("'\(path)' reads derived attribute '\(owner.name).\(name)'; derivations do not chain")
            }
        }
        if property is AttributeDescription {
            guard components.count == 1 else { throw refuse("'\(path)' goes on past attribute '\(first)'") }
            return try checkStoredAttribute(first, of: entity)
        }
        guard let relationship = property as? RelationshipDescription, !relationship.isTransient else {
            throw refuse("'\(path)': '\(first)' is transient")
        }
        guard relationship.inverseRelationship != nil else {
            throw refuse("'\(path)' reads relationship '\(first)', which has no inverse (changes on its other side could not be traced)")
        }
        let destination: EntityDescription = relationship.destinationEntity
        if relationship.isToMany {
            if components.count == 2 && components[1] == "@count" { return }
            guard components.count == 3, aggregateOperators.contains(components[1]) else {
                throw refuse("'\(path)': a to-many is read as '\(first).@count' or '\(first).@sum.attribute' (also @min, @max, @avg)")
            }
            return try checkStoredAttribute(components[2], of: destination)
        }
        guard components.count == 2 else {
            throw refuse("'\(path)': a to-one is read as '\(first).attribute', one step")
        }
        try checkStoredAttribute(components[1], of: destination)
    }

    /// The relationships a derivation reads through (the first component of its relationship key paths).
    static func relationships(readBy expression: QueryExpression, of entity: EntityDescription) -> [RelationshipDescription] {
        switch expression {
        case .keyPath(.evaluatedObject, let components):
            guard let first = components.first, let relationship = entity.relationshipsByName[first] else { return [] }
            return [relationship]
        case .arithmetic(_, let left, let right):
            return relationships(readBy: left, of: entity) + relationships(readBy: right, of: entity)
        case .negate(let operand):
            return relationships(readBy: operand, of: entity)
        case .function(_, let arguments):
            return arguments.flatMap { relationships(readBy: $0, of: entity) }
        default:
            return []
        }
    }

    /// The key paths a derivation reads (`["name"]`, `["author", "name"]`, `["books", "@sum", "price"]`).
    static func keyPaths(readBy expression: QueryExpression) -> [[String]] {
        switch expression {
        case .keyPath(.evaluatedObject, let components): return [components]
        case .arithmetic(_, let left, let right): return keyPaths(readBy: left) + keyPaths(readBy: right)
        case .negate(let operand): return keyPaths(readBy: operand)
        case .function(_, let arguments): return arguments.flatMap { keyPaths(readBy: $0) }
        default: return []
        }
    }

    /// Whether a derivation calls `now()`, so that its value changes whenever its row is written.
    static func readsNow(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .function(.now, _): return true
        case .function(_, let arguments): return arguments.contains(where: readsNow)
        case .arithmetic(_, let left, let right): return readsNow(left) || readsNow(right)
        case .negate(let operand): return readsNow(operand)
        default: return false
        }
    }
}
