import Foundation

extension QueryPredicate {
    /// Converts a typed `#Predicate` into a format-string predicate, so it can be compiled to SQL.
    ///
    /// Key paths become key names (`$0.details.closeDate` → `details.closeDate`); `contains(where:)` and
    /// `allSatisfy` become SUBQUERYs; `filter(…).count` becomes `SUBQUERY(…).@count`; `a ?? b` becomes
    /// `TERNARY(a != nil, a, b)`, `c ? a : b` `TERNARY(c, a, b)`, `a % b` `modulus:by:(a, b)`, integer `a / b`
    /// `trunc:(a / b)`; `array[i]`, `array.first`, `array.last` the index operators. Constructs without a
    /// format-string equivalent (casts, `min()`/`max()`, regular expressions) throw a ``QueryLanguageError``.
    ///
    /// ```swift
    /// let typed = #Predicate<Person> { $0.age > 18 && $0.name.starts(with: "E") }
    /// let predicate = try QueryPredicate(typed)      // age > 18 AND name BEGINSWITH "E"
    /// ```
    ///
    /// - Throws: ``QueryLanguageError`` naming the first construct without a format-string equivalent (by its
    ///   expression type, or a constant by its type), or a key path that cannot be named.
    public init<Root>(_ predicate: Predicate<Root>) throws {
        var context = TypedPredicateContext()
        context.variables[predicate.variable.key] = .evaluatedObject
        self = try context.predicate(predicate.expression)
    }
}

/// Walks `PredicateExpressions` trees. Each supported expression type converts itself (see the extensions
/// below); anything else is reported by its type name.
struct TypedPredicateContext {
    var variables: [PredicateExpressions.VariableID: QueryExpression] = [:]
    private var variableCount = 0

    mutating func newVariable(_ key: PredicateExpressions.VariableID) -> String {
        variableCount += 1
        let name = "v\(variableCount)"
        variables[key] = .variable(name)
        return name
    }

    static func unsupported(_ node: Any) -> QueryLanguageError {
        .semantic("#Predicate: \(type(of: node)) has no query-language equivalent")
    }

    mutating func predicate(_ node: Any) throws -> QueryPredicate {
        if let convertible = node as? any TypedPredicateNode { return try convertible.queryPredicate(&self) }
        // A Bool-valued expression (a key path or constant) used as a predicate.
        let expression = try expression(node)
        if case .constant(.bool(let value)) = expression { return .constant(value) }
        return .comparison(QueryComparison(expression, .equal, .constant(.bool(true))))
    }

    mutating func expression(_ node: Any) throws -> QueryExpression {
        guard let convertible = node as? any TypedExpressionNode else { throw TypedPredicateContext.unsupported(node) }
        return try convertible.queryExpression(&self)
    }

    /// A comparison of two converted operands.
    mutating func comparison(_ lhs: Any, _ op: QueryComparison.Operator, _ rhs: Any) throws -> QueryPredicate {
        .comparison(QueryComparison(try expression(lhs), op, try expression(rhs)))
    }

    /// The key a Swift key path names: its last component (the macro emits one key path per member access).
    static func keyName(_ keyPath: AnyKeyPath) throws -> String {
        let text = keyPath.debugDescription.replacingOccurrences(of: "?", with: "").replacingOccurrences(of: "!", with: "")
        let keyPathType = type(of: keyPath)
        // `count` on a collection is the @count operator; computed properties print without a name, and
        // `count` is the only Int-valued one a predicate on a relationship can mean.
        if text.contains("<computed"), keyPathType.rootType is any Collection.Type,
           !(keyPathType.rootType is any StringProtocol.Type), keyPathType.valueType == Int.self {
            return "@count"
        }
        guard let dot = text.lastIndex(of: "."), case let name = String(text[text.index(after: dot)...]),
              let first = name.first, QueryLexer.isWordStart(first), name.allSatisfy(QueryLexer.isWordPart) else {
            throw QueryLanguageError.semantic("#Predicate: cannot name the key path \(text)")
        }
        if name == "count", keyPathType.rootType is any Collection.Type, !(keyPathType.rootType is any StringProtocol.Type) {
            return "@count"
        }
        return name
    }
}

protocol TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate
}

protocol TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression
}

// MARK: Values and key paths

extension PredicateExpressions.Value: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        guard let constant = QueryValue.convert(value) else { throw TypedPredicateContext.unsupported(value) }
        return .constant(constant)
    }
}

extension PredicateExpressions.NilLiteral: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression { .constant(.null) }
}

extension PredicateExpressions.Variable: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        guard let bound = context.variables[key] else {
            throw QueryLanguageError.semantic("#Predicate: a variable outside its closure")
        }
        return bound
    }
}

extension PredicateExpressions.KeyPath: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        // `array.first` and `array.last` are computed properties without a name: compare with the array
        // type's own key paths.
        if let array = type(of: keyPath).rootType as? any TypedOrderedCollection.Type {
            if keyPath == array.firstKeyPath { return .index(try context.expression(root), .first) }
            if keyPath == array.lastKeyPath { return .index(try context.expression(root), .last) }
        }
        return QueryParser.appending(try TypedPredicateContext.keyName(keyPath), to: try context.expression(root))
    }
}

/// Arrays, whose `first` and `last` key paths a `#Predicate` may use.
protocol TypedOrderedCollection {
    static var firstKeyPath: AnyKeyPath { get }
    static var lastKeyPath: AnyKeyPath { get }
}

