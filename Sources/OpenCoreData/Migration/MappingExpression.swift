import Foundation

/// The value a ``PropertyMapping`` gives a destination property (Core Data's `valueExpression`).
///
/// Written as Core Data writes it in a mapping model:
/// - any expression of the query language over `$source`, the source object: `$source.name`,
///   `$source.price * 100`, `$source.owner.name`, `FUNCTION($source.name, "uppercaseString")`;
/// - `FUNCTION($source, "valueForKey:", "name")`, the same as `$source.name`;
/// - `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "CarToCar", $source.cars)`:
///   the destination objects an entity mapping made from the source objects (what relationship mappings use);
/// - `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)`:
///   the destination objects made from the source objects a relationship of the source entity holds, by
///   whichever mapping made each (what Xcode writes where several mappings read the relationship's
///   entity and its sub-entities);
///
/// - `FUNCTION($entityPolicy, "centsFromDollars:", $source.price)`: a function of the entity mapping's
///   ``EntityMigrationPolicy`` (``EntityMigrationPolicy/callFunction(_:arguments:manager:)``), given the
///   values of its arguments.
///
/// Any other function of `$manager`, and `$entityPolicy` anywhere but as the receiver of the whole
/// expression, is refused by name (``MigrationError/unsupportedMapping(entityMapping:reason:)``).
///
/// ```swift
/// let price = try MappingExpression(format: "$source.price * 100")
/// let owner = try MappingExpression(format: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#)
/// ```
public enum MappingExpression: Sendable, Hashable, CustomStringConvertible {
    /// A value computed from the source object, bound to `$source`.
    case value(QueryExpression)
    /// The destination objects the entity mapping named `entityMappingName` made from the source objects
    /// `sourceInstances` gives (one object, a collection, or nil). An empty name (what a generated
    /// relationship mapping without `sourcemappingname` gets) means the mapping that made each object.
    case destinationInstances(entityMappingName: String, sourceInstances: QueryExpression)
    /// The destination objects made from the source objects `sourceInstances` gives, which the source
    /// entity's relationship `relationshipName` holds: each by whichever entity mapping made it (Core
    /// Data's `destinationInstancesForSourceRelationshipNamed:sourceInstances:`).
    case destinationInstancesForSourceRelationship(relationshipName: String, sourceInstances: QueryExpression)
    /// A function of the entity mapping's migration policy (`FUNCTION($entityPolicy, "selector", arguments…)`),
    /// called with the values of `arguments` evaluated on the source object.
    case policyFunction(selector: String, arguments: [QueryExpression])

    static let destinationInstancesSelector = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    static let sourceRelationshipSelector = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"

