import Foundation

/// Reads an `NSPredicate` archived in a compiled model (an attribute's validation rules, a fetched property's
/// fetch request) as its format text, parsed by ``QueryPredicate/init(format:_:)``, so archived and written
/// predicates mean the same. Read with ``KeyedArchive``, which builds no classes.
///
/// The keys are those of Foundation's coders (published decompilations and reimplementations of
/// Foundation name them alike):
///
/// | class | keys | text |
/// |---|---|---|
/// | `NSTruePredicate`, `NSFalsePredicate` | | `TRUEPREDICATE`, `FALSEPREDICATE` |
/// | `NSCompoundPredicate` | `NSCompoundPredicateType` (0 not, 1 and, 2 or), `NSSubpredicates` | `NOT (a)`, `(a) AND (b)`, `(a) OR (b)` |
/// | `NSComparisonPredicate` | `NSLeftExpression`, `NSRightExpression`, `NSPredicateOperator` | `left op right` |
/// | `NS…PredicateOperator` | `NSOperatorType` (`NSPredicateOperatorType`), `NSModifier` (0 direct, 1 all, 2 any), `NSFlags` (string operators: 1 `c`, 2 `d`, 4 `n`, 8 `l`) | `ANY left BEGINSWITH[cd] right` |
///
/// The expressions are read by ``ArchivedMappingExpression`` (constants, `SELF`, variables, key paths and
/// functions). Any other class (a custom selector, a block, aggregate or subquery expressions) is refused
/// by its name.
enum ArchivedPredicate {
    /// Why an archived predicate was not read; `reason` names the class or key at fault.
    struct Failure: Error, Equatable, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Predicates nested deeper than this are refused (validation rules and fetch predicates are shallow).
    static let maximumDepth = 32

    /// The `NSPredicateOperatorType` values, as the format text spells them.
    static let operatorSymbols: [Int64: String] = [
        0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE", 8: "BEGINSWITH",
        9: "ENDSWITH", 10: "IN", 99: "CONTAINS", 100: "BETWEEN",
    ]

    /// The archived predicate at `reference`, parsed. `walk` bounds the reading: pass one walk to every read
    /// of an archive, so that they share its allowance.
    ///
    /// - Throws: ``Failure`` when the archive part is damaged, holds a class or key not read, its text
    ///   does not parse, or the walk's allowance is spent.
    static func predicate(in archive: KeyedArchive, at reference: KeyedArchive.Reference,
                          walk: inout KeyedArchive.Walk) throws -> QueryPredicate {
        let text = try format(in: archive, at: reference, walk: &walk)
        do {
            return try QueryPredicate(format: text)
        } catch {
            throw Failure(reason: "'\(text)' does not parse: \(error)")
        }
    }

    /// The format text of the archived predicate at `reference`.
    ///
    /// - Throws: see ``predicate(in:at:walk:)``.
    static func format(in archive: KeyedArchive, at reference: KeyedArchive.Reference,
                       walk: inout KeyedArchive.Walk) throws -> String {
        try readable {
            // Resolving first bounds everything below: no cycles, a limited depth, and at most the walk's
            // visit allowance of nodes, so shared references cannot expand into an enormous text.
            _ = try archive.resolved(reference, within: &walk)
            return try text(reference, in: archive, depth: 0)
        }
    }

    /// The text of the archived expression at `reference` (a derived attribute's), bounded as predicates are.
    ///
    /// - Throws: ``Failure`` as ``format(in:at:)`` does.
    static func expressionFormat(in archive: KeyedArchive, at reference: KeyedArchive.Reference,
                                 walk: inout KeyedArchive.Walk) throws -> String {
        try readable {
            _ = try archive.resolved(reference, within: &walk)
            return try ArchivedMappingExpression.format(in: archive, at: reference)
        }
    }

