import Foundation

/// What an operand of a comparison gives, as far as the compiler can tell without reading a row.
package enum OperandKind: Equatable {
    /// A number, boolean or date (a date compares as seconds since 2001).
    case number
    /// A string or URI.
    case text
    /// Bytes, a UUID, an object, a collection.
    case other
    /// The constant nil.
    case null
    /// Could be any of these (an expression whose kind depends on the row).
    case unknown

    init(_ type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean, .date: self = .number
        case .string, .uri: self = .text
        case .binaryData, .uuid, .transformable, .objectID, .composite: self = .other
        }
    }

    init(_ value: QueryValue) {
        if value == .null {
            self = .null
        } else if QueryValueSemantics.number(value) != nil {
            self = .number
        } else if QueryValueSemantics.text(value) != nil {
            self = .text
        } else {
            self = .other
        }
    }

    /// The kind of a value that is one of two (TERNARY's branches, members of a literal): nil fits anything.
    func combined(with other: OperandKind) -> OperandKind {
        if self == other || other == .null { return self }
        return self == .null ? other : .unknown
    }
}

/// A number compared with a string: memory reads the string as the number it spells
/// (`QueryValueSemantics.spelledNumber`), while SQLite converts by column affinity (text to a number next to a
/// numeric column, a number to text next to a text column, nothing between expressions). These decide, from
/// the operands' kinds, how such a comparison compiles so that SQL gives memory's answer.
extension CompilationContext {
    /// How `lhs op rhs` compiles.
    enum MixedKindPlan {
        /// As SQLite compares (the kinds agree, or involve nil, bytes or objects).
        case plain
        /// A string constant replaced by the number it spells, then as SQLite compares.
        case folded(QueryExpression, QueryExpression)
        /// A string constant that spells no number against a number: never equal, never ordered.
        case never
        /// Decided for each row by `ocd_compare`, which runs memory's comparison.
        case perRow
    }

    func mixedKindPlan(_ lhs: QueryExpression, _ rhs: QueryExpression) throws -> MixedKindPlan {
        let left = try operandKind(lhs), right = try operandKind(rhs)
        switch (left, right) {
        case (.null, _), (_, .null), (.other, _), (_, .other), (.number, .number), (.text, .text):
            return .plain
        case (.number, .text):
            guard let number = try spelledConstant(rhs) else { return .perRow }
            return number.map { .folded(lhs, .constant($0)) } ?? .never
        case (.text, .number):
            guard let number = try spelledConstant(lhs) else { return .perRow }
            return number.map { .folded(.constant($0), rhs) } ?? .never
        default:
            return .perRow
        }
    }

    /// For a constant string: the number it spells, or `.some(nil)` when it spells none. nil when not a constant.
    private func spelledConstant(_ expression: QueryExpression) throws -> QueryValue?? {
        guard isConstant(expression), let value = try foldedConstant(expression),
              let text = QueryValueSemantics.text(value) else { return nil }
        switch QueryValueSemantics.spelledNumber(text) {
        case .int(let v)?: return .some(.int(v))
        case .double(let v)?: return .some(.double(v))
        case .decimal(let v)?: return .some(.decimal(v))
        case nil: return .some(nil)
        }
    }