    /// Parses a value expression as a mapping model writes it.
    ///
    /// - Throws: ``MigrationError/unsupportedMapping(entityMapping:reason:)`` naming a `$manager` function that
    ///   is not supported, and ``QueryLanguageError`` when the text does not parse.
    public init(format: String) throws {
        let text = format.trimmingCharacters(in: .whitespacesAndNewlines)
        if let call = MappingCall(text), call.name == "FUNCTION", call.arguments.count >= 2 {
            let receiver = call.arguments[0]
            let selector = try MappingCall.stringLiteral(call.arguments[1], what: "a FUNCTION selector")
            if receiver == "$manager" {
                guard selector == Self.destinationInstancesSelector || selector == Self.sourceRelationshipSelector else {
                    throw MigrationError.unsupportedMapping(
                        entityMapping: "?", reason: "the migration manager function '\(selector)' is not supported")
                }
                let named = selector == Self.destinationInstancesSelector ? "an entity mapping name" : "a relationship name"
                guard call.arguments.count == 4 else {
                    throw QueryLanguageError.semantic("'\(selector)' takes \(named) and the source instances")
                }
                let name = try MappingCall.stringLiteral(call.arguments[2], what: named)
                let sourceInstances = try QueryExpression(format: call.arguments[3])
                self = selector == Self.destinationInstancesSelector
                    ? .destinationInstances(entityMappingName: name, sourceInstances: sourceInstances)
                    : .destinationInstancesForSourceRelationship(relationshipName: name, sourceInstances: sourceInstances)
                return
            }
            if receiver == "$entityPolicy" {
                self = .policyFunction(selector: selector,
                                       arguments: try call.arguments.dropFirst(2).map { try QueryExpression(format: $0) })
                return
            }
            if selector == "valueForKey:" {
                guard call.arguments.count == 3 else { throw QueryLanguageError.semantic("'valueForKey:' takes one key") }
                let key = try MappingCall.stringLiteral(call.arguments[2], what: "a key")
                let base = try QueryExpression(format: receiver)
                self = .value(QueryParser.appending(key, to: base))
                return
            }
        }
        if text.contains("$manager") {
            // Anything else that reaches the migration manager (nested in arithmetic, another selector)
            // needs functions the query language does not have: say so rather than fail on `$manager` later.
            throw MigrationError.unsupportedMapping(
                entityMapping: "?", reason: "the expression '\(text)' uses the migration manager in a way that is not supported")
        }
        if text.contains("$entityPolicy") {
            throw MigrationError.unsupportedMapping(
                entityMapping: "?", reason: "the expression '\(text)' uses the entity policy other than as FUNCTION($entityPolicy, …) around the whole expression")
        }
        self = .value(try QueryExpression(format: text))
    }

    /// The expression in the form ``init(format:)`` reads.
    public var format: String {
        switch self {
        case .value(let expression):
            return expression.expressionFormat
        case .destinationInstances(let name, let sourceInstances):
            return "FUNCTION($manager, \"\(Self.destinationInstancesSelector)\", \(QueryFormatter.format(.constant(.string(name)))), \(sourceInstances.expressionFormat))"
        case .destinationInstancesForSourceRelationship(let name, let sourceInstances):
            return "FUNCTION($manager, \"\(Self.sourceRelationshipSelector)\", \(QueryFormatter.format(.constant(.string(name)))), \(sourceInstances.expressionFormat))"
        case .policyFunction(let selector, let arguments):
            let parts = [QueryFormatter.format(.constant(.string(selector)))] + arguments.map(\.expressionFormat)
            return "FUNCTION($entityPolicy, " + parts.joined(separator: ", ") + ")"
        }
    }

    public var description: String { format }

    /// The key path read from `$source` (`$source.owner.name` gives `["owner", "name"]`), for a plain value
    /// or the source instances of a relationship; nil for any other expression.
    var sourceKeyPath: [String]? {
        let read: QueryExpression
        switch self {
        case .value(let expression): read = expression
        case .destinationInstances(_, let sourceInstances), .destinationInstancesForSourceRelationship(_, let sourceInstances):
            read = sourceInstances
        case .policyFunction: return nil
        }
        guard case .keyPath(.variable("source"), let components) = read else { return nil }
        return components
    }
}

/// The objects an entity mapping reads: Core Data's source expression
/// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "year > 2000"), $manager.sourceContext, NO)`,
/// or just an entity name and a filter predicate.
public struct MappingSourceFetch: Sendable, Hashable {
    /// The source entity whose objects (not those of its sub-entities) are read.
    public var entityName: String
    /// Which of them the mapping applies to (nil: all).
    public var predicate: QueryPredicate?

