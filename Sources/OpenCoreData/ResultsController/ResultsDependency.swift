import Foundation

/// A relationship chain a results controller's rows depend on (a sort or section key such as
/// `list.title`, a predicate path such as `ANY items.tag`), with the keys of each object along it whose
/// change can change a row.
///
/// An object reached through the chain counts as changed for the rows only when one of those keys changed:
/// inserting an item into a list changes the list's `items`, which a request on `list.title` never reads,
/// so the list's thousand other items are not re-examined or reported.
struct ResultsDependency {
    /// The relationships walked from the result entity, in order.
    let relationships: [RelationshipDescription]
    /// For the destination of each relationship (same index), the keys read on it; nil when any change may
    /// matter (a key path the controller cannot follow exactly).
    private(set) var watchedKeys: [Set<String>?]

    /// Whether a change of `changedKeys` (nil: unknown, any) on an object reached at `depth` can change a row.
    func matters(_ changedKeys: Set<String>?, atDepth depth: Int) -> Bool {
        guard let changedKeys, let watched = watchedKeys[depth] else { return true }
        return !watched.isDisjoint(with: changedKeys)
    }

    /// The dependencies of a request: its sort (and so section) keys and every key path its predicate reads,
    /// one per relationship chain.
    static func collect(ordering: ResultsOrdering, entity: EntityDescription, predicate: QueryPredicate?) -> [ResultsDependency] {
        var paths = ordering.keys.map { $0.descriptor.key.split(separator: ".").map(String.init) }
        var open: [[String]] = []
        if let predicate {
            var collector = KeyPathCollector()
            collector.visit(predicate, variables: [:])
            paths += collector.paths
            open = collector.openPaths
        }
        var dependencies: [ResultsDependency] = []
        func add(_ path: [String], open: Bool) {
            var current = entity
            var relationships: [RelationshipDescription] = []
            var watched: [Set<String>?] = []
            for part in path where !part.hasPrefix("@") {
                // The key read on the object the last relationship reached.
                if let last = watched.indices.last { watched[last]?.insert(part) }
                guard let slot = current.slotByName[part],
                      let relationship = current.allProperties[slot] as? RelationshipDescription,
                      let destination = relationship.destinationEntity else { break }
                relationships.append(relationship)
                watched.append([])
                current = destination
            }
            guard !relationships.isEmpty else { return }
            // A path whose end the controller cannot see (a SUBQUERY's members are read by its own
            // predicate, collected separately; anything else unknown) watches every key at its end.
            if open { watched[watched.count - 1] = nil }
            if let index = dependencies.firstIndex(where: { $0.relationships.map(ObjectIdentifier.init) == relationships.map(ObjectIdentifier.init) }) {
                for depth in watched.indices {
                    if let keys = watched[depth], dependencies[index].watchedKeys[depth] != nil {
                        dependencies[index].watchedKeys[depth]?.formUnion(keys)
                    } else {
                        dependencies[index].watchedKeys[depth] = nil
                    }
                }
            } else {
                dependencies.append(ResultsDependency(relationships: relationships, watchedKeys: watched))
            }
        }
        for path in paths { add(path, open: false) }
        for path in open { add(path, open: true) }
        return dependencies
    }

    /// The key paths from the evaluated object that a predicate reads, found by walking its tree (a
    /// SUBQUERY's variable stands for a member of its collection, so `$x.name` inside
    /// `SUBQUERY(items, $x, …)` is `items.name`).
    struct KeyPathCollector {
        /// Paths whose every component is known.
        private(set) var paths: [[String]] = []
        /// Paths the controller cannot follow to their end (a variable's path it does not know).
        private(set) var openPaths: [[String]] = []

        mutating func visit(_ predicate: QueryPredicate, variables: [String: [String]]) {
            switch predicate {
            case .constant: break
            case .and(let parts), .or(let parts): for part in parts { visit(part, variables: variables) }
            case .not(let inner): visit(inner, variables: variables)
            case .comparison(let comparison):
                visit(comparison.lhs, variables: variables)
                visit(comparison.rhs, variables: variables)
            }
        }

        mutating func visit(_ expression: QueryExpression, variables: [String: [String]]) {
            switch expression {
            case .constant, .evaluatedObject, .variable: break
            case .keyPath(let base, let components):
                switch base {
                case .evaluatedObject: paths.append(components)
                case .variable(let name):
                    if let prefix = variables[name] { paths.append(prefix + components) }
                default: visit(base, variables: variables)
                }
            case .aggregate(let members): for member in members { visit(member, variables: variables) }
            case .arithmetic(_, let lhs, let rhs):
                visit(lhs, variables: variables)
                visit(rhs, variables: variables)
            case .negate(let inner), .index(let inner, _), .cast(let inner, _): visit(inner, variables: variables)
            case .function(_, let arguments): for argument in arguments { visit(argument, variables: variables) }
            case .ternary(let condition, let lhs, let rhs):
                visit(condition, variables: variables)
                visit(lhs, variables: variables)
                visit(rhs, variables: variables)
            case .subquery(let collection, let variable, let predicate):
                visit(collection, variables: variables)
                var inner = variables
                if case .keyPath(.evaluatedObject, let components) = collection {
                    inner[variable] = components
                } else if case .keyPath(.variable(let outer), let components) = collection, let prefix = variables[outer] {
                    inner[variable] = prefix + components
                } else {
                    inner[variable] = nil
                    if case .keyPath(_, let components) = collection { openPaths.append(components) }
                }
                // A member compared as a whole (`$x == %@`, `$x IN …`) reads no key of it: its identity
                // changes only with the collection, which the collection's own path watches.
                visit(predicate, variables: inner)
            }
        }
    }
}