    /// A comparison without `[c]`/`[d]` (those run memory's comparison already) some of whose operands
    /// differ in kind, compiled so that SQL gives memory's answer; nil when the usual compilation does.
    func mixedKindComparison(_ comparison: QueryComparison, in scope: SQLScope) throws -> SQLFragment? {
        switch comparison.op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            return try mixedKindTest(comparison.op, comparison.lhs, comparison.rhs, in: scope)
        case .between:
            guard let bounds = literalMembers(comparison.rhs), bounds.count == 2 else { return nil }
            let lower = try mixedKindTest(.greaterOrEqual, comparison.lhs, bounds[0], in: scope)
            let upper = try mixedKindTest(.lessOrEqual, comparison.lhs, bounds[1], in: scope)
            if lower == nil && upper == nil { return nil }
            let subject = try value(comparison.lhs, in: scope)
            let lowerTest = try lower ?? scalarTest(.greaterOrEqual, [], subject, try value(bounds[0], in: scope))
            let upperTest = try upper ?? scalarTest(.lessOrEqual, [], subject, try value(bounds[1], in: scope))
            return "(" + lowerTest + " AND " + upperTest + ")"
        case .in:
            guard let members = literalMembers(comparison.rhs) else { return nil }
            return try mixedKindMembership(comparison.lhs, members, in: scope)
        case .contains:
            guard let members = literalMembers(comparison.lhs) else { return nil }
            return try mixedKindMembership(comparison.rhs, members, in: scope)
        default:
            return nil
        }
    }

    /// The comparison `lhs op rhs` of two scalars when their kinds differ (or cannot be told), so that SQL
    /// gives memory's answer; nil when SQLite's own comparison already does.
    func mixedKindTest(_ op: QueryComparison.Operator, _ lhs: QueryExpression, _ rhs: QueryExpression,
                       in scope: SQLScope) throws -> SQLFragment? {
        switch try mixedKindPlan(lhs, rhs) {
        case .plain:
            return nil
        case .folded(let left, let right):
            return try scalarTest(op, [], try value(left, in: scope), try value(right, in: scope))
        case .never:
            return SQLFragment(dialect.boolean(op == .notEqual))
        case .perRow:
            return try function(op, [], try value(lhs, in: scope), try value(rhs, in: scope), operands: (lhs, rhs))
        }
    }

    /// `subject IN members` (or a collection CONTAINS a value) tested member by member when some member's
    /// kind differs from the subject's; nil when the usual `IN (…)` gives memory's answer.
    func mixedKindMembership(_ subject: QueryExpression, _ members: [QueryExpression], in scope: SQLScope) throws -> SQLFragment? {
        var needsMemberTests = false
        for member in members {
            if case .plain = try mixedKindPlan(subject, member) { continue }
            needsMemberTests = true
            break
        }
        guard needsMemberTests else { return nil }
        let tests = try members.map { member in
            try mixedKindTest(.equal, subject, member, in: scope)
                ?? scalarTest(.equal, [], try value(subject, in: scope), try value(member, in: scope))
        }
        return "(" + SQLFragment.joined(tests, separator: " OR ") + ")"
    }

    package func operandKind(_ expression: QueryExpression) throws -> OperandKind {
        if isConstant(expression) {
            guard let value = try? foldedConstant(expression) else { return .unknown }
            if case .array = value { return .other }
            return OperandKind(value)
        }
        switch expression {
        case .constant(let value): return OperandKind(value)
        case .evaluatedObject, .aggregate, .subquery: return .other
        case .variable: return .other  // a row a SUBQUERY or quantifier binds
        case .arithmetic, .negate: return .number
        case .keyPath(let base, let components): return try keyPathKind(base, components)
        case .cast(_, let type):
            switch type {
            case .date, .number, .decimal: return .number
            case .string, .url: return .text
            case .uuid, .data: return .other
            }
        case .ternary(_, let whenTrue, let whenFalse):
            return try operandKind(whenTrue).combined(with: try operandKind(whenFalse))
        case .index(_, .size):
            return .number
        case .index(let base, _):
            if let members = literalMembers(base) {
                return try members.reduce(OperandKind.null) { try $0.combined(with: operandKind($1)) }
            }
            return try operandKind(base)
        case .function(let function, let arguments):
            switch function {
            case .uppercase, .lowercase, .canonical: return .text
            case .noindex: return try arguments.first.map(operandKind) ?? .unknown
            case .min, .max:
                return try arguments.reduce(OperandKind.null) { try $0.combined(with: operandKind($1)) }
            default: return .number
            }
        }
    }

    /// The kind of the value a key path reaches: its last attribute's type, a count or sum, or `.other` for an
    /// object; `.unknown` where the path cannot be followed (the compiler reports that elsewhere).
    private func keyPathKind(_ base: QueryExpression, _ components: [String]) throws -> OperandKind {
        var entity: EntityDescription
        switch base {
        case .evaluatedObject: entity = rootScope.entity
        case .variable(let name):
            guard let row = boundRows[name] else { return .unknown }
            entity = row.entity
        case .subquery: return components == ["@count"] ? .number : .unknown
        case .index(let collection, _):
            guard case .keyPath(let collectionBase, let path) = collection else { return .unknown }
            return try keyPathKind(collectionBase, path + components)
        default: return .unknown
        }
        if components.isEmpty { return .other }
        for (position, key) in components.enumerated() {
            let isLast = position == components.count - 1
            switch key {
            case "@count", "@sum", "@avg": return .number
            case "@min", "@max": continue  // the kind of the key path after it
            default: break
            }
            if QueryCollectionOperator.isUnion(key) { continue }
            guard let property = entity.propertiesByName[key] else { return .unknown }
            if let attribute = property as? AttributeDescription {
                return isLast ? OperandKind(attribute.attributeType) : .unknown
            }
            guard let relationship = property as? RelationshipDescription,
                  let destination = relationship.destinationEntity else { return .unknown }
            if isLast { return .other }
            entity = destination
        }
        return .unknown
    }

    /// The kind of the attribute a plain key path from `entity` reaches (`.unknown` past anything else).
    package func attributeKind(_ entity: EntityDescription, _ path: [String]) -> OperandKind {
        attributeType(entity, path).map(OperandKind.init) ?? .unknown
    }

    /// The type of the attribute a plain key path from `entity` (through to-one relationships) reaches.
    package func attributeType(_ entity: EntityDescription, _ path: [String]) -> AttributeType? {
        var current = entity
        for (position, key) in path.enumerated() {
            // A composite's element is an attribute keyed by its path (`magnitude.richter`).
            if let element = current.compositeElementKey(in: path, at: position) {
                return element.last == path.count - 1 ? current.attributesByName[element.key]?.attributeType : nil
            }
            if let attribute = current.attributesByName[key] {
                return position == path.count - 1 ? attribute.attributeType : nil
            }
            guard let relationship = current.propertiesByName[key] as? RelationshipDescription, !relationship.isToMany,
                  let destination = relationship.destinationEntity else { return nil }
            current = destination
        }
        return nil
    }

}