    /// `body`, with the archive reader's and the expression reader's failures as ours.
    private static func readable<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as KeyedArchive.Failure {
            throw Failure(reason: "the archive cannot be read: \(failure.reason)")
        } catch let failure as ArchivedMappingExpression.Failure {
            throw Failure(reason: failure.reason)
        }
    }

    private static func text(_ reference: KeyedArchive.Reference, in archive: KeyedArchive, depth: Int) throws -> String {
        guard depth <= maximumDepth else {
            throw Failure(reason: "the predicate is nested more than \(maximumDepth) deep")
        }
        guard let instance = try archive.instance(reference) else {
            throw Failure(reason: "\(reference) is nil where a predicate was expected")
        }
        if instance.isKind(of: "NSTruePredicate") { return "TRUEPREDICATE" }
        if instance.isKind(of: "NSFalsePredicate") { return "FALSEPREDICATE" }
        if instance.isKind(of: "NSCompoundPredicate") {
            let parts = try archive.elements(archive.reference("NSSubpredicates", of: reference)).map {
                "(" + (try text($0, in: archive, depth: depth + 1)) + ")"
            }
            switch try archive.field("NSCompoundPredicateType", of: reference)?.integer {
            case 0?:
                guard parts.count == 1 else {
                    throw Failure(reason: "a NOT predicate (\(reference)) has \(parts.count) subpredicates, not one")
                }
                return "NOT " + parts[0]
            case 1?: return parts.isEmpty ? "TRUEPREDICATE" : parts.joined(separator: " AND ")
            case 2?: return parts.isEmpty ? "FALSEPREDICATE" : parts.joined(separator: " OR ")
            case let type:
                throw Failure(reason: "the compound predicate \(reference) has NSCompoundPredicateType \(type.map(String.init) ?? "absent"), not 0, 1 or 2")
            }
        }
        if instance.isKind(of: "NSComparisonPredicate") { return try comparison(reference, in: archive) }
        throw Failure(reason: "predicates of class \(instance.className) (\(reference)) are not read (only comparisons, compounds, TRUEPREDICATE and FALSEPREDICATE)")
    }

    /// `[modifier] left op[options] right`.
    private static func comparison(_ reference: KeyedArchive.Reference, in archive: KeyedArchive) throws -> String {
        guard let operatorReference = try archive.reference("NSPredicateOperator", of: reference),
              let predicateOperator = try archive.instance(operatorReference) else {
            throw Failure(reason: "the comparison \(reference) has no NSPredicateOperator")
        }
        let type = predicateOperator.fields["NSOperatorType"]?.integer ?? 0
        guard let symbol = operatorSymbols[type] else {
            throw Failure(reason: "the operator of \(reference) (\(predicateOperator.className)) has NSOperatorType \(type), which is not read (custom selectors are not)")
        }
        let modifiers: [Int64: String] = [0: "", 1: "ALL ", 2: "ANY "]
        let modifierCode = predicateOperator.fields["NSModifier"]?.integer ?? 0
        guard let modifier = modifiers[modifierCode] else {
            throw Failure(reason: "the operator of \(reference) has NSModifier \(modifierCode), not 0, 1 or 2")
        }
        let flags = predicateOperator.fields["NSFlags"]?.integer ?? 0
        guard flags & ~0xF == 0 else {
            throw Failure(reason: "the operator of \(reference) has NSFlags 0x\(String(flags, radix: 16)), beyond [cdnl]")
        }
        for (key, value) in predicateOperator.fields where !["NSOperatorType", "NSModifier", "NSFlags"].contains(key) {
            switch value {
            case .integer(0), .boolean(false): continue
            default: throw Failure(reason: "the operator of \(reference) (\(predicateOperator.className)) holds \(key), which is not read")
            }
        }
        let options = zip([1, 2, 4, 8] as [Int64], ["c", "d", "n", "l"]).filter { flags & $0.0 != 0 }.map(\.1).joined()
        guard let left = try archive.reference("NSLeftExpression", of: reference),
              let right = try archive.reference("NSRightExpression", of: reference) else {
            throw Failure(reason: "the comparison \(reference) lacks NSLeftExpression or NSRightExpression")
        }
        let leftText = try ArchivedMappingExpression.format(in: archive, at: left)
        let rightText = try ArchivedMappingExpression.format(in: archive, at: right)
        return "\(modifier)\(leftText) \(symbol)\(options.isEmpty ? "" : "[\(options)]") \(rightText)"
    }
}
