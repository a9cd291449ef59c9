import Foundation
import GRDB

/// The SQL functions and collations compiled predicates call. The store registers them on every
/// connection it opens: `QuerySQLFunctions.register(in: db)`.
///
/// Each one calls the same Swift code as in-memory evaluation, so SQL and memory agree on
/// case/diacritic folding, LIKE, MATCHES, division and sort order. The scalar functions are
/// ``FullLengthSQLFunction``s, so strings with a NUL inside reach them whole.
package enum QuerySQLFunctions {
    /// `ocd_compare(op, flags, lhs, rhs)`: a comparison with `[c]`/`[d]` flags (1 = case, 2 = diacritics),
    /// or a string operator (`BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `IN`, `LIKE`, `MATCHES`).
    static let compare = FullLengthSQLFunction("ocd_compare", argumentCount: 4, pure: true) { arguments in
        guard case .string(let name) = arguments[0].storage, let op = QueryComparison.Operator(rawValue: name) else {
            throw QueryLanguageError.semantic("ocd_compare: unknown operator")
        }
        let flags = Int64.fromDatabaseValue(arguments[1]) ?? 0
        let options = QueryComparison.Options(rawValue: Int(truncatingIfNeeded: flags) & 3)
        return try QueryValueSemantics.compare(op, queryValue(arguments[2]), queryValue(arguments[3]), options)
    }

    /// `ocd_divide(a, b)`: floating-point division, NULL for a zero divisor (as in memory).
    static let divide = FullLengthSQLFunction("ocd_divide", argumentCount: 2, pure: true) { arguments in
        databaseValue(QueryArithmetic.apply(.divide, swiftNumber(arguments[0]), swiftNumber(arguments[1])))
    }

    /// `ocd_power(a, b)`.
    static let power = FullLengthSQLFunction("ocd_power", argumentCount: 2, pure: true) { arguments in
        databaseValue(QueryArithmetic.apply(.power, swiftNumber(arguments[0]), swiftNumber(arguments[1])))
    }

    /// `ocd_abs(x)`: never fails on Int64.min, unlike SQLite's abs.
    static let absolute = FullLengthSQLFunction("ocd_abs", argumentCount: 1, pure: true) { arguments in
        guard let number = QueryValueSemantics.number(queryValue(arguments[0])) else { return nil }
        return databaseValue(QueryArithmetic.absolute(number))
    }

    /// `ocd_cast(x, 'NSDate')` and the other CAST targets.
    static let cast = FullLengthSQLFunction("ocd_cast", argumentCount: 2, pure: true) { arguments in
        guard case .string(let name) = arguments[1].storage, let type = QueryCastType(rawValue: name) else {
            throw QueryLanguageError.semantic("ocd_cast: unknown type")
        }
        return try QueryCast.cast(queryValue(arguments[0]), to: type).boundValue.databaseValue
    }

    /// `ocd_function('sqrt:', x)`, `ocd_function('modulus:by:', a, b)`…: the ``QueryFunction`` named by the
    /// first argument, on the others, computed by ``QueryFunctions`` exactly as in memory.
    static let function = FullLengthSQLFunction("ocd_function", argumentCount: nil, pure: true) { arguments in
        guard let first = arguments.first, case .string(let name) = first.storage,
              let function = QueryFunction(rawValue: name), function != .random, function != .now else {
            throw QueryLanguageError.semantic("ocd_function: unknown function")
        }
        let values = arguments.dropFirst().map { queryValue($0).swiftValue }
        return databaseValue(try QueryFunctions.apply(function, Array(values)))
    }

    /// `ocd_random()`: `random()`, a number in [0, 1) (not pure: SQLite calls it for each row).
    static let random = FullLengthSQLFunction("ocd_random", argumentCount: 0, pure: false) { _ in
        Double.random(in: 0..<1)
    }

    /// `ocd_median(x)`: the aggregate for `median:`, over the numbers among the values (as memory does).
    static let median = DatabaseFunction("ocd_median", argumentCount: 1, pure: true, aggregate: MedianAggregate.self)

    struct MedianAggregate: DatabaseAggregate {
        var values: [Any?] = []
        init() {}
        mutating func step(_ dbValues: [DatabaseValue]) {
            switch dbValues[0].storage {
            case .int64(let v): values.append(v)
            case .double(let v): values.append(v)
            default: break
            }
        }
        func finalize() throws -> (any DatabaseValueConvertible)? {
            try QueryArithmetic.aggregate(.median, values) as? Double
        }
    }

    static let collations: [DatabaseCollation] = StringComparison.allCases.compactMap { comparator in
        comparator.collationName.map { name in
            DatabaseCollation(name) { QuerySortOrder.compareStrings($0, $1, comparator) }
        }
    }

    static func register(in db: Database) {
        // Text reaches these with its full length (a NUL inside included); the median sees numbers only.
        for item in [compare, divide, power, absolute, cast, function, random] { item.install(in: db) }
        db.add(function: median)
        for collation in collations { db.add(collation: collation) }
    }

    // MARK: Conversions

    static func queryValue(_ value: DatabaseValue) -> QueryValue {
        switch value.storage {
        case .null: return .null
        case .int64(let v): return .int(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .blob(let v): return .data(v)
        }
    }

    private static func swiftNumber(_ value: DatabaseValue) -> Any? {
        switch value.storage {
        case .int64(let v): return v
        case .double(let v): return v
        default: return nil
        }
    }

    static func databaseValue(_ value: Any?) -> DatabaseValue {
        guard let converted = QueryValue.convert(value), let bound = try? converted.boundValue else { return .null }
        return bound.databaseValue
    }
}
