import Foundation

/// Replaces `$variables` with constants, leaving variables that a SUBQUERY binds untouched.
///
/// Trees built in code deeper than ``QueryLanguageLimits/maximumNestingDepth`` are refused, as the parser
/// refuses them.
struct QuerySubstitution {
    let values: [String: QueryValue]
    /// Variables whose key paths (`$FETCH_SOURCE.city`) are read here, each by its closure, into constants.
    var variableKeyPaths: [String: ([String]) throws -> QueryValue] = [:]
    /// Whether a free variable with no value is an error (``UnknownVariable``) rather than left in place: a
    /// fetch request template must come out with every variable given (Core Data refuses it too).
    var refusesUnknownVariables = false
    /// How deep the walk is: a level is added by each call that recurses.
    private var depth = 0

    init(variables: [String: Any]) throws {
        var converted: [String: QueryValue] = [:]
        for (name, value) in variables {
            guard let constant = QueryValue.convert(value) else {
                throw QueryLanguageError.semantic("cannot use a value of type \(type(of: value)) for $\(name)")
            }
            converted[name] = constant
        }
        values = converted
    }

    /// A free `$variable` with no value, when ``refusesUnknownVariables`` is set.
    struct UnknownVariable: Error {
        let name: String
    }

    /// The substitution one level down, or the nesting error beyond the limit.
    private func nested() throws -> QuerySubstitution {
        guard depth < QueryLanguageLimits.maximumNestingDepth else {
            throw QueryLanguageError.nestingTooDeep(while: "substituting variables")
        }
        var next = self
        next.depth += 1
        return next
    }

    func substitute(_ predicate: QueryPredicate, bound: Set<String>) throws -> QueryPredicate {
        let substitution = try nested()
        switch predicate {
        case .constant: return predicate
        case .and(let parts): return .and(try parts.map { try substitution.substitute($0, bound: bound) })
        case .or(let parts): return .or(try parts.map { try substitution.substitute($0, bound: bound) })
        case .not(let inner): return .not(try substitution.substitute(inner, bound: bound))
        case .comparison(var comparison):
            comparison.lhs = try substitution.substitute(comparison.lhs, bound: bound)
            comparison.rhs = try substitution.substitute(comparison.rhs, bound: bound)
            return .comparison(comparison)
        }
    }

    func substitute(_ expression: QueryExpression, bound: Set<String>) throws -> QueryExpression {
        let substitution = try nested()
        switch expression {
        case .constant, .evaluatedObject: return expression
        case .variable(let name):
            if bound.contains(name) { return expression }
            if let value = values[name] { return .constant(value) }
            if refusesUnknownVariables { throw UnknownVariable(name: name) }
            return expression
        case .keyPath(let base, let components):
            if case .variable(let name) = base, !bound.contains(name), let read = variableKeyPaths[name] {
                return .constant(try read(components))
            }
            return .keyPath(base: try substitution.substitute(base, bound: bound), components: components)
        case .aggregate(let members):
            let replaced = try members.map { try substitution.substitute($0, bound: bound) }
            var constants: [QueryValue] = []
            for member in replaced {
                guard case .constant(let value) = member else { return .aggregate(replaced) }
                constants.append(value)
            }
            return .constant(.array(constants))
        case .arithmetic(let op, let lhs, let rhs):
            return .arithmetic(op, try substitution.substitute(lhs, bound: bound), try substitution.substitute(rhs, bound: bound))
        case .negate(let operand): return .negate(try substitution.substitute(operand, bound: bound))
        case .function(let function, let arguments):
            return .function(function, try arguments.map { try substitution.substitute($0, bound: bound) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection: try substitution.substitute(collection, bound: bound), variable: variable,
                             predicate: try substitution.substitute(predicate, bound: bound.union([variable])))
        case .index(let base, let index):
            let replacedIndex: QueryIndex
            if case .at(let position) = index { replacedIndex = .at(try substitution.substitute(position, bound: bound)) } else { replacedIndex = index }
            return .index(try substitution.substitute(base, bound: bound), replacedIndex)
        case .ternary(let predicate, let whenTrue, let whenFalse):
            return .ternary(try substitution.substitute(predicate, bound: bound), try substitution.substitute(whenTrue, bound: bound),
                            try substitution.substitute(whenFalse, bound: bound))
        case .cast(let value, let type):
            let replaced = try substitution.substitute(value, bound: bound)
            if case .constant(let constant) = replaced { return .constant(try QueryCast.cast(constant, to: type)) }
            return .cast(replaced, type)
        }
    }
}
