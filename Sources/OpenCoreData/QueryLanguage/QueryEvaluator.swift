import Foundation

/// Evaluates predicates and expressions in memory, on managed objects, `[String: Any]` dictionaries and
/// plain values, with Core Data's semantics (see ``QueryValueSemantics``).
///
/// Collections reached through to-many keys are kept as `[Any?]` with their nil members, so
/// `ANY items.name == nil` sees an item without a name, as the SQL does.
struct QueryEvaluator {
    private var variables: [String: Any?]
    private var depth = 0

    init(variables: [String: Any]) throws {
        self.variables = variables.mapValues { Optional($0) }
    }

    // MARK: Predicates

    /// Counts a level of the tree before recursing into it (trees built in code can be deeper than the
    /// parser allows).
    private mutating func enter() throws {
        depth += 1
        if depth > QueryLanguageLimits.maximumNestingDepth {
            throw QueryLanguageError.nestingTooDeep(while: "evaluating")
        }
    }

    mutating func evaluate(_ predicate: QueryPredicate, object: Any?) throws -> Bool {
        try enter()
        defer { depth -= 1 }
        switch predicate {
        case .constant(let value): return value
        case .and(let parts):
            for part in parts where try !evaluate(part, object: object) { return false }
            return true
        case .or(let parts):
            for part in parts where try evaluate(part, object: object) { return true }
            return false
        case .not(let inner): return try !evaluate(inner, object: object)
        case .comparison(let comparison): return try evaluate(comparison, object: object)
        }
    }

    private mutating func evaluate(_ comparison: QueryComparison, object: Any?) throws -> Bool {
        let lhs = try evaluate(comparison.lhs, object: object)
        let rhs = try evaluate(comparison.rhs, object: object)
        let rhsValue = try QueryEvaluator.value(rhs)
        func test(_ element: Any?) throws -> Bool {
            try QueryValueSemantics.compare(comparison.op, QueryEvaluator.value(element), rhsValue, comparison.options)
        }
        switch comparison.modifier {
        case .any: return try QueryEvaluator.members(lhs).contains { try test($0) }
        case .all: return try QueryEvaluator.members(lhs).allSatisfy { try test($0) }
        case .none: return try !QueryEvaluator.members(lhs).contains { try test($0) }
        case .direct:
            // A collection on the left: CONTAINS asks for a member; other operators mean "some member"
            // (Core Data's implicit ANY for key paths through to-many relationships).
            if let members = QueryEvaluator.collection(lhs) {
                if comparison.op == .contains { return members.contains { element in
                    (try? QueryEvaluator.value(element)).map { QueryValueSemantics.equal($0, rhsValue, comparison.options) } ?? false
                } }
                return try members.contains { try test($0) }
            }
            return try test(lhs)
        }
    }

    // MARK: Values

    /// A collection (array, set…) as its members; nil for scalars, strings, data and objects.
    static func collection(_ value: Any?) -> [Any?]? {
        guard let value else { return nil }
        switch value {
        case is String, is Substring, is Data, is KeyValueCoding: return nil
        case let members as [Any?]: return members
        case let members as any Collection: return members.map { element -> Any? in
            if let optional = element as? any OptionalProtocol { return optional.wrappedAny }
            return element
        }
        default: return nil
        }
    }

    /// The members a quantifier ranges over: a nil value has none, a scalar is its own single member.
    static func members(_ value: Any?) -> [Any?] {
        guard let value else { return [] }
        return collection(value) ?? [value]
    }

    /// The constant form of a value; objects that are not managed objects (dictionaries) cannot be compared.
    static func value(_ value: Any?) throws -> QueryValue {
        if let members = collection(value) {
            return .array(try members.map { try QueryEvaluator.value($0) })
        }
        if let converted = QueryValue.convert(value) { return converted }
        // A dictionary or other object: it is not nil and equals no constant. A random per-process blob stands
        // for it, so `!= nil` holds, `== x` does not, and no string operator can match it.
        return .data(QueryEvaluator.objectMarker)
    }

    private static let objectMarker = Data((0..<32).map { _ in UInt8.random(in: 0...255) })

    // MARK: Expressions

    mutating func evaluate(_ expression: QueryExpression, object: Any?) throws -> Any? {
        try enter()
        defer { depth -= 1 }
        switch expression {
        case .constant(let value): return value.swiftValue
        case .evaluatedObject: return object
        case .variable(let name):
            guard let value = variables[name] else {
                throw QueryLanguageError.semantic("no value for the variable $\(name)")
            }
            return value
        case .keyPath(let base, let components):
            let start = try evaluate(base, object: object)
            return try QueryEvaluator.walk(start, components[...])
        case .aggregate(let members):
            return try members.map { try evaluate($0, object: object) }
        case .arithmetic(let op, let lhs, let rhs):
            return QueryArithmetic.apply(op, try evaluate(lhs, object: object), try evaluate(rhs, object: object))
        case .negate(let operand):
            return QueryArithmetic.apply(.subtract, 0, try evaluate(operand, object: object))
        case .function(let function, let arguments):
            let values = try arguments.map { try evaluate($0, object: object) }
            return try QueryFunctions.apply(function, values)
        case .index(let base, let index):
            let collection = try evaluate(base, object: object)
            switch index {
            case .first: return try QueryEvaluator.element(of: collection, at: .first)
            case .last: return try QueryEvaluator.element(of: collection, at: .last)
            case .size: return try QueryEvaluator.element(of: collection, at: .size)
            case .at(let position):
                return try QueryEvaluator.element(of: collection, at: .value(try evaluate(position, object: object)))
            }
        case .ternary(let predicate, let whenTrue, let whenFalse):
            return try evaluate(try evaluate(predicate, object: object) ? whenTrue : whenFalse, object: object)
        case .subquery(let collection, let variable, let predicate):
            let members = QueryEvaluator.members(try evaluate(collection, object: object))
            let saved = variables[variable]
            defer { variables[variable] = saved }
            var matching: [Any?] = []
            for member in members {
                variables[variable] = .some(member)
                if try evaluate(predicate, object: object) { matching.append(member) }
            }
            return matching
        case .cast(let value, let type):
            let evaluated = try evaluate(value, object: object)
            return try QueryCast.cast(QueryEvaluator.value(evaluated), to: type).swiftValue
        }
    }

