import Foundation
import GRDB

// Placeholder until the query-language branch lands; replaced wholesale by it.

public struct QueryPredicate: Sendable, CustomStringConvertible {
    public let predicateFormat: String
    public init(format: String, _ arguments: Any...) throws { predicateFormat = format }
    public var description: String { predicateFormat }
    public func evaluate(with object: Any?, substitutionVariables: [String: Any] = [:]) throws -> Bool {
        throw ObjectGraphError.invalidRequest("predicates are not available yet")
    }
}

public struct QuerySortDescriptor: Sendable, CustomStringConvertible {
    public let key: String
    public let ascending: Bool
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
    public var description: String { "(\(key), \(ascending ? "ascending" : "descending"), compare:)" }
    public func compare(_ lhs: Any?, _ rhs: Any?) throws -> ComparisonResult {
        let result = StubCompare.compare(lhs, rhs)
        return ascending ? result : (result == .orderedAscending ? .orderedDescending : result == .orderedDescending ? .orderedAscending : .orderedSame)
    }
}

enum StubCompare {
    static func compare(_ lhs: Any?, _ rhs: Any?) -> ComparisonResult {
        switch (lhs, rhs) {
        case (nil, nil): return .orderedSame
        case (nil, _): return .orderedAscending
        case (_, nil): return .orderedDescending
        case let (a as String, b as String): return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        case let (a as Date, b as Date): return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        default:
            let a = (lhs as? NSNumber)?.doubleValue ?? Double("\(lhs!)") ?? 0
            let b = (rhs as? NSNumber)?.doubleValue ?? Double("\(rhs!)") ?? 0
            return a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
        }
    }
}

struct PredicateSQLCompiler {
    struct Compiled {
        var fromClause: String
        var whereClause: String?
        var orderByClause: String?
        var arguments: [DatabaseValue]
    }

    static func compile(model: ManagedObjectModel, entity: EntityDescription, predicate: QueryPredicate?,
                        sortDescriptors: [QuerySortDescriptor]) throws -> Compiled {
        if predicate != nil { throw ObjectGraphError.invalidRequest("predicates are not available yet") }
        var joins: [String] = []
        var joinAlias: [String: String] = [:]
        var order: [String] = []
        for sort in sortDescriptors {
            var current = entity
            var alias = "t0"
            let parts = sort.key.split(separator: ".").map(String.init)
            for (index, part) in parts.enumerated() {
                guard let slot = current.slotByName[part] else {
                    throw ObjectGraphError.unknownKey(entity: current.name, key: part)
                }
                switch current.storage[slot] {
                case .attribute(let column, _) where index == parts.count - 1:
                    order.append("\(alias).\(column) \(sort.ascending ? "" : "DESC")")
                case .toOne(let column, _, _, _) where index < parts.count - 1:
                    let relationship = current.allProperties[slot] as! RelationshipDescription
                    let path = parts[0...index].joined(separator: ".")
                    if let existing = joinAlias[path] {
                        alias = existing
                    } else {
                        let next = "t\(joins.count + 1)"
                        joins.append("LEFT OUTER JOIN \(relationship.destinationEntity.tableName) \(next) ON \(alias).\(column) = \(next).Z_PK")
                        joinAlias[path] = next
                        alias = next
                    }
                    current = relationship.destinationEntity
                default:
                    throw ObjectGraphError.invalidRequest("cannot sort \(entity.name) by '\(sort.key)'")
                }
            }
        }
        return Compiled(fromClause: "\(entity.tableName) t0" + joins.map { " " + $0 }.joined(),
                        whereClause: nil, orderByClause: order.isEmpty ? nil : order.joined(separator: ", "),
                        arguments: [])
    }
}
