import Foundation

/// Reads a value expression Xcode archived into a mapping model (`valueexpressiondata`: an `NSExpression`
/// written by `NSKeyedArchiver`, base64 in the XML) as the text ``MappingExpression/init(format:)`` reads,
/// so archived and written expressions run the same way.
///
/// Read with ``KeyedArchive``, which builds no classes. The keys are those `NSExpression`'s coder uses:
///
/// | class | keys | text |
/// |---|---|---|
/// | `NSConstantValueExpression` | `NSConstantValue` (string, number, boolean, nil) | `"text"`, `12`, `YES`, `nil` |
/// | `NSSelfExpression` | | `SELF` |
/// | `NSVariableExpression` | `NSVariable` | `$source`, `$manager`, `$entityPolicy` |
/// | `NSKeyPathExpression` | `NSOperand`, `NSSelectorName` (`valueForKeyPath:`/`valueForKey:`), `NSArguments` (one `NSKeyPathSpecifierExpression` with `NSKeyPath`, or a constant) | `$source.owner.name`, `name` |
/// | `NSFunctionExpression` | `NSOperand`, `NSSelectorName`, `NSArguments` | `FUNCTION(operand, "selector", arguments…)`; with a constant or no operand, the built-in function (`multiply:by:(…)`) |
///
/// An entity mapping's source expression (`sourceexpressiondata`, and `NSSourceExpression` in a compiled
/// `.cdm`) is an `NSFetchRequestExpression`, Core Data's class, whose coder writes `NSFRExpression` (the
/// request: `FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", entity, predicate)`),
/// `NSMOCExpression` (the context: `$manager.sourceContext`) and `NSCountOnlyFlag` (a boolean in place);
/// these keys are those of published decompilations of Core Data's `-[NSFetchRequestExpression
/// encodeWithCoder:]`. It reads as `FETCH(request, context, NO)`, the text ``MappingSourceFetch/init(format:)``
/// reads; an `NSFetchRequestExpression` anywhere else, or any other class as a source expression, is refused.
///
/// Any other expression class (aggregates, subqueries, set, block, conditional expressions) is refused by
/// its class name, as are constants of other types and malformed archives.
enum ArchivedMappingExpression {
    /// Why an archived expression was refused; `reason` names the class or key at fault.
    struct Failure: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Expressions nested deeper than this are refused (a mapping model's are a few levels deep).
    static let maximumDepth = 32

    /// The expression text of `base64`, the content of a `valueexpressiondata` attribute.
    ///
    /// - Throws: ``Failure`` when the text is not base64, the data not a keyed archive, or the archive
    ///   holds an expression kind or constant that is not read.
    static func format(ofBase64 base64: String) throws -> String {
        let compact = base64.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: compact) else { throw Failure(reason: "the data is not base64") }
        return try format(of: data)
    }

    /// The expression text of an archived `NSExpression`.
    ///
    /// - Throws: see ``format(ofBase64:)``.
    static func format(of data: Data) throws -> String {
        let archive = try readArchive(data)
        return try format(in: archive, at: readable { try archive.topObject() })
    }

    /// The text of the value expression at `reference` of an archive holding more (a compiled mapping model).
    ///
    /// - Throws: see ``format(ofBase64:)``.
    static func format(in archive: KeyedArchive, at reference: KeyedArchive.Reference) throws -> String {
        try readable { try Reader(archive: archive).text(reference, depth: 0) }
    }

