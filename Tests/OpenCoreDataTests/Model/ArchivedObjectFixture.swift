import Foundation
@testable import OpenCoreData

/// An archived object of any class (a predicate, an expression, a fetch request): Foundation's archiver on
/// Linux writes the Swift class name, so ``ArchivedObjectFixture/retagged(_:)`` puts the class names given
/// here in place afterwards.
final class MomFixtureObject: NSObject, NSCoding {
    /// The class, then its superclasses (`NSObject` is added).
    var classNames: [String]
    var objects: [String: NSObject] = [:]
    var integers: [String: Int] = [:]
    var booleans: [String: Bool] = [:]

    init(_ classNames: [String], objects: [String: NSObject] = [:], integers: [String: Int] = [:]) {
        self.classNames = classNames
        self.objects = objects
        self.integers = integers
    }

    func encode(with coder: NSCoder) {
        coder.encode(classNames.joined(separator: ","), forKey: ArchivedObjectFixture.classKey)
        for (key, value) in objects { coder.encode(value, forKey: key) }
        for (key, value) in integers { coder.encode(value, forKey: key) }
        for (key, value) in booleans { coder.encode(value, forKey: key) }
    }

    required init?(coder: NSCoder) { nil }
}

/// Archived predicates and expressions as Foundation's coders write them (the keys docs/INTEROP.md lists),
/// made from parsed ones: the naive writer the reader is checked against.
enum ArchivedObjectFixture {
    /// The key a fixture object names its classes under, until ``retagged(_:)`` makes them its class.
    static let classKey = "FixtureClassNames"

    /// `data` with every object that names its classes under ``classKey`` made an instance of those classes.
    static func retagged(_ data: Data) -> Data {
        guard case .dictionary(var archive) = try! BinaryPropertyListReader.read(data),
              case .array(var objects)? = archive["$objects"] else { preconditionFailure("not an archive") }
        for index in objects.indices {
            guard case .dictionary(var fields) = objects[index], let tag = fields.removeValue(forKey: classKey),
                  let uid = tag.uid, let names = objects[Int(uid)].string?.split(separator: ",").map(String.init) else { continue }
            objects.append(.dictionary(["$classname": .string(names[0]),
                                        "$classes": .array((names + ["NSObject"]).map { .string($0) })]))
            fields["$class"] = .uid(UInt64(objects.count - 1))
            objects[index] = .dictionary(fields)
        }
        archive["$objects"] = .array(objects)
        return BinaryPropertyListWriter.write(.dictionary(archive))
    }