    /// Follows key path components, flattening through to-many steps and applying `@` operators.
    static func walk(_ start: Any?, _ components: ArraySlice<String>) throws -> Any? {
        var current = start
        var remaining = components
        while let key = remaining.first {
            remaining = remaining.dropFirst()
            if key.hasPrefix("@") {
                let members = (collection(current) ?? (current.map { [$0] } ?? [])).compactMap { $0 }
                if QueryCollectionOperator.isUnion(key) {
                    // The right key path runs to the next operator; what follows applies to the union.
                    let right = remaining.prefix { !$0.hasPrefix("@") }
                    guard !right.isEmpty else { throw QueryLanguageError.semantic("\(key) needs a key after it") }
                    remaining = remaining.dropFirst(right.count)
                    current = try union(members, right, distinct: QueryCollectionOperator.isDistinct(key))
                    continue
                }
                switch key {
                case "@count": current = members.count
                case "@sum", "@avg", "@min", "@max":
                    let values = try members.map { try walk($0, remaining) }.compactMap { $0 }
                    let function: QueryFunction = key == "@sum" ? .sum : key == "@avg" ? .average : key == "@min" ? .min : .max
                    return try QueryArithmetic.aggregate(function, values)
                default: throw QueryLanguageError.semantic("unknown collection operator \(key)")
                }
                continue
            }
            current = try step(current, key: key)
        }
        return current
    }

    /// The non-nil values `right` reaches from each member, flattened through collections; without
    /// duplicates (the first of equal values kept) when `distinct`.
    static func union(_ members: [Any?], _ right: ArraySlice<String>, distinct: Bool) throws -> [Any?] {
        var values: [Any?] = []
        var seen: [QueryValue] = []
        var seenObjects: Set<ObjectIdentifier> = []
        func add(_ value: Any?) throws {
            guard let value else { return }
            if distinct {
                if let constant = QueryValue.convert(value) {
                    if seen.contains(where: { QueryValueSemantics.equal($0, constant) }) { return }
                    seen.append(constant)
                } else if type(of: value) is AnyClass {
                    // Objects that are not managed objects are the same only when they are the same instance.
                    guard seenObjects.insert(ObjectIdentifier(value as AnyObject)).inserted else { return }
                }
            }
            values.append(value)
        }
        for member in members {
            let reached = try walk(member, right)
            if let nested = collection(reached) {
                for element in nested { try add(element) }
            } else {
                try add(reached)
            }
        }
        return values
    }

    enum Position {
        case first, last, size
        case value(Any?)
    }

    /// `collection[FIRST]`, `[LAST]`, `[SIZE]`, `[n]`: nil gives nil (its size is 0), a position past the end
    /// or a negative or fractional number nil, a string a dictionary's (or object's) value for that key.
    /// Sets have no first, last or n-th member.
    static func element(of value: Any?, at position: Position) throws -> Any? {
        guard let value else {
            if case .size = position { return 0 }
            return nil
        }
        if case .value(let key) = position, let key = key.flatMap({ QueryValue.convert($0) }).flatMap(QueryValueSemantics.text) {
            guard let object = value as? KeyValueCoding else { return nil }
            let next = try object.value(forKey: key)
            if let optional = next as? any OptionalProtocol { return optional.wrappedAny }
            return next
        }
        guard let members = collection(value) else {
            throw QueryLanguageError.semantic("an index ([FIRST], [LAST], [SIZE], [n]) needs a collection, not a value of type \(type(of: value))")
        }
        if case .size = position { return members.count }
        guard value is [Any?] || value is any RandomAccessCollection else {
            throw QueryLanguageError.semantic("[FIRST], [LAST] and [n] need an ordered collection; a set (an unordered to-many relationship) has no order")
        }
        switch position {
        case .first: return members.first ?? nil
        case .last: return members.last ?? nil
        case .size: return members.count
        case .value(let index):
            guard let number = index.flatMap({ QueryValue.convert($0) }).flatMap(QueryValueSemantics.number),
                  let offset = QueryEvaluator.integer(number), offset >= 0, offset < members.count else { return nil }
            return members[offset]
        }
    }

    /// A number as an array position, when it is a whole number that fits.
    static func integer(_ number: QueryValueSemantics.Number) -> Int? {
        switch number {
        case .int(let v): return Int(exactly: v)
        case .double(let v): return Int(exactly: v)
        case .decimal(let v): return Int(exactly: NSDecimalNumber(decimal: v).doubleValue)
        }
    }

    private static func step(_ value: Any?, key: String) throws -> Any? {
        guard let value else { return nil }
        if let object = value as? KeyValueCoding {
            let next = try object.value(forKey: key)
            if let optional = next as? any OptionalProtocol { return optional.wrappedAny }
            return next
        }
        if let members = collection(value) {
            var results: [Any?] = []
            for member in members {
                let next = try step(member, key: key)
                if let nested = collection(next) { results.append(contentsOf: nested) } else { results.append(next) }
            }
            return results
        }
        return nil
    }
}