    /// The source fetch text (`FETCH(…)`) of `base64`, the content of a `sourceexpressiondata` attribute.
    ///
    /// - Throws: ``Failure`` as ``format(ofBase64:)`` does, and when the root is not an
    ///   `NSFetchRequestExpression` (its class is named) or lacks its request or context.
    static func sourceFetchFormat(ofBase64 base64: String) throws -> String {
        let compact = base64.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: compact) else { throw Failure(reason: "the data is not base64") }
        let archive = try readArchive(data)
        return try sourceFetchFormat(in: archive, at: readable { try archive.topObject() })
    }

    /// The source fetch text of the `NSFetchRequestExpression` at `reference`.
    ///
    /// - Throws: see ``sourceFetchFormat(ofBase64:)``.
    static func sourceFetchFormat(in archive: KeyedArchive, at reference: KeyedArchive.Reference) throws -> String {
        try readable { try Reader(archive: archive).fetch(reference) }
    }

    private static func readArchive(_ data: Data) throws -> KeyedArchive {
        try readable { try KeyedArchive(data: data) }
    }

    /// `body`, with the archive reader's failures as ours.
    private static func readable<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as KeyedArchive.Failure {
            throw Failure(reason: "the archive cannot be read: \(failure.reason)")
        }
    }

    private struct Reader {
        let archive: KeyedArchive

        func text(_ reference: KeyedArchive.Reference, depth: Int) throws -> String {
            guard depth <= ArchivedMappingExpression.maximumDepth else {
                throw Failure(reason: "the expression is nested more than \(ArchivedMappingExpression.maximumDepth) deep")
            }
            guard let instance = try archive.instance(reference) else { return "nil" }
            if instance.isKind(of: "NSConstantValueExpression") {
                return try constant(archive.reference("NSConstantValue", of: reference))
            }
            if instance.isKind(of: "NSSelfExpression") { return "SELF" }
            if instance.isKind(of: "NSVariableExpression") {
                guard let name = try archive.string(archive.reference("NSVariable", of: reference)),
                      !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw Failure(reason: "an NSVariableExpression (\(reference)) has no usable NSVariable")
                }
                return "$" + name
            }
            if instance.isKind(of: "NSFunctionExpression") || instance.isKind(of: "NSKeyPathExpression") {
                return try function(reference, instance: instance, depth: depth)
            }
            if instance.isKind(of: "NSFetchRequestExpression") {
                throw Failure(reason: "an NSFetchRequestExpression (\(reference)) is read only as a whole source expression")
            }
            throw Failure(reason: "expressions of class \(instance.className) are not read (only constants, SELF, variables, key paths and functions)")
        }

        /// A source expression: `FETCH(request, context, countOnly)`.
        func fetch(_ reference: KeyedArchive.Reference) throws -> String {
            guard let instance = try archive.instance(reference) else {
                throw Failure(reason: "the source expression is nil, not an NSFetchRequestExpression")
            }
            guard instance.isKind(of: "NSFetchRequestExpression") else {
                throw Failure(reason: "the source expression is an \(instance.className), not an NSFetchRequestExpression (a fetch)")
            }
            guard let request = try archive.reference("NSFRExpression", of: reference) else {
                throw Failure(reason: "the NSFetchRequestExpression (\(reference)) has no NSFRExpression (its fetch request)")
            }
            guard let context = try archive.reference("NSMOCExpression", of: reference) else {
                throw Failure(reason: "the NSFetchRequestExpression (\(reference)) has no NSMOCExpression (its context)")
            }
            let countOnly: Bool
            switch try archive.field("NSCountOnlyFlag", of: reference) {
            case nil: countOnly = false
            case .boolean(let flag)?: countOnly = flag
            case .integer(let number)?: countOnly = number != 0
            default: throw Failure(reason: "the NSCountOnlyFlag of the NSFetchRequestExpression (\(reference)) is not a boolean")
            }
            return "FETCH(\(try text(request, depth: 1)), \(try text(context, depth: 1)), \(countOnly ? "YES" : "NO"))"
        }

        /// A function expression; key paths are functions of `valueForKeyPath:` in the archive.
        private func function(_ reference: KeyedArchive.Reference, instance: KeyedArchive.Instance, depth: Int) throws -> String {
            guard let selector = try archive.string(archive.reference("NSSelectorName", of: reference)), !selector.isEmpty else {
                throw Failure(reason: "the \(instance.className) (\(reference)) has no NSSelectorName")
            }
            let operand = try archive.reference("NSOperand", of: reference)
            let arguments = try archive.elements(archive.reference("NSArguments", of: reference))
            if selector == "valueForKeyPath:" || selector == "valueForKey:" {
                guard arguments.count == 1, let path = try keyPath(arguments[0]) else {
                    throw Failure(reason: "the key path expression (\(reference)) has no key path argument")
                }
                guard path.split(separator: ".", omittingEmptySubsequences: false)
                        .allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "@" } }) else {
                    throw Failure(reason: "the key path '\(path)' (\(reference)) is not a list of keys")
                }
                let base = try operand.map { try text($0, depth: depth + 1) } ?? "SELF"
                if base == "SELF" { return path }
                // A key path on a variable or on another key path: one longer key path.
                let isPath = base.drop(while: { $0 == "$" }).split(separator: ".", omittingEmptySubsequences: false)
                    .allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "@" } }
                guard isPath else {
                    throw Failure(reason: "the key path '\(path)' (\(reference)) is applied to \(base), which is neither a variable nor a key path")
                }
                return base + "." + path
            }
            let argumentTexts = try arguments.map { try text($0, depth: depth + 1) }
            // Built-in functions (`multiply:by:`) have no operand, or a constant one (the class holding them).
            let isBuiltIn = try operand.map { try archive.instance($0)?.isKind(of: "NSConstantValueExpression") ?? true } ?? true
            if isBuiltIn {
                guard let builtIn = QueryFunction(rawValue: selector) else {
                    throw Failure(reason: "the function '\(selector)' (\(reference)) is not one the query language has")
                }
                let parsed = try argumentTexts.map { argument in
                    do { return try QueryExpression(format: argument) } catch {
                        throw Failure(reason: "an argument of '\(selector)' (\(argument)) is not a value the query language reads")
                    }
                }
                // `multiply:by:` is what Xcode archives for `*`: read back as the operator, as the text parses.
                if let operation = builtIn.arithmeticOperator, parsed.count == 2 {
                    return QueryExpression.arithmetic(operation, parsed[0], parsed[1]).expressionFormat
                }
                return QueryExpression.function(builtIn, parsed).expressionFormat
            }
            let receiver = try operand.map { try text($0, depth: depth + 1) } ?? "SELF"
            return "FUNCTION(" + ([receiver, quoted(selector)] + argumentTexts).joined(separator: ", ") + ")"
        }

        /// The key path a key path expression's argument names: an `NSKeyPathSpecifierExpression` or a constant string.
        private func keyPath(_ reference: KeyedArchive.Reference) throws -> String? {
            guard let instance = try archive.instance(reference) else { return nil }
            if instance.isKind(of: "NSKeyPathSpecifierExpression") {
                return try archive.string(archive.reference("NSKeyPath", of: reference))
            }
            if instance.isKind(of: "NSConstantValueExpression") {
                return try archive.string(archive.reference("NSConstantValue", of: reference))
            }
            return nil
        }

        /// A constant's text: strings, numbers and booleans stored in place or as NSString/NSNumber, and nil.
        private func constant(_ reference: KeyedArchive.Reference?) throws -> String {
            guard let reference else { return "nil" }
            let value: QueryValue
            switch try archive.object(reference) {
            case .null: return "nil"
            case .value(.string(let string)): value = .string(string)
            case .value(.integer(let integer)): value = .int(integer)
            case .value(.real(let real)): value = .double(real)
            case .value(.boolean(let flag)): value = .bool(flag)
            case .instance(let instance) where instance.isKind(of: "NSString") || instance.isKind(of: "NSMutableString"):
                value = .string(try archive.string(reference) ?? "")
            case .instance(let instance):
                throw Failure(reason: "constants of class \(instance.className) (\(reference)) are not read")
            case .value:
                throw Failure(reason: "the constant \(reference) is neither a string, a number nor a boolean")
            }
            return QueryFormatter.format(.constant(value))
        }

        private func quoted(_ text: String) -> String { QueryFormatter.format(.constant(.string(text))) }
    }
}