    /// `root` archived alone, retagged.
    static func archive(_ root: NSObject) -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.outputFormat = .binary
        archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        return retagged(archiver.encodedData)
    }

    /// The operator classes Foundation archives for each operator.
    private static func operatorClass(_ op: QueryComparison.Operator) -> String {
        switch op {
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return "NSComparisonPredicateOperator"
        case .equal, .notEqual: return "NSEqualityPredicateOperator"
        case .matches: return "NSMatchingPredicateOperator"
        case .like: return "NSLikePredicateOperator"
        case .beginsWith, .endsWith: return "NSSubstringPredicateOperator"
        case .in, .contains: return "NSInPredicateOperator"
        case .between: return "NSBetweenPredicateOperator"
        }
    }

    /// `predicate` as archived objects; nil when it uses something the writer has no form for (NONE, aggregates,
    /// subqueries, boolean and date constants…).
    static func object(_ predicate: QueryPredicate) -> MomFixtureObject? {
        switch predicate {
        case .constant(let value):
            return MomFixtureObject([value ? "NSTruePredicate" : "NSFalsePredicate", "NSPredicate"])
        case .and(let parts), .or(let parts):
            let subpredicates = parts.compactMap(object)
            guard subpredicates.count == parts.count else { return nil }
            if case .and = predicate, parts.isEmpty { return nil }
            return MomFixtureObject(["NSCompoundPredicate", "NSPredicate"],
                                    objects: ["NSSubpredicates": NSArray(array: subpredicates)],
                                    integers: ["NSCompoundPredicateType": { if case .and = predicate { 1 } else { 2 } }()])
        case .not(let inner):
            guard let sub = object(inner) else { return nil }
            return MomFixtureObject(["NSCompoundPredicate", "NSPredicate"], objects: ["NSSubpredicates": NSArray(array: [sub])],
                                    integers: ["NSCompoundPredicateType": 0])
        case .comparison(let comparison):
            let modifiers: [QueryComparison.Modifier: Int] = [.direct: 0, .all: 1, .any: 2]
            guard let modifier = modifiers[comparison.modifier],
                  let type = ArchivedPredicate.operatorSymbols.first(where: { $0.value == comparison.op.rawValue })?.key,
                  let left = expression(comparison.lhs), let right = expression(comparison.rhs) else { return nil }
            var integers = ["NSOperatorType": Int(type), "NSModifier": modifier]
            if !comparison.options.isEmpty { integers["NSFlags"] = comparison.options.rawValue }
            let predicateOperator = MomFixtureObject([operatorClass(comparison.op), "NSPredicateOperator"], integers: integers)
            return MomFixtureObject(["NSComparisonPredicate", "NSPredicate"],
                                    objects: ["NSLeftExpression": left, "NSRightExpression": right,
                                              "NSPredicateOperator": predicateOperator])
        }
    }

    /// `expression` as archived objects; nil for kinds the writer has no form for.
    static func expression(_ expression: QueryExpression) -> MomFixtureObject? {
        switch expression {
        case .constant(let value):
            var objects: [String: NSObject] = [:]
            switch value {
            case .null: break
            case .string(let text): objects["NSConstantValue"] = NSString(string: text)
            case .int(let number): objects["NSConstantValue"] = NSNumber(value: number)
            case .double(let number): objects["NSConstantValue"] = NSNumber(value: number)
            default: return nil
            }
            return MomFixtureObject(["NSConstantValueExpression", "NSExpression"], objects: objects, integers: ["NSExpressionType": 0])
        case .evaluatedObject:
            return MomFixtureObject(["NSSelfExpression", "NSExpression"], integers: ["NSExpressionType": 1])
        case .variable(let name):
            return MomFixtureObject(["NSVariableExpression", "NSExpression"], objects: ["NSVariable": NSString(string: name)],
                                    integers: ["NSExpressionType": 2])
        case .keyPath(let base, let components):
            guard let operand = self.expression(base) else { return nil }
            let path = MomFixtureObject(["NSKeyPathSpecifierExpression", "NSExpression"],
                                        objects: ["NSKeyPath": NSString(string: components.joined(separator: "."))],
                                        integers: ["NSExpressionType": 10])
            return MomFixtureObject(["NSKeyPathExpression", "NSFunctionExpression", "NSExpression"],
                                    objects: ["NSOperand": operand, "NSSelectorName": NSString(string: "valueForKeyPath:"),
                                              "NSArguments": NSArray(array: [path])],
                                    integers: ["NSExpressionType": 3])
        case .function(let function, let arguments):
            return builtIn(function.rawValue, arguments)
        case .arithmetic(let op, let left, let right):
            guard let function = QueryFunction.allCases.first(where: { $0.arithmeticOperator == op }) else { return nil }
            return builtIn(function.rawValue, [left, right])
        default:
            return nil
        }
    }

    /// A built-in function: its operand is a constant (the class holding the functions).
    private static func builtIn(_ selector: String, _ arguments: [QueryExpression]) -> MomFixtureObject? {
        let archived = arguments.compactMap(expression)
        guard archived.count == arguments.count else { return nil }
        let holder = MomFixtureObject(["NSConstantValueExpression", "NSExpression"],
                                      objects: ["NSConstantValue": NSString(string: "_NSPredicateUtilities")],
                                      integers: ["NSExpressionType": 0])
        return MomFixtureObject(["NSFunctionExpression", "NSExpression"],
                                objects: ["NSOperand": holder, "NSSelectorName": NSString(string: selector),
                                          "NSArguments": NSArray(array: archived)],
                                integers: ["NSExpressionType": 4])
    }

    /// An archived `NSFetchRequest` for `entity` (an archived entity or its name).
    static func fetchRequest(entity: NSObject, predicate: QueryPredicate?, sort: [QuerySortDescriptor] = [],
                             integers: [String: Int] = [:]) -> MomFixtureObject {
        var objects: [String: NSObject] = ["NSEntity": entity]
        if let predicate { objects["NSPredicate"] = object(predicate)! }
        if !sort.isEmpty {
            objects["NSSortDescriptors"] = NSArray(array: sort.map { descriptor in
                let archived = MomFixtureObject(["NSSortDescriptor"], objects: ["NSKey": NSString(string: descriptor.key),
                                                                             "NSSelector": NSString(string: "compare:")])
                archived.booleans["NSAscending"] = descriptor.ascending
                return archived
            })
        }
        let request = MomFixtureObject(["NSFetchRequest", "NSPersistentStoreRequest"], objects: objects, integers: integers)
        // Core Data's defaults: sub-entities, property values, faults and pending changes included.
        request.booleans["NSHasFetchRequestFlags"] = true
        request.integers["NSFetchRequestFlags"] = request.integers["NSFetchRequestFlags"] ?? 0x1E
        return request
    }
}