    /// A fetch of `entityName`'s objects matching `predicate`.
    public init(entityName: String, predicate: QueryPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    static let fetchRequestSelector = "fetchRequestForSourceEntityNamed:predicateString:"

    /// Parses Core Data's `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", entity, predicate), $manager.sourceContext, NO)`
    /// (the context and the count-only flag may be left out).
    ///
    /// - Throws: ``MigrationError/unsupportedMapping(entityMapping:reason:)`` for a source expression of any
    ///   other shape (a fetch from another context or counting only included, naming what it found),
    ///   ``QueryLanguageError`` when the predicate does not parse.
    public init(format: String) throws {
        let text = format.trimmingCharacters(in: .whitespacesAndNewlines)
        func unsupported(_ reason: String) -> MigrationError {
            .unsupportedMapping(entityMapping: "?", reason: "the source expression '\(text)' \(reason)")
        }
        guard let fetch = MappingCall(text), fetch.name == "FETCH", (1...3).contains(fetch.arguments.count),
              let request = MappingCall(fetch.arguments[0]), request.name == "FUNCTION", request.arguments.count == 4,
              request.arguments[0] == "$manager",
              try MappingCall.stringLiteral(request.arguments[1], what: "a FUNCTION selector") == Self.fetchRequestSelector else {
            throw unsupported("is not a fetch through '\(Self.fetchRequestSelector)'")
        }
        // The migration reads the source store: a fetch from another context would read something else.
        if fetch.arguments.count >= 2, fetch.arguments[1].filter({ !$0.isWhitespace }) != "$manager.sourceContext" {
            throw unsupported("fetches from \(fetch.arguments[1]), not from $manager.sourceContext")
        }
        if fetch.arguments.count == 3, !["NO", "FALSE", "0"].contains(fetch.arguments[2].uppercased()) {
            throw unsupported("counts only (\(fetch.arguments[2])); a source expression fetches objects")
        }
        let entity = try MappingCall.stringLiteral(request.arguments[2], what: "an entity name")
        let predicate = try MappingCall.stringLiteral(request.arguments[3], what: "a predicate string")
        self.init(entityName: entity, predicate: try Self.predicate(predicate))
    }

    /// A filter predicate string as a mapping model holds it; empty and `TRUEPREDICATE` mean none.
    ///
    /// - Throws: ``QueryLanguageError`` when it does not parse.
    static func predicate(_ text: String?) throws -> QueryPredicate? {
        guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty,
              text.uppercased() != "TRUEPREDICATE" else { return nil }
        return try QueryPredicate(format: text)
    }
}

/// `NAME(argument, argument, …)` split at its top-level commas, for the few call shapes mapping models
/// write around the query language (`FUNCTION($manager, …)`, `FETCH(…)`), whose arguments are then parsed
/// as query language text.
struct MappingCall {
    /// The word before the parenthesis, upper-cased.
    let name: String
    /// Each argument's text, trimmed.
    let arguments: [String]

    /// Nil when `text` is not one call spanning the whole text.
    init?(_ text: String) {
        let characters = Array(text)
        guard let open = characters.firstIndex(of: "("), characters.last == ")" else { return nil }
        let word = String(characters[..<open]).trimmingCharacters(in: .whitespaces)
        guard !word.isEmpty, word.allSatisfy({ $0.isLetter }) else { return nil }
        var arguments: [String] = []
        var depth = 0
        var quote: Character?
        var escaped = false
        var current = ""
        for (offset, character) in characters.enumerated().dropFirst(open + 1) {
            if let open = quote {
                current.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == open { quote = nil }
                continue
            }
            switch character {
            case "\"", "'":
                quote = character
                current.append(character)
            case "(", "{", "[":
                depth += 1
                current.append(character)
            case ")", "}", "]":
                if depth == 0 {
                    // The closing parenthesis of the call must be the last character.
                    guard character == ")", offset == characters.count - 1 else { return nil }
                    arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                    self.name = word.uppercased()
                    self.arguments = arguments
                    return
                }
                depth -= 1
                current.append(character)
            case "," where depth == 0:
                arguments.append(current.trimmingCharacters(in: .whitespacesAndNewlines))
                current = ""
            default:
                current.append(character)
            }
        }
        return nil
    }

    /// The string a quoted literal argument holds.
    ///
    /// - Throws: ``QueryLanguageError`` when the argument is not one string literal.
    static func stringLiteral(_ text: String, what: String) throws -> String {
        guard case .constant(.string(let value)) = try QueryExpression(format: text) else {
            throw QueryLanguageError.semantic("expected \(what) as a quoted string, found \(text)")
        }
        return value
    }
}
