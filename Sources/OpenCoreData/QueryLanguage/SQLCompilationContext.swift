import Foundation
import GRDB

/// The state of one compilation: alias numbering and the rows `$variables` of SUBQUERYs range over.
final class CompilationContext {
    let compiler: PredicateSQLCompiler
    private var aliasCount = 0
    private(set) var rootScope: SQLScope
    /// SUBQUERY variables and quantified members: the alias and entity of the row they stand for.
    private var boundRows: [String: (alias: String, entity: EntityDescription, scope: SQLScope)] = [:]
    private var depth = 0

    init(compiler: PredicateSQLCompiler) {
        self.compiler = compiler
        let mapping = compiler.model.schema.mapping(for: compiler.entity)
        rootScope = SQLScope(alias: "t0", entity: compiler.entity, table: mapping.tableName)
    }

    private var schema: StoreSchema { compiler.model.schema }

    func newAlias() -> String {
        aliasCount += 1
        return "t\(aliasCount)"
    }

    private func unsupported(_ what: String) -> QueryLanguageError {
        .semantic("cannot compile to SQL: \(what)")
    }

    private func enter() throws {
        depth += 1
        if depth > 1_000 { throw unsupported("predicate nested too deeply") }
    }

    // MARK: Predicates

    func compile(_ predicate: QueryPredicate, in scope: SQLScope) throws -> SQLFragment {
        try enter()
        defer { depth -= 1 }
        switch predicate {
        case .constant(let value): return SQLFragment(value ? "1" : "0")
        case .and(let parts):
            if parts.isEmpty { return SQLFragment("1") }
            return "(" + SQLFragment.joined(try parts.map { try compile($0, in: scope) }, separator: " AND ") + ")"
        case .or(let parts):
            if parts.isEmpty { return SQLFragment("0") }
            return "(" + SQLFragment.joined(try parts.map { try compile($0, in: scope) }, separator: " OR ") + ")"
        case .not(let inner):
            return negate(try compile(inner, in: scope))
        case .comparison(let comparison):
            return try compile(comparison, in: scope)
        }
    }

