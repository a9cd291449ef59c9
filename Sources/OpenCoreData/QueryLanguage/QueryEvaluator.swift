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

    mutating func evaluate(_ predicate: QueryPredicate, object: Any?) throws -> Bool {
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
        depth += 1
        defer { depth -= 1 }
        if depth > 2_000 { throw QueryLanguageError.semantic("expression nested too deeply to evaluate") }
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
            if function == .now { return Date() }
            let values = try arguments.map { try evaluate($0, object: object) }
            let input: [Any?] = values.count == 1 ? (QueryEvaluator.collection(values[0]) ?? values) : values
            switch function {
            case .abs:
                guard values.count == 1 else { throw QueryLanguageError.semantic("abs: takes one argument") }
                guard let number = QueryValue.convert(values[0]).flatMap(QueryValueSemantics.number) else { return nil }
                return QueryArithmetic.absolute(number)
            case .count: return input.count
            default: return try QueryArithmetic.aggregate(function, input)
            }
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