extension Array: TypedOrderedCollection {
    static var firstKeyPath: AnyKeyPath { \Self.first }
    static var lastKeyPath: AnyKeyPath { \Self.last }
}

extension PredicateExpressions.CollectionIndexSubscript: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        .index(try context.expression(wrapped), .at(try context.expression(index)))
    }
}

extension PredicateExpressions.NilCoalesce: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        let value = try context.expression(lhs)
        return .ternary(.comparison(QueryComparison(value, .notEqual, .constant(.null))), value, try context.expression(rhs))
    }
}

extension PredicateExpressions.Conditional: TypedExpressionNode, TypedPredicateNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        .ternary(try context.predicate(test), try context.expression(trueBranch), try context.expression(falseBranch))
    }

    /// A Bool-valued conditional used as a condition: `(c AND a) OR (NOT c AND b)`, so its branches may be
    /// comparisons.
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        let condition = try context.predicate(test)
        return .or([.and([condition, try context.predicate(trueBranch)]),
                    .and([.not(condition), try context.predicate(falseBranch)])])
    }
}

extension PredicateExpressions.OptionalFlatMap: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        // `a?.b`: nil propagates through key paths anyway, so the transform simply continues from `a`.
        context.variables[variable.key] = try context.expression(wrapped)
        return try context.expression(transform)
    }
}

extension PredicateExpressions.ForcedUnwrap: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        try context.expression(inner)
    }
}

// MARK: Arithmetic

extension PredicateExpressions.Arithmetic: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        let operation: QueryExpression.ArithmeticOperator
        switch op {
        case .add: operation = .add
        case .subtract: operation = .subtract
        case .multiply: operation = .multiply
        @unknown default: throw TypedPredicateContext.unsupported(self)
        }
        return .arithmetic(operation, try context.expression(lhs), try context.expression(rhs))
    }
}

extension PredicateExpressions.FloatDivision: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        .arithmetic(.divide, try context.expression(lhs), try context.expression(rhs))
    }
}

extension PredicateExpressions.IntDivision: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        // Swift's integer division truncates towards zero.
        .function(.trunc, [.arithmetic(.divide, try context.expression(lhs), try context.expression(rhs))])
    }
}

extension PredicateExpressions.IntRemainder: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        .function(.modulus, [try context.expression(lhs), try context.expression(rhs)])
    }
}

extension PredicateExpressions.UnaryMinus: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        // Folded as the parser folds `-5`, so the predicate prints and parses back the same.
        QueryParser.negated(try context.expression(wrapped))
    }
}

// MARK: Comparisons and logic

extension PredicateExpressions.Equal: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        try context.comparison(lhs, .equal, rhs)
    }
}

extension PredicateExpressions.NotEqual: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        try context.comparison(lhs, .notEqual, rhs)
    }
}

extension PredicateExpressions.Comparison: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        switch op {
        case .lessThan: return try context.comparison(lhs, .less, rhs)
        case .lessThanOrEqual: return try context.comparison(lhs, .lessOrEqual, rhs)
        case .greaterThan: return try context.comparison(lhs, .greater, rhs)
        case .greaterThanOrEqual: return try context.comparison(lhs, .greaterOrEqual, rhs)
        @unknown default: throw TypedPredicateContext.unsupported(self)
        }
    }
}

extension PredicateExpressions.Conjunction: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        .and([try context.predicate(lhs), try context.predicate(rhs)])
    }
}

extension PredicateExpressions.Disjunction: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        .or([try context.predicate(lhs), try context.predicate(rhs)])
    }
}

extension PredicateExpressions.Negation: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        .not(try context.predicate(wrapped))
    }
}

// MARK: Strings and sequences

extension PredicateExpressions.SequenceStartsWith: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        try context.comparison(base, .beginsWith, prefix)
    }
}

extension PredicateExpressions.CollectionContainsCollection: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        try context.comparison(base, .contains, other)
    }
}

extension PredicateExpressions.SequenceContains: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        let collection = try context.expression(sequence)
        let member = try context.expression(element)
        // A constant list reads best (and compiles best) as `x IN {…}`.
        if case .constant(.array) = collection { return .comparison(QueryComparison(member, .in, collection)) }
        return .comparison(QueryComparison(collection, .contains, member))
    }
}

extension PredicateExpressions.SequenceContainsWhere: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        let collection = try context.expression(sequence)
        let name = context.newVariable(variable.key)
        let subquery = QueryExpression.subquery(collection: collection, variable: name, predicate: try context.predicate(test))
        return .comparison(QueryComparison(.keyPath(base: subquery, components: ["@count"]), .greater, .constant(.int(0))))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TypedPredicateNode {
    func queryPredicate(_ context: inout TypedPredicateContext) throws -> QueryPredicate {
        let collection = try context.expression(sequence)
        let name = context.newVariable(variable.key)
        let subquery = QueryExpression.subquery(collection: collection, variable: name,
                                                predicate: .not(try context.predicate(test)))
        return .comparison(QueryComparison(.keyPath(base: subquery, components: ["@count"]), .equal, .constant(.int(0))))
    }
}

extension PredicateExpressions.Filter: TypedExpressionNode {
    func queryExpression(_ context: inout TypedPredicateContext) throws -> QueryExpression {
        let collection = try context.expression(sequence)
        let name = context.newVariable(variable.key)
        return .subquery(collection: collection, variable: name, predicate: try context.predicate(filter))
    }
}
