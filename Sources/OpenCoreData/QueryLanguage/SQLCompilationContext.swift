import Foundation

/// The state of one compilation: alias numbering and the rows `$variables` of SUBQUERYs range over.
package final class CompilationContext {
    package let compiler: PredicateSQLCompiler
    private var aliasCount = 0
    package private(set) var rootScope: SQLScope
    /// SUBQUERY variables and quantified members: the alias and entity of the row they stand for.
    package private(set) var boundRows: [String: (alias: String, entity: EntityDescription, scope: SQLScope)] = [:]
    private var depth = 0
    /// The comparison being compiled, which a refusal names.
    package var currentComparison: QueryComparison?

    init(compiler: PredicateSQLCompiler) {
        self.compiler = compiler
        let mapping = compiler.model.schema.mapping(for: compiler.entity)
        rootScope = SQLScope(alias: "t0", entity: compiler.entity, table: mapping.tableName)
    }

    private var schema: StoreSchema { compiler.model.schema }

    package var dialect: any SQLDialect { compiler.dialect }

    /// The refusal of `construct`, naming the comparison being compiled (or the whole query's entity).
    package func refusal(_ construct: QueryDialectRefusal.Construct, subject: String? = nil, detail: String? = nil) -> QueryDialectRefusal {
        let described = subject ?? currentComparison.map { QueryFormatter.format($0) } ?? "a query on \(compiler.entity.name)"
        return QueryDialectRefusal(construct, in: dialect, expression: described, detail: detail)
    }

    /// A constant as a bound parameter, once the dialect has checked the database can hold it.
    package func parameter(_ constant: QueryValue) throws -> SQLFragment {
        let bound = try constant.boundValue
        if case .string(let text) = bound.storage { try dialect.checkBoundText(text, in: self) }
        return SQLFragment.parameter(bound)
    }

    /// One ORDER BY term, as the dialect sorts like memory.
    func ordering(_ value: SQLFragment, by descriptor: QuerySortDescriptor) throws -> SQLFragment {
        try dialect.ordering(value, by: descriptor, in: self)
    }

    func newAlias() -> String {
        aliasCount += 1
        return "t\(aliasCount)"
    }

    private func unsupported(_ what: String) -> QueryLanguageError {
        .semantic("cannot compile to SQL: \(what)")
    }

    /// Counts a level before recursing: predicates, values, and each comparison, which a to-many step of a
    /// key path (`friends.friends.name`) compiles into a subquery holding the rest of the path.
    private func enter() throws {
        depth += 1
        if depth > QueryLanguageLimits.maximumNestingDepth {
            throw QueryLanguageError.nestingTooDeep(while: "compiling to SQL")
        }
    }

    // MARK: Predicates

    func compile(_ predicate: QueryPredicate, in scope: SQLScope) throws -> SQLFragment {
        try enter()
        defer { depth -= 1 }
        switch predicate {
        case .constant(let value): return SQLFragment(dialect.boolean(value))
        case .and(let parts):
            if parts.isEmpty { return SQLFragment(dialect.boolean(true)) }
            return "(" + SQLFragment.joined(try parts.map { try compile($0, in: scope) }, separator: " AND ") + ")"
        case .or(let parts):
            if parts.isEmpty { return SQLFragment(dialect.boolean(false)) }
            return "(" + SQLFragment.joined(try parts.map { try compile($0, in: scope) }, separator: " OR ") + ")"
        case .not(let inner):
            return negate(try compile(inner, in: scope))
        case .comparison(let comparison):
            return try compile(comparison, in: scope)
        }
    }

    /// NOT that treats NULL (an unknown comparison) as false first, as in-memory evaluation does.
    private func negate(_ condition: SQLFragment) -> SQLFragment {
        "NOT COALESCE(" + condition + ", \(dialect.boolean(false)))"
    }

    /// Where a key path leads.
    private enum PathTarget {
        /// A column value (attribute, to-one foreign key, or Z_PK for an object itself).
        case value(SQLFragment)
        /// A to-many relationship of the row `ownerAlias`, followed by the rest of the key path.
        case toMany(RelationshipDescription, StoreSchema.PropertyStorage, ownerAlias: String, rest: [String])
    }

    private func resolve(_ expression: QueryExpression, in scope: SQLScope) throws -> PathTarget? {
        guard case .keyPath(let base, let components) = expression else { return nil }
        // SELF is always the fetched row, even inside a subquery; a member variable is its own row. Joins a
        // key path needs go to the FROM clause of the row it starts from.
        switch base {
        case .evaluatedObject:
            return try walk(from: rootScope.alias, entity: rootScope.entity, components: components, scope: rootScope)
        case .variable(let name):
            guard let row = boundRows[name] else { return nil }
            return try walk(from: row.alias, entity: row.entity, components: components, scope: row.scope)
        default:
            return nil
        }
    }

    private func walk(from startAlias: String, entity startEntity: EntityDescription, components: [String],
                      scope: SQLScope) throws -> PathTarget {
        var alias = startAlias, entity = startEntity
        if components.isEmpty { return .value(SQLFragment("\(alias).Z_PK")) }
        var position = 0
        while position < components.count {
            defer { position += 1 }
            var key = components[position]
            // A composite's element is an attribute of its own, keyed by its path (`magnitude.richter`).
            if let element = entity.compositeElementKey(in: components, at: position) {
                key = element.key
                position = element.last
            }
            let isLast = position == components.count - 1
            guard let property = entity.propertiesByName[key], let slot = entity.slotByName[key] else {
                throw QueryLanguageError.semantic("entity '\(entity.name)' has no property '\(key)' (key path '\(components.joined(separator: "."))')")
            }
            let storage = schema.mapping(for: entity).storage[slot]
            switch storage {
            case .attribute(let column, _):
                guard isLast else {
                    throw QueryLanguageError.semantic("'\(entity.name).\(key)' is an attribute; the key path '\(components.joined(separator: "."))' cannot continue past it")
                }
                if let attribute = property as? AttributeDescription, ExternalBinaryStorage.usesExternalStorage(attribute),
                   let comparison = currentComparison, !Self.isNilTest(comparison) {
                    // The column holds the stored form (a marker, then bytes or a file name), not the value.
                    throw refusal(.externalBinaryStorage, subject: "'\(entity.name).\(key)' in a comparison")
                }
                return .value(SQLFragment("\(alias).\(column)"))
            case .toOne(let column, _, _, _):
                if isLast { return .value(SQLFragment("\(alias).\(column)")) }
                guard let relationship = property as? RelationshipDescription,
                      let destination = relationship.destinationEntity else {
                    throw unsupported("relationship '\(entity.name).\(key)' has no destination")
                }
                let table = schema.mapping(for: destination).tableName
                alias = scope.join(from: alias, column: column, to: table, newAlias: newAlias)
                entity = destination
            case .toManyByForeignKey, .toManyByJoinTable:
                guard let relationship = property as? RelationshipDescription else {
                    throw unsupported("'\(entity.name).\(key)' is not a relationship")
                }
                return .toMany(relationship, storage, ownerAlias: alias, rest: Array(components[(position + 1)...]))
            case .transient:
                throw QueryLanguageError.semantic("'\(entity.name).\(key)' is transient and not stored; it cannot be fetched on")
            }
        }
        return .value(SQLFragment("\(alias).Z_PK"))
    }

    /// Whether `comparison` is `x == nil` or `x != nil`, which the stored form of any value answers as the
    /// value itself does (nil is NULL either way).
    private static func isNilTest(_ comparison: QueryComparison) -> Bool {
        guard comparison.op == .equal || comparison.op == .notEqual, comparison.options.isEmpty else { return false }
        if case .constant(.null) = comparison.rhs { return true }
        if case .constant(.null) = comparison.lhs { return true }
        return false
    }

    /// A subquery scope over the members of a to-many relationship, with its correlation condition.
    private func memberScope(_ relationship: RelationshipDescription, _ storage: StoreSchema.PropertyStorage,
                             ownerAlias: String) throws -> (scope: SQLScope, correlation: String) {
        let rows = try memberRows(relationship, storage, ownerAlias: ownerAlias)
        return (rows.scope, rows.correlation)
    }

    /// The members of a to-many relationship: their scope, the correlation with the owner row, and the order
    /// the store reads them in (the order column first for ordered relationships, then the primary key, as
    /// `relatedIDs` does).
    private func memberRows(_ relationship: RelationshipDescription, _ storage: StoreSchema.PropertyStorage,
                            ownerAlias: String) throws -> (scope: SQLScope, correlation: String, order: [String]) {
        guard let destination = relationship.destinationEntity else {
            throw unsupported("relationship '\(relationship.name)' has no destination")
        }
        let table = schema.mapping(for: destination).tableName
        let alias = newAlias()
        switch storage {
        case .toManyByForeignKey(_, let column, let orderColumn):
            return (SQLScope(alias: alias, entity: destination, table: table), "\(alias).\(column) = \(ownerAlias).Z_PK",
                    (orderColumn.map { ["\(alias).\($0)"] } ?? []) + ["\(alias).Z_PK"])
        case .toManyByJoinTable(let joinTable):
            let joinAlias = newAlias()
            // The join table comes first; the member table is joined on the destination key, in the WHERE
            // clause.
            let join = "\(joinTable.name) \(joinAlias) " + dialect.joinWithoutCondition + table
            let scope = SQLScope(alias: alias, entity: destination, table: join)
            return (scope, "\(alias).Z_PK = \(joinAlias).\(joinTable.destinationColumn) AND \(joinAlias).\(joinTable.sourceColumn) = \(ownerAlias).Z_PK",
                    (joinTable.orderColumn.map { ["\(joinAlias).\($0)"] } ?? []) + ["\(alias).Z_PK"])
        default:
            throw unsupported("'\(relationship.name)' is not a to-many relationship")
        }
    }

    /// `EXISTS (SELECT 1 FROM members WHERE correlation AND condition)`, with `$name` bound to each member.
    private func exists(_ relationship: RelationshipDescription, _ storage: StoreSchema.PropertyStorage,
                        ownerAlias: String, condition: (String, SQLScope) throws -> SQLFragment) throws -> SQLFragment {
        let (scope, correlation) = try memberScope(relationship, storage, ownerAlias: ownerAlias)
        let name = "\u{0}member\(scope.alias)"
        boundRows[name] = (scope.alias, scope.entity, scope)
        defer { boundRows[name] = nil }
        let inner = try condition(name, scope)
        // Joins the condition added belong to the member scope, so the FROM clause is read afterwards.
        return "EXISTS (SELECT 1 FROM \(scope.fromClause) WHERE \(correlation) AND " + inner + ")"
    }

    // MARK: Comparisons

    private func compile(_ comparison: QueryComparison, in scope: SQLScope) throws -> SQLFragment {
        try enter()
        let enclosing = currentComparison
        currentComparison = comparison
        defer {
            depth -= 1
            currentComparison = enclosing
        }
        // A to-many key path on the left: quantify over its members.
        if let target = try resolve(comparison.lhs, in: scope), case .toMany(let relationship, let storage, let owner, let path) = target,
           let (rest, dropsNil) = try quantifiedPath(path, comparison.lhs) {
            var memberComparison = comparison
            var modifier = comparison.modifier
            if modifier == .direct {
                // CONTAINS on a collection asks for an equal member; other operators mean "some member".
                if comparison.op == .contains { memberComparison.op = .equal }
                modifier = .any
            }
            func condition(_ name: String, _ memberScope: SQLScope, negated: Bool) throws -> SQLFragment {
                var inner = memberComparison
                inner.lhs = rest.isEmpty ? .variable(name) : .keyPath(base: .variable(name), components: rest)
                // Each member (nil included) is tested directly, unless the path goes through another to-many
                // relationship, whose members the same quantifier then ranges over (memory flattens them).
                if case .toMany? = try resolve(inner.lhs, in: memberScope) {
                    if dropsNil {
                        throw unsupported("'\(QueryFormatter.format(comparison.lhs))': a union operator over a nested to-many relationship")
                    }
                    inner.modifier = modifier == .all ? .all : .any
                } else {
                    inner.modifier = .direct
                }
                let test = try compile(inner, in: memberScope)
                let result = negated ? negate(test) : test
                // A union leaves nil values out: they neither match nor count against ALL.
                guard dropsNil else { return result }
                return "(" + (try value(inner.lhs, in: memberScope)) + " IS NOT NULL AND " + result + ")"
            }
            switch modifier {
            case .any:
                return try exists(relationship, storage, ownerAlias: owner) { try condition($0, $1, negated: false) }
            case .none:
                return "NOT " + (try exists(relationship, storage, ownerAlias: owner) { try condition($0, $1, negated: false) })
            case .all:
                return "NOT " + (try exists(relationship, storage, ownerAlias: owner) { try condition($0, $1, negated: true) })
            case .direct:
                break
            }
        }
        // A to-many key path on the right of IN: some member equals the left side.
        if comparison.op == .in, let target = try resolve(comparison.rhs, in: scope),
           case .toMany(let relationship, let storage, let owner, let path) = target,
           let (rest, dropsNil) = try quantifiedPath(path, comparison.rhs) {
            let needle = comparison.lhs
            let found = try exists(relationship, storage, ownerAlias: owner) { name, memberScope in
                let member: QueryExpression = rest.isEmpty ? .variable(name) : .keyPath(base: .variable(name), components: rest)
                if dropsNil, case .toMany? = try resolve(member, in: memberScope) {
                    throw unsupported("'\(QueryFormatter.format(comparison.rhs))': a union operator over a nested to-many relationship")
                }
                let test = try compile(QueryComparison(member, .equal, needle, options: comparison.options), in: memberScope)
                guard dropsNil else { return test }
                return "(" + (try value(member, in: memberScope)) + " IS NOT NULL AND " + test + ")"
            }
            return try quantifyScalar(comparison, found, scope)
        }
        return try quantifyScalar(comparison, try scalarComparison(comparison, in: scope), scope)
    }

    /// The part of a key path after a to-many step that members are compared on, when the path ranges over
    /// members: a plain path (`books.title`), or a union operator with its right key path
    /// (`books.@distinctUnionOfObjects.title`: nil values left out, duplicates do not matter to a comparison).
    /// nil when the path ends in an aggregate (`books.@count`).
    private func quantifiedPath(_ rest: [String], _ expression: QueryExpression) throws -> (rest: [String], dropsNil: Bool)? {
        guard let first = rest.first, first.hasPrefix("@") else { return (rest, false) }
        guard QueryCollectionOperator.isUnion(first) else { return nil }
        let right = Array(rest.dropFirst())
        if right.isEmpty { throw unsupported("'\(QueryFormatter.format(expression))': \(first) needs a key after it") }
        // `books.@distinctUnionOfObjects.title.@count` is a number, not members.
        if right.contains(where: { $0.hasPrefix("@") }) { return nil }
        return (right, true)
    }

    /// ANY/ALL/NONE on a single value: a nil value has no members, any other value is its own member.
    private func quantifyScalar(_ comparison: QueryComparison, _ test: SQLFragment, _ scope: SQLScope) throws -> SQLFragment {
        switch comparison.modifier {
        case .direct: return test
        case .any:
            return "(" + (try value(comparison.lhs, in: scope)) + " IS NOT NULL AND " + test + ")"
        case .all:
            return "(" + (try value(comparison.lhs, in: scope)) + " IS NULL OR " + test + ")"
        case .none:
            return "(" + (try value(comparison.lhs, in: scope)) + " IS NULL OR " + negate(test) + ")"
        }
    }

    package static let foldingOptions: QueryComparison.Options = [.caseInsensitive, .diacriticInsensitive]

    /// A comparison SQL's operators do not answer as memory does, as the dialect spells it, given the
    /// `operands` it compares.
    func function(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                  _ lhs: SQLFragment, _ rhs: SQLFragment,
                  operands: (QueryExpression, QueryExpression)? = nil) throws -> SQLFragment {
        try dialect.comparison(op, options, lhs, rhs, operands: operands, in: self)
    }

    private func scalarComparison(_ comparison: QueryComparison, in scope: SQLScope) throws -> SQLFragment {
        let options = comparison.options.intersection(CompilationContext.foldingOptions)
        if [.less, .lessOrEqual, .greater, .greaterOrEqual, .between].contains(comparison.op),
           isObject(comparison.lhs) || isObject(comparison.rhs) {
            // In SQL an object is its primary key, which orders; in memory objects do not: refused in both.
            throw QueryValueSemantics.objectsHaveNoOrder(comparison.op)
        }
        if options.isEmpty, let test = try mixedKindComparison(comparison, in: scope) { return test }
        switch comparison.op {
        case .in:
            if let members = try collectionMembers(comparison.rhs, in: scope) {
                return try membership(try value(comparison.lhs, in: scope), members, options)
            }
            return try function(.in, options, try value(comparison.lhs, in: scope), try value(comparison.rhs, in: scope),
                                operands: (comparison.lhs, comparison.rhs))
        case .contains:
            if let members = try collectionMembers(comparison.lhs, in: scope) {
                return try membership(try value(comparison.rhs, in: scope), members, options)
            }
            return try function(.contains, options, try value(comparison.lhs, in: scope), try value(comparison.rhs, in: scope),
                                operands: (comparison.lhs, comparison.rhs))
        case .between:
            guard let bounds = try collectionMembers(comparison.rhs, in: scope), bounds.count == 2 else {
                throw unsupported("BETWEEN needs two bounds {lower, upper}")
            }
            let subject = try value(comparison.lhs, in: scope)
            let lower = try scalarTest(.greaterOrEqual, options, subject, bounds[0])
            let upper = try scalarTest(.lessOrEqual, options, subject, bounds[1])
            return "(" + lower + " AND " + upper + ")"
        default:
            if try collectionMembers(comparison.rhs, in: scope) != nil {
                throw unsupported("a collection on the right of \(comparison.op.rawValue)")
            }
            return try scalarTest(comparison.op, options, try value(comparison.lhs, in: scope),
                                  try value(comparison.rhs, in: scope), operands: (comparison.lhs, comparison.rhs))
        }
    }

    package func scalarTest(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                    _ lhs: SQLFragment, _ rhs: SQLFragment,
                    operands: (QueryExpression, QueryExpression)? = nil) throws -> SQLFragment {
        if !options.isEmpty { return try function(op, options, lhs, rhs, operands: operands) }
        if let (left, right) = operands { try dialect.requireComparableKinds(left, right, in: self) }
        switch op {
        case .equal:
            if rhs.sql == "NULL" { return lhs + " IS NULL" }
            return dialect.equality(lhs, rhs)
        case .notEqual:
            return rhs.sql == "NULL" ? lhs + " IS NOT NULL" : "(" + lhs + dialect.nullSafeEquality(negated: true) + rhs + ")"
        case .less: return "(" + lhs + " < " + rhs + ")"
        case .lessOrEqual: return "(" + lhs + " <= " + rhs + ")"
        case .greater: return "(" + lhs + " > " + rhs + ")"
        case .greaterOrEqual: return "(" + lhs + " >= " + rhs + ")"
        default: return try function(op, options, lhs, rhs, operands: operands)
        }
    }

    /// Whether an expression stands for an object rather than a value: SELF, a row a SUBQUERY or quantifier
    /// binds, a key path ending in a to-one relationship, an object constant.
    package func isObject(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .evaluatedObject: return true
        case .constant(.objectID): return true
        case .variable(let name):
            if boundRows[name] != nil { return true }
            if case .objectID? = compiler.substitutionVariables[name] { return true }
            return false
        case .keyPath(let base, let components):
            let start: EntityDescription
            switch base {
            case .evaluatedObject: start = rootScope.entity
            case .variable(let name):
                guard let row = boundRows[name] else { return false }
                start = row.entity
            default: return false
            }
            if components.isEmpty { return true }
            var entity = start
            for (position, key) in components.enumerated() {
                guard let relationship = entity.propertiesByName[key] as? RelationshipDescription,
                      !relationship.isToMany, let destination = relationship.destinationEntity else { return false }
                if position == components.count - 1 { return true }
                entity = destination
            }
            return false
        default: return false
        }
    }

    /// `x IN (…)` with nil members matching a nil `x`, as in memory.
    private func membership(_ subject: SQLFragment, _ members: [SQLFragment],
                            _ options: QueryComparison.Options) throws -> SQLFragment {
        if members.isEmpty { return SQLFragment(dialect.boolean(false)) }
        if !options.isEmpty {
            return "(" + SQLFragment.joined(try members.map { try function(.equal, options, subject, $0) }, separator: " OR ") + ")"
        }
        if members.contains(where: { $0.sql != "?" && $0.sql != "NULL" }) {
            // A member that is a column may be NULL; only IS matches NULL with NULL, as memory does.
            let equality = dialect.nullSafeEquality(negated: false)
            return "(" + SQLFragment.joined(members.map { "(" + subject + equality + $0 + ")" }, separator: " OR ") + ")"
        }
        let nonNull = members.filter { $0.sql != "NULL" }
        var parts: [SQLFragment] = []
        if !nonNull.isEmpty { parts.append(subject + " IN (" + SQLFragment.joined(nonNull, separator: ", ") + ")") }
        if nonNull.count != members.count { parts.append(subject + " IS NULL") }
        return "(" + SQLFragment.joined(parts, separator: " OR ") + ")"
    }

    /// The members of a literal collection (`{…}` or an array argument), compiled; nil for anything else.
    private func collectionMembers(_ expression: QueryExpression, in scope: SQLScope) throws -> [SQLFragment]? {
        switch expression {
        case .constant(.array(let values)):
            return try values.map { try value(.constant($0), in: scope) }
        case .aggregate(let members):
            return try members.map { try value($0, in: scope) }
        case .variable(let name) where boundRows[name] == nil:
            if case .array(let values)? = compiler.substitutionVariables[name] {
                return try values.map { try value(.constant($0), in: scope) }
            }
            return nil
        default:
            return nil
        }
    }

    // MARK: Values

    package func value(_ expression: QueryExpression, in scope: SQLScope) throws -> SQLFragment {
        try enter()
        defer { depth -= 1 }
        switch expression {
        case .constant(let constant):
            return try parameter(constant)
        case .evaluatedObject:
            return SQLFragment("\(rootScope.alias).Z_PK")
        case .variable(let name):
            if let row = boundRows[name] { return SQLFragment("\(row.alias).Z_PK") }
            guard let constant = compiler.substitutionVariables[name] else {
                throw QueryLanguageError.semantic("no value for the variable $\(name); substitute it before fetching")
            }
            return try value(.constant(constant), in: scope)
        case .keyPath(let base, let components):
            if case .subquery(let collection, let variable, let predicate) = base {
                guard components == ["@count"] else { throw unsupported("SUBQUERY(…) must be followed by .@count") }
                return try subqueryCount(collection, variable, predicate, in: scope)
            }
            if case .index(let collection, let index) = base {
                // `notes[FIRST].text` is `notes.text[FIRST]`; errors still quote what was written.
                let rewritten = try memberPath(collection, index, then: components, whole: expression, in: scope)
                if case .index(let path, let position) = rewritten {
                    return try indexValue(path, position, rewritten, described: QueryFormatter.format(expression), in: scope)
                }
                return try value(rewritten, in: scope)
            }
            guard let target = try resolve(expression, in: scope) else {
                throw unsupported("the key path \(QueryFormatter.format(expression))")
            }
            switch target {
            case .value(let fragment): return fragment
            case .toMany(let relationship, let storage, let owner, let rest):
                return try collectionOperator(relationship, storage, owner: owner, rest: rest,
                                              path: QueryFormatter.format(expression))
            }
        case .arithmetic(let op, let lhs, let rhs):
            return try dialect.arithmetic(op, lhs, rhs, in: scope, context: self)
        case .negate(let operand):
            try dialect.requireNumbers([operand], in: self)
            return "(0 - " + (try value(operand, in: scope)) + ")"
        case .function(let function, let arguments):
            return try functionValue(function, arguments, expression, in: scope)
        case .index(let base, let index):
            return try indexValue(base, index, expression, in: scope)
        case .ternary(let predicate, let whenTrue, let whenFalse):
            try dialect.requireSingleKind(expression, in: self)
            // An unknown (NULL) condition takes the false branch, as a false predicate does in memory.
            let condition = try compile(predicate, in: scope)
            return "CASE WHEN " + condition + " THEN " + (try value(whenTrue, in: scope)) + " ELSE "
                + (try value(whenFalse, in: scope)) + " END"
        case .cast(let operand, let type):
            return try dialect.cast(operand, to: type, in: scope, context: self)
        case .aggregate:
            throw unsupported("a collection in a scalar position")
        case .subquery:
            throw unsupported("SUBQUERY(…) must be followed by .@count")
        }
    }

    // MARK: Functions

    private func functionValue(_ function: QueryFunction, _ arguments: [QueryExpression], _ whole: QueryExpression,
                               in scope: SQLScope) throws -> SQLFragment {
        if let arity = function.arity, arguments.count != arity {
            throw unsupported("\(function.rawValue) takes \(arity) argument(s), not \(arguments.count)")
        }
        if let op = function.arithmeticOperator { return try value(.arithmetic(op, arguments[0], arguments[1]), in: scope) }
        switch function {
        case .now: return SQLFragment.parameter(Date().timeIntervalSinceReferenceDate.storeValue)
        case .random: return SQLFragment(dialect.randomNumber)
        case .noindex: return try value(arguments[0], in: scope)
        case .abs:
            return try dialect.absoluteValue(arguments[0], in: scope, context: self)
        case .count, .sum, .min, .max, .average, .median:
            if let folded = try foldedConstant(whole) { return try value(.constant(folded), in: scope) }
            return try aggregateValue(function, arguments, in: scope)
        default:
            return try dialect.function(function, arguments, in: scope, context: self)
        }
    }

    /// `sum:(books.pages)` is `books.@sum.pages`; `count:(books)` is `books[SIZE]`; `median:` runs the
    /// `ocd_median` aggregate over the members.
    private func aggregateValue(_ function: QueryFunction, _ arguments: [QueryExpression], in scope: SQLScope) throws -> SQLFragment {
        // Several values, or one literal collection of them: `max:(age, score)`, `median:({age, score, 7})`.
        if let members = arguments.count == 1 ? literalMembers(arguments[0]) : arguments, !members.isEmpty {
            if function != .count { try dialect.requireNumbers(members, in: self) }
            let rows = try members.enumerated().map { offset, member in
                "SELECT " + (try value(member, in: scope)) + (offset == 0 ? " AS v" : "")
            }
            // PostgreSQL wants a name for a subquery in FROM.
            let values = "(" + SQLFragment.joined(rows, separator: " UNION ALL ") + ") AS ocd_values"
            let aggregate: SQLFragment
            switch function {
            case .count: aggregate = SQLFragment("COUNT(*)")
            case .sum: aggregate = SQLFragment("COALESCE(SUM(v), 0)")
            case .min: aggregate = SQLFragment("MIN(v)")
            case .max: aggregate = SQLFragment("MAX(v)")
            case .average: aggregate = dialect.average(of: SQLFragment("v"), distinct: false)
            case .median: return dialect.median(ofValuesIn: values)
            default: throw unsupported(function.rawValue)
            }
            return "(SELECT " + aggregate + " FROM " + values + ")"
        }
        guard arguments.count == 1, case .keyPath = arguments[0], let target = try resolve(arguments[0], in: scope),
              case .toMany(let relationship, let storage, let owner, let rest) = target else {
            throw unsupported("\(function.rawValue) on anything but a to-many key path")
        }
        let path = QueryFormatter.format(.function(function, arguments))
        if function == .count {
            return try memberAt(relationship, storage, owner: owner, rest: rest, index: .size, described: path)
        }
        let operators: [QueryFunction: String] = [.sum: "@sum", .min: "@min", .max: "@max", .average: "@avg", .median: "@median"]
        guard let operatorName = operators[function] else { throw unsupported(path) }
        if let first = rest.first, first.hasPrefix("@") {
            // sum:(books.@distinctUnionOfObjects.pages) is books.@distinctUnionOfObjects.pages.@sum.
            guard QueryCollectionOperator.isUnion(first), !rest.dropFirst().contains(where: { $0.hasPrefix("@") }) else {
                throw unsupported("\(path): \(function.rawValue) of a number")
            }
            return try collectionOperator(relationship, storage, owner: owner, rest: rest + [operatorName], path: path,
                                          allowsMedian: true)
        }
        return try collectionOperator(relationship, storage, owner: owner, rest: [operatorName] + rest, path: path,
                                      allowsMedian: true)
    }

    private func collectionOperator(_ relationship: RelationshipDescription, _ storage: StoreSchema.PropertyStorage,
                                    owner: String, rest: [String], path: String, allowsMedian: Bool = false) throws -> SQLFragment {
        guard var operatorName = rest.first, operatorName.hasPrefix("@") else {
            throw unsupported("the to-many key path '\(path)' needs ANY, ALL, NONE or a collection operator here")
        }
        let (memberScope, correlation) = try memberScope(relationship, storage, ownerAlias: owner)
        var attributePath = Array(rest.dropFirst())
        var isUnion = false, distinct = false
        if QueryCollectionOperator.isUnion(operatorName) {
            // `books.@distinctUnionOfObjects.title.@count`: the operator after the right key path aggregates the
            // union's values (nil left out; DISTINCT for the distinct unions).
            let right = attributePath.prefix { !$0.hasPrefix("@") }
            let after = attributePath.dropFirst(right.count)
            guard !right.isEmpty else { throw unsupported("'\(path)': \(operatorName) needs a key after it") }
            let aggregates: Set<String> = allowsMedian ? ["@count", "@sum", "@avg", "@min", "@max", "@median"]
                : ["@count", "@sum", "@avg", "@min", "@max"]
            guard after.count == 1, let next = after.first, aggregates.contains(next) else {
                throw unsupported("'\(path)': \(operatorName) gives a collection; use it with IN, CONTAINS, ANY/ALL/NONE, @count or [SIZE]")
            }
            isUnion = true
            distinct = QueryCollectionOperator.isDistinct(operatorName)
            operatorName = next
            attributePath = Array(right)
        }
        func column() throws -> SQLFragment {
            guard !attributePath.isEmpty else { throw unsupported("'\(path)': \(operatorName) needs a key after it") }
            guard case .value(let column) = try walk(from: memberScope.alias, entity: memberScope.entity,
                                                     components: attributePath, scope: memberScope) else {
                throw unsupported("'\(path)': \(operatorName) over a nested to-many relationship")
            }
            return column
        }
        let unique = distinct ? "DISTINCT " : ""
        try dialect.requireAggregatable(operatorName, of: attributeKind(memberScope.entity, attributePath), in: self)
        let aggregate: SQLFragment
        switch operatorName {
        case "@count":
            if isUnion {
                aggregate = "COUNT(" + unique + (try column()) + ")"
            } else {
                guard rest.count == 1 else { throw unsupported("'\(path)': nothing may follow @count") }
                aggregate = SQLFragment("COUNT(*)")
            }
        case "@sum": aggregate = "COALESCE(SUM(" + unique + (try column()) + "), 0)"
        case "@avg": aggregate = dialect.average(of: try column(), distinct: distinct)
        case "@min": aggregate = "MIN(" + (try column()) + ")"
        case "@max": aggregate = "MAX(" + (try column()) + ")"
        case "@median" where allowsMedian:
            let member = try column()
            // Joins the member path added belong to the member scope, so the FROM clause is read afterwards.
            return dialect.median(of: member, distinct: distinct, from: memberScope.fromClause, where: correlation)
        default:
            throw unsupported("the collection operator \(operatorName)")
        }
        return "(SELECT " + aggregate + " FROM \(memberScope.fromClause) WHERE \(correlation))"
    }

    // MARK: Indexes

    /// `collection[i].key…` as `collection.key…[i]` (the i-th member's value), for FIRST, LAST and n.
    private func memberPath(_ collection: QueryExpression, _ index: QueryIndex, then components: [String],
                            whole: QueryExpression, in scope: SQLScope) throws -> QueryExpression {
        let described = QueryFormatter.format(whole)
        guard case .keyPath(let base, let path) = collection, let target = try resolve(collection, in: scope) else {
            throw unsupported("'\(described)': a key after an index compiles only on a to-many key path")
        }
        switch index {
        case .size:
            throw unsupported("'\(described)': [SIZE] is a number, which has no keys")
        case .at(let position):
            if let key = try foldedConstant(position).flatMap(QueryValueSemantics.text) {
                // A string index looks a key up in an object; in a collection it finds nothing (as in memory).
                guard case .value = target else { return .constant(.null) }
                return .keyPath(base: base, components: path + [key] + components)
            }
        default:
            break
        }
        return .index(.keyPath(base: base, components: path + components), index)
    }

    private func indexValue(_ base: QueryExpression, _ index: QueryIndex, _ whole: QueryExpression,
                            described: String? = nil, in scope: SQLScope) throws -> SQLFragment {
        let described = described ?? QueryFormatter.format(whole)
        // Indexes into constants fold: {1, 2, 3}[1], %@[LAST], {}[SIZE].
        if let folded = try foldedConstant(whole) { return try value(.constant(folded), in: scope) }
        if let members = literalMembers(base) {
            switch index {
            case .size: return SQLFragment.parameter(Int64(members.count).storeValue)
            case .first: return try members.first.map { try value($0, in: scope) } ?? SQLFragment("NULL")
            case .last: return try members.last.map { try value($0, in: scope) } ?? SQLFragment("NULL")
            case .at(let position):
                if let constant = try foldedConstant(position) {
                    guard let offset = CompilationContext.offset(constant), offset < members.count else { return SQLFragment("NULL") }
                    return try value(members[offset], in: scope)
                }
                if members.isEmpty { return SQLFragment("NULL") }
                return try dialect.literalIndex(members, position, whole: whole, in: scope, context: self)
            }
        }
        if case .subquery(let collection, let variable, let predicate) = base {
            guard index == .size else {
                throw unsupported("'\(described)': the members a SUBQUERY finds have no order; only [SIZE] compiles")
            }
            return try subqueryCount(collection, variable, predicate, in: scope)
        }
        guard case .keyPath(let keyBase, let components) = base, let target = try resolve(base, in: scope) else {
            throw unsupported("'\(described)': an index compiles only on a to-many key path, a SUBQUERY or a literal collection")
        }
        if case .at(let position) = index, let key = try foldedConstant(position).flatMap(QueryValueSemantics.text) {
            // `address['city']` is `address.city`; a string index into a collection finds nothing, as in memory.
            guard case .value = target else { return SQLFragment("NULL") }
            return try value(.keyPath(base: keyBase, components: components + [key]), in: scope)
        }
        switch target {
        case .value:
            throw unsupported("'\(described)': '\(QueryFormatter.format(base))' is not a to-many relationship, so it has no members to index")
        case .toMany(let relationship, let storage, let owner, let rest):
            return try memberAt(relationship, storage, owner: owner, rest: rest, index: index, described: described)
        }
    }

    /// `books[SIZE]` (a count), `notes[FIRST]`, `notes.text[LAST]`, `notes[2].text`: a correlated subquery over
    /// the members, in the store's order for FIRST, LAST and n (ordered relationships only).
    private func memberAt(_ relationship: RelationshipDescription, _ storage: StoreSchema.PropertyStorage, owner: String,
                          rest: [String], index: QueryIndex, described: String) throws -> SQLFragment {
        if let first = rest.first, first.hasPrefix("@") {
            guard QueryCollectionOperator.isUnion(first) else {
                throw unsupported("'\(described)': \(first) gives a number, which has no members to index")
            }
            guard index == .size else {
                throw unsupported("'\(described)': the values of \(first) have no order in the store; only [SIZE] compiles")
            }
            // The size of a union is its @count.
            return try collectionOperator(relationship, storage, owner: owner, rest: rest + ["@count"], path: described)
        }
        let name = "\(relationship.entity?.name ?? "?").\(relationship.name)"
        var offset = 0, descending = false
        switch index {
        case .size: break
        case .first, .last, .at:
            guard relationship.isOrdered else {
                throw unsupported("'\(described)': '\(name)' is not an ordered relationship, so its members have no position in the store (only [SIZE] compiles)")
            }
            if index == .last { descending = true }
            if case .at(let position) = index {
                guard let constant = try foldedConstant(position) else {
                    throw unsupported("'\(described)': the index into '\(name)' must be a constant number (or a variable substituted before fetching)")
                }
                guard let number = CompilationContext.offset(constant) else { return SQLFragment("NULL") }
                offset = number
            }
        }
        let rows = try memberRows(relationship, storage, ownerAlias: owner)
        var column = SQLFragment("\(rows.scope.alias).Z_PK")
        if !rest.isEmpty {
            guard case .value(let fragment) = try walk(from: rows.scope.alias, entity: rows.scope.entity,
                                                       components: rest, scope: rows.scope) else {
                throw unsupported("'\(described)': the members' values go through another to-many relationship")
            }
            column = fragment
        }
        // Joins the member path added belong to the member scope, so the FROM clause is read afterwards.
        if index == .size {
            return SQLFragment("(SELECT COUNT(*) FROM \(rows.scope.fromClause) WHERE \(rows.correlation))")
        }
        let order = rows.order.map { descending ? $0 + " DESC" : $0 }.joined(separator: ", ")
        return "(SELECT " + column + " FROM \(rows.scope.fromClause) WHERE \(rows.correlation) ORDER BY \(order) LIMIT 1 OFFSET \(offset))"
    }

    /// The members of a literal collection, as expressions; nil for anything else.
    func literalMembers(_ expression: QueryExpression) -> [QueryExpression]? {
        switch expression {
        case .constant(.array(let values)): return values.map(QueryExpression.constant)
        case .aggregate(let members): return members
        case .variable(let name) where boundRows[name] == nil:
            if case .array(let values)? = compiler.substitutionVariables[name] { return values.map(QueryExpression.constant) }
            return nil
        default: return nil
        }
    }

    /// A constant as a position in a collection: a whole, non-negative number (as memory takes it).
    private static func offset(_ constant: QueryValue) -> Int? {
        guard let number = QueryValueSemantics.number(constant), let offset = QueryEvaluator.integer(number),
              offset >= 0 else { return nil }
        return offset
    }

    /// The value of an expression that reads no row (constants, and arithmetic, functions and indexes of
    /// them; substituted variables), computed by memory's evaluator; nil for anything else.
    package func foldedConstant(_ expression: QueryExpression) throws -> QueryValue? {
        guard isConstant(expression) else { return nil }
        var evaluator = try QueryEvaluator(variables: compiler.substitutionVariables.mapValues { $0.swiftValue as Any })
        let result = try evaluator.evaluate(expression, object: nil)
        guard let converted = QueryValue.convert(result) else {
            throw unsupported("the constant \(QueryFormatter.format(expression))")
        }
        return converted
    }

    package func isConstant(_ expression: QueryExpression) -> Bool {
        switch expression {
        case .constant: return true
        case .variable(let name): return boundRows[name] == nil && compiler.substitutionVariables[name] != nil
        case .aggregate(let members): return members.allSatisfy(isConstant)
        case .arithmetic(_, let lhs, let rhs): return isConstant(lhs) && isConstant(rhs)
        case .negate(let operand): return isConstant(operand)
        case .function(let function, let arguments):
            return function != .random && function != .now && arguments.allSatisfy(isConstant)
        case .index(let base, let index):
            if case .at(let position) = index, !isConstant(position) { return false }
            return isConstant(base)
        case .cast(let operand, _): return isConstant(operand)
        default: return false
        }
    }

    private func subqueryCount(_ collection: QueryExpression, _ variable: String, _ predicate: QueryPredicate,
                               in scope: SQLScope) throws -> SQLFragment {
        guard let target = try resolve(collection, in: scope),
              case .toMany(let relationship, let storage, let owner, let rest) = target, rest.isEmpty else {
            throw unsupported("SUBQUERY over anything but a to-many relationship")
        }
        let (memberScope, correlation) = try memberScope(relationship, storage, ownerAlias: owner)
        let saved = boundRows[variable]
        boundRows[variable] = (memberScope.alias, memberScope.entity, memberScope)
        defer { boundRows[variable] = saved }
        let condition = try compile(predicate, in: memberScope)
        return "(SELECT COUNT(*) FROM \(memberScope.fromClause) WHERE \(correlation) AND " + condition + ")"
    }
}