    /// NOT that treats NULL (an unknown comparison) as false first, as in-memory evaluation does.
    private func negate(_ condition: SQLFragment) -> SQLFragment {
        "NOT COALESCE(" + condition + ", 0)"
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
        for (position, key) in components.enumerated() {
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

    /// A subquery scope over the members of a to-many relationship, with its correlation condition.
    private func memberScope(_ relationship: RelationshipDescription, _ storage: StoreSchema.PropertyStorage,
                             ownerAlias: String) throws -> (scope: SQLScope, correlation: String) {
        guard let destination = relationship.destinationEntity else {
            throw unsupported("relationship '\(relationship.name)' has no destination")
        }
        let table = schema.mapping(for: destination).tableName
        let alias = newAlias()
        switch storage {
        case .toManyByForeignKey(_, let column, _):
            return (SQLScope(alias: alias, entity: destination, table: table), "\(alias).\(column) = \(ownerAlias).Z_PK")
        case .toManyByJoinTable(let join):
            let joinAlias = newAlias()
            let scope = SQLScope(alias: alias, entity: destination,
                                 table: "\(join.name) \(joinAlias) JOIN \(table)")
            // The join table comes first; the member table is joined on the destination key.
            return (scope, "\(alias).Z_PK = \(joinAlias).\(join.destinationColumn) AND \(joinAlias).\(join.sourceColumn) = \(ownerAlias).Z_PK")
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
        // A to-many key path on the left: quantify over its members.
        if let target = try resolve(comparison.lhs, in: scope), case .toMany(let relationship, let storage, let owner, let rest) = target,
           !(rest.first?.hasPrefix("@") ?? false) {
            var memberComparison = comparison
            var modifier = comparison.modifier
            if modifier == .direct {
                // CONTAINS on a collection asks for an equal member; other operators mean "some member".
                if comparison.op == .contains { memberComparison.op = .equal }
                modifier = .any
            }
            func condition(_ name: String, _ memberScope: SQLScope) throws -> SQLFragment {
                var inner = memberComparison
                inner.lhs = rest.isEmpty ? .variable(name) : .keyPath(base: .variable(name), components: rest)
                // Each member (nil included) is tested directly, unless the path goes through another to-many
                // relationship, whose members the same quantifier then ranges over (memory flattens them).
                if case .toMany? = try resolve(inner.lhs, in: memberScope) {
                    inner.modifier = modifier == .all ? .all : .any
                } else {
                    inner.modifier = .direct
                }
                return try compile(inner, in: memberScope)
            }
            switch modifier {
            case .any:
                return try exists(relationship, storage, ownerAlias: owner) { try condition($0, $1) }
            case .none:
                return "NOT " + (try exists(relationship, storage, ownerAlias: owner) { try condition($0, $1) })
            case .all:
                return "NOT " + (try exists(relationship, storage, ownerAlias: owner) { name, memberScope in
                    negate(try condition(name, memberScope))
                })
            case .direct:
                break
            }
        }
        // A to-many key path on the right of IN: some member equals the left side.
        if comparison.op == .in, let target = try resolve(comparison.rhs, in: scope),
           case .toMany(let relationship, let storage, let owner, let rest) = target,
           !(rest.first?.hasPrefix("@") ?? false) {
            let needle = comparison.lhs
            let found = try exists(relationship, storage, ownerAlias: owner) { name, memberScope in
                let member: QueryExpression = rest.isEmpty ? .variable(name) : .keyPath(base: .variable(name), components: rest)
                return try compile(QueryComparison(member, .equal, needle, options: comparison.options), in: memberScope)
            }
            return try quantifyScalar(comparison, found, scope)
        }
        return try quantifyScalar(comparison, try scalarComparison(comparison, in: scope), scope)
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

    private static let foldingOptions: QueryComparison.Options = [.caseInsensitive, .diacriticInsensitive]

    private func function(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                          _ lhs: SQLFragment, _ rhs: SQLFragment) -> SQLFragment {
        let flags = options.intersection(CompilationContext.foldingOptions).rawValue
        return "ocd_compare('\(op.rawValue)', \(flags), " + lhs + ", " + rhs + ")"
    }

    private func scalarComparison(_ comparison: QueryComparison, in scope: SQLScope) throws -> SQLFragment {
        let options = comparison.options.intersection(CompilationContext.foldingOptions)
        switch comparison.op {
        case .in:
            if let members = try collectionMembers(comparison.rhs, in: scope) {
                return try membership(try value(comparison.lhs, in: scope), members, options)
            }
            return function(.in, options, try value(comparison.lhs, in: scope), try value(comparison.rhs, in: scope))
        case .contains:
            if let members = try collectionMembers(comparison.lhs, in: scope) {
                return try membership(try value(comparison.rhs, in: scope), members, options)
            }
            return function(.contains, options, try value(comparison.lhs, in: scope), try value(comparison.rhs, in: scope))
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
                                  try value(comparison.rhs, in: scope))
        }
    }

    private func scalarTest(_ op: QueryComparison.Operator, _ options: QueryComparison.Options,
                            _ lhs: SQLFragment, _ rhs: SQLFragment) throws -> SQLFragment {
        if !options.isEmpty { return function(op, options, lhs, rhs) }
        switch op {
        case .equal: return rhs.sql == "NULL" ? lhs + " IS NULL" : "(" + lhs + " IS " + rhs + ")"
        case .notEqual: return rhs.sql == "NULL" ? lhs + " IS NOT NULL" : "(" + lhs + " IS NOT " + rhs + ")"
        case .less: return "(" + lhs + " < " + rhs + ")"
        case .lessOrEqual: return "(" + lhs + " <= " + rhs + ")"
        case .greater: return "(" + lhs + " > " + rhs + ")"
        case .greaterOrEqual: return "(" + lhs + " >= " + rhs + ")"
        default: return function(op, options, lhs, rhs)
        }
    }

    /// `x IN (…)` with nil members matching a nil `x`, as in memory.
    private func membership(_ subject: SQLFragment, _ members: [SQLFragment],
                            _ options: QueryComparison.Options) throws -> SQLFragment {
        if members.isEmpty { return SQLFragment("0") }
        if !options.isEmpty {
            return "(" + SQLFragment.joined(members.map { function(.equal, options, subject, $0) }, separator: " OR ") + ")"
        }
        if members.contains(where: { $0.sql != "?" && $0.sql != "NULL" }) {
            // A member that is a column may be NULL; only IS matches NULL with NULL, as memory does.
            return "(" + SQLFragment.joined(members.map { "(" + subject + " IS " + $0 + ")" }, separator: " OR ") + ")"
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

    func value(_ expression: QueryExpression, in scope: SQLScope) throws -> SQLFragment {
        try enter()
        defer { depth -= 1 }
        switch expression {
        case .constant(let constant):
            return SQLFragment.parameter(try QuerySQLFunctions.bind(constant))
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
            let left = try value(lhs, in: scope), right = try value(rhs, in: scope)
            switch op {
            case .add: return "(" + left + " + " + right + ")"
            case .subtract: return "(" + left + " - " + right + ")"
            case .multiply: return "(" + left + " * " + right + ")"
            case .divide: return "ocd_divide(" + left + ", " + right + ")"
            case .power: return "ocd_power(" + left + ", " + right + ")"
            }
        case .negate(let operand):
            return "(0 - " + (try value(operand, in: scope)) + ")"
        case .function(let function, let arguments):
            switch function {
            case .now: return SQLFragment.parameter(Date().timeIntervalSinceReferenceDate.databaseValue)
            case .abs:
                guard arguments.count == 1 else { throw unsupported("abs: takes one argument") }
                return "ocd_abs(" + (try value(arguments[0], in: scope)) + ")"
            case .count, .sum, .min, .max, .average:
                guard arguments.count == 1, case .keyPath(let base, let components) = arguments[0] else {
                    throw unsupported("\(function.rawValue) on anything but a to-many key path")
                }
                let operatorName = ["count:": "@count", "sum:": "@sum", "min:": "@min", "max:": "@max", "average:": "@avg"][function.rawValue] ?? "@count"
                guard let target = try resolve(arguments[0], in: scope),
                      case .toMany(_, _, _, let rest) = target, rest.isEmpty || function != .count else {
                    throw unsupported("\(function.rawValue) on anything but a to-many key path")
                }
                // sum:(items.price) is items.@sum.price.
                let split = components.count - rest.count
                let rewritten = Array(components[..<split]) + [operatorName] + rest
                return try value(.keyPath(base: base, components: rewritten), in: scope)
            case .median:
                throw unsupported("median: in SQL")
            }
        case .cast(let operand, let type):
            return "ocd_cast(" + (try value(operand, in: scope)) + ", '\(type.rawValue)')"
        case .aggregate:
            throw unsupported("a collection in a scalar position")
        case .subquery:
            throw unsupported("SUBQUERY(…) must be followed by .@count")
        }
    }

    private func collectionOperator(_ relationship: RelationshipDescription, _ storage: StoreSchema.PropertyStorage,
                                    owner: String, rest: [String], path: String) throws -> SQLFragment {
        guard let operatorName = rest.first, operatorName.hasPrefix("@") else {
            throw unsupported("the to-many key path '\(path)' needs ANY, ALL, NONE or a collection operator here")
        }
        let (memberScope, correlation) = try memberScope(relationship, storage, ownerAlias: owner)
        let aggregate: SQLFragment
        switch operatorName {
        case "@count":
            guard rest.count == 1 else { throw unsupported("'\(path)': nothing may follow @count") }
            aggregate = SQLFragment("COUNT(*)")
        case "@sum", "@avg", "@min", "@max":
            let attributePath = Array(rest.dropFirst())
            guard !attributePath.isEmpty else { throw unsupported("'\(path)': \(operatorName) needs a key after it") }
            guard case .value(let column) = try walk(from: memberScope.alias, entity: memberScope.entity,
                                                     components: attributePath, scope: memberScope) else {
                throw unsupported("'\(path)': \(operatorName) over a nested to-many relationship")
            }
            switch operatorName {
            case "@sum": aggregate = "COALESCE(SUM(" + column + "), 0)"
            case "@avg": aggregate = "AVG(" + column + ")"
            case "@min": aggregate = "MIN(" + column + ")"
            default: aggregate = "MAX(" + column + ")"
            }
        default:
            throw unsupported("the collection operator \(operatorName)")
        }
        return "(SELECT " + aggregate + " FROM \(memberScope.fromClause) WHERE \(correlation))"
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
