import Foundation
import OpenCoreData

/// A `--keys` path checked against the model, read the way key-value coding reads it: through to-one
/// relationships to one value, through to-many relationships and fetched properties to the collection of the values reached
/// (members without one left out), and with the collection operators `@count`, `@sum`, `@avg`, `@min`
/// and `@max` after a to-many (`books.@count`, `books.@sum.pageCount`).
///
/// A path the model cannot answer (`name.length`, `name..x`, a key the entity does not have, an
/// operator not after a to-many) is refused before anything is fetched, naming the path and the part.
struct KeyPathReader {
    enum Operator: String, CaseIterable {
        case count, sum, avg, min, max
    }

    /// One step of a checked path.
    private enum Step {
        case key(String)
        case count
        /// An aggregate over the rest of the path, read from each member of the collection.
        case aggregate(Operator, [Step])
    }

    /// The path as the user wrote it.
    let path: String
    private let steps: [Step]

    /// Checks `path` against `entity`.
    /// - Throws: `OCDError` naming the path and the component the model cannot follow.
    init(_ path: String, entity: EntityDescription) throws {
        self.path = path
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if components.contains("") {
            throw OCDError("--keys '\(path)': a key is empty (two dots, or a dot at an end)")
        }
        steps = try Self.check(components[...], entity: entity, inCollection: false, path: path)
    }

    private static func check(_ components: ArraySlice<String>, entity: EntityDescription, inCollection: Bool,
                              path: String) throws -> [Step] {
        guard let component = components.first else { return [] }
        let rest = components.dropFirst()
        func refuse(_ why: String) -> OCDError { OCDError("--keys '\(path)': \(why)") }
        if component.hasPrefix("@") {
            guard let op = Operator(rawValue: String(component.dropFirst())) else {
                let known = Operator.allCases.map { "@" + $0.rawValue }.joined(separator: ", ")
                throw refuse("'\(component)' is not a collection operator (\(known))")
            }
            guard inCollection else { throw refuse("'\(component)' must follow a to-many relationship") }
            if op == .count {
                guard rest.isEmpty else { throw refuse("nothing may follow '@count'") }
                return [.count]
            }
            guard !rest.isEmpty else { throw refuse("'\(component)' needs a key after it (\(component).price)") }
            return [.aggregate(op, try check(rest, entity: entity, inCollection: false, path: path))]
        }
        // A fetched property reads as the array of objects its fetch request finds: a to-many.
        if entity.propertiesByName[component] == nil, let fetched = entity.fetchedProperty(named: component) {
            guard let destination = entity.managedObjectModel?.entitiesByName[fetched.entityName] else {
                throw refuse("'\(component)' fetches entity '\(fetched.entityName)', which the model does not have")
            }
            return [.key(component)] + (try check(rest, entity: destination, inCollection: true, path: path))
        }
        guard let property = entity.propertiesByName[component] else {
            var fetched: [String] = []
            var ancestor: EntityDescription? = entity
            while let current = ancestor {
                fetched += current.fetchedProperties.map(\.name)
                ancestor = current.superentity
            }
            let names = Set(Array(entity.propertiesByName.keys) + fetched).sorted().joined(separator: ", ")
            throw refuse("\(entity.name) has no property '\(component)' (it has \(names))")
        }
        if let relationship = property as? RelationshipDescription {
            return [.key(component)] + (try check(rest, entity: relationship.destinationEntity,
                                                  inCollection: inCollection || relationship.isToMany, path: path))
        }
        if let next = rest.first {
            if next.hasPrefix("@") {
                throw refuse("'\(next)' must follow a to-many relationship, and '\(component)' is an attribute")
            }
            throw refuse("'\(component)' is an attribute of \(entity.name), so '\(next)' cannot follow it")
        }
        return [.key(component)]
    }

    /// The path's value on `object`: one value, an array through to-many relationships, or an operator's
    /// result.
    /// - Throws: what reading a property throws (a fault that cannot be fulfilled).
    func value(of object: ManagedObject) throws -> Any? {
        try Self.read(object, steps[...])
    }

    private static func read(_ value: Any?, _ steps: ArraySlice<Step>) throws -> Any? {
        guard let step = steps.first else { return value }
        let rest = steps.dropFirst()
        switch step {
        case .key(let key):
            if let object = value as? ManagedObject {
                return try read(try MissingTransformerNotice.shared.value(of: object, forKey: key), rest)
            }
            guard let collection = members(of: value) else { return nil }
            var results: [Any] = []
            for member in collection {
                guard let next = try read(member, [step][...]) else { continue }
                if let nested = members(of: next) { results.append(contentsOf: nested) } else { results.append(next) }
            }
            return try read(results, rest)
        case .count:
            return members(of: value)?.count ?? 0
        case .aggregate(let op, let path):
            let values = try (members(of: value) ?? []).compactMap { try read($0, path[...]) }
            return aggregate(op, values)
        }
    }

    /// The members of a to-many value (a set or an ordered set of objects, or values already gathered).
    private static func members(of value: Any?) -> [Any]? {
        switch value {
        case let objects as Set<ManagedObject>: return Array(objects)
        case let objects as [ManagedObject]: return objects
        case let values as [Any]: return values
        default: return nil
        }
    }

    /// `@sum` and `@avg` of numbers (Decimal when any member is one, so money adds exactly); `@min` and
    /// `@max` of numbers, strings or dates. Nil for an empty collection, as key-value coding gives, but
    /// `@sum`, which is 0.
    private static func aggregate(_ op: Operator, _ values: [Any]) -> Any? {
        switch op {
        case .count:
            return values.count
        case .sum, .avg:
            if values.contains(where: { $0 is Decimal }) {
                let total = values.reduce(Decimal(0)) { $0 + (decimal($1) ?? 0) }
                if op == .sum { return total }
                return values.isEmpty ? nil : total / Decimal(values.count)
            }
            if op == .sum, values.allSatisfy({ $0 is any BinaryInteger }) {
                return values.reduce(Int64(0)) { total, value in
                    guard let integer = value as? any BinaryInteger else { return total }
                    return total &+ Int64(truncatingIfNeeded: integer)
                }
            }
            let total = values.reduce(0.0) { $0 + (double($1) ?? 0) }
            if op == .sum { return total }
            return values.isEmpty ? nil : total / Double(values.count)
        case .min, .max:
            let ordered = values.sorted { lhs, rhs in
                if let left = double(lhs), let right = double(rhs) { return left < right }
                if let left = lhs as? Date, let right = rhs as? Date { return left < right }
                return "\(lhs)" < "\(rhs)"
            }
            return op == .min ? ordered.first : ordered.last
        }
    }

    private static func double(_ value: Any) -> Double? {
        switch value {
        case let integer as any BinaryInteger: return Double(integer)
        case let number as any BinaryFloatingPoint: return Double(number)
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal).doubleValue
        default: return nil
        }
    }

    private static func decimal(_ value: Any) -> Decimal? {
        switch value {
        case let decimal as Decimal: return decimal
        case let integer as any BinaryInteger: return Decimal(Int64(truncatingIfNeeded: integer))
        case let number as any BinaryFloatingPoint: return Decimal(Double(number))
        default: return nil
        }
    }
}
