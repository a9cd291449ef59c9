import Foundation

/// How strings are ordered by a ``QuerySortDescriptor``: Foundation's comparison selectors, ordering
/// accented and non-Latin text as Foundation's string comparisons do, in SQL and in memory alike.
public enum StringComparison: String, Sendable, Hashable, CaseIterable {
    /// `compare:`: by Unicode scalar values (SQLite's BINARY order).
    case compare
    /// `caseInsensitiveCompare:`: canonically decomposed and case folded ("É" sorts with "E", "ß" equals
    /// "ss"), then by scalar; not localized, so "Ω" sorts after "Z".
    case caseInsensitiveCompare
    /// `localizedCompare:`: the Unicode collation's root order: letters, then diacritics, then case
    /// (lowercase first).
    case localizedCompare
    /// `localizedCaseInsensitiveCompare:`: as ``localizedCompare`` without the case level.
    case localizedCaseInsensitiveCompare
    /// `localizedStandardCompare:`: as ``localizedCompare``, and runs of digits compare by value ("file2"
    /// before "file10"), as Finder sorts.
    case localizedStandardCompare

    /// The Objective-C selector Core Data's sort descriptors name this comparison by
    /// ("localizedCaseInsensitiveCompare:").
    public var selector: String { rawValue + ":" }

    /// The comparison a selector names ("caseInsensitiveCompare:"); nil for a selector it is not.
    public init?(selector: String) {
        guard selector.hasSuffix(":"), let comparison = StringComparison(rawValue: String(selector.dropLast())) else {
            return nil
        }
        self = comparison
    }

    /// The SQLite collation the store registers for this comparison (nil: the built-in BINARY order).
    var collationName: String? {
        switch self {
        case .compare: return nil
        case .caseInsensitiveCompare: return "OCD_CASE_INSENSITIVE"
        case .localizedCompare: return "OCD_LOCALIZED"
        case .localizedCaseInsensitiveCompare: return "OCD_LOCALIZED_CASE_INSENSITIVE"
        case .localizedStandardCompare: return "OCD_LOCALIZED_STANDARD"
        }
    }
}

/// How to order objects by the value at a key path (Core Data's NSSortDescriptor).
///
/// In memory and in SQL alike, nil sorts first when ascending, then numbers (dates and booleans among
/// them), then strings, then data.
///
/// ```swift
/// let byName = QuerySortDescriptor(key: "name", comparator: .localizedStandardCompare)
/// let sorted = try people.sorted { try byName.compare($0, $1) == .orderedAscending }
/// ```
public struct QuerySortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The key path whose values are compared.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How strings are compared (other values ignore it).
    public var comparator: StringComparison

    /// Orders by the values at `key`, strings compared by `comparator`.
    public init(key: String, ascending: Bool = true, comparator: StringComparison = .compare) {
        self.key = key
        self.ascending = ascending
        self.comparator = comparator
    }

    /// Core Data's `NSSortDescriptor(key:ascending:selector:)`: `selector` is one of the comparison
    /// selectors of ``StringComparison`` ("localizedCaseInsensitiveCompare:" and the others).
    ///
    /// - Throws: ``QueryLanguageError`` naming the selector when it is not one of them.
    public init(key: String, ascending: Bool = true, selector: String) throws {
        guard let comparator = StringComparison(selector: selector) else {
            let known = StringComparison.allCases.map(\.selector).joined(separator: ", ")
            throw QueryLanguageError.semantic("sort descriptor for '\(key)': unknown comparison selector '\(selector)' (known: \(known))")
        }
        self.init(key: key, ascending: ascending, comparator: comparator)
    }

    /// The same key and comparator, the other direction.
    public var reversed: QuerySortDescriptor {
        QuerySortDescriptor(key: key, ascending: !ascending, comparator: comparator)
    }

    /// Orders two values already read at ``key`` (for callers that keep sort keys, not objects).
    ///
    /// - Throws: nothing in practice: a value the query language cannot hold (a dictionary, an arbitrary
    ///   object) is ordered as an opaque value, not refused.
    public func compareValues(_ a: Any?, _ b: Any?) throws -> ComparisonResult {
        let order = QuerySortOrder.compare(try QueryEvaluator.value(a), try QueryEvaluator.value(b), comparator: comparator)
        guard !ascending else { return order }
        switch order {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Orders two objects (managed objects or dictionaries) by their values at ``key``.
    ///
    /// - Throws: ``QueryLanguageError`` when ``key`` uses a collection operator wrongly (an unknown `@`
    ///   operator, a union operator with no key after it); what the objects' ``KeyValueCoding/value(forKey:)``
    ///   throws, for a managed object ``ObjectGraphError/unknownKey(entity:key:)`` when a key is not a property
    ///   of its entity, ``ObjectGraphError/objectNotFound(_:)`` or ``StoreError`` when a fault cannot be
    ///   filled.
    public func compare(_ a: Any?, _ b: Any?) throws -> ComparisonResult {
        let components = key.split(separator: ".").map(String.init)
        let left = try QueryEvaluator.value(QueryEvaluator.walk(a, components[...]))
        let right = try QueryEvaluator.value(QueryEvaluator.walk(b, components[...]))
        let order = QuerySortOrder.compare(left, right, comparator: comparator)
        guard !ascending else { return order }
        switch order {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// The key, the direction and the comparator, for logs and debugging.
    public var description: String {
        "QuerySortDescriptor(\(key) \(ascending ? "ascending" : "descending") \(comparator.rawValue))"
    }
}

/// The total order sorting uses, mirroring SQLite: NULL, then numbers, then text, then blobs.
enum QuerySortOrder {
    private static func rank(_ value: QueryValue) -> Int {
        if value == .null { return 0 }
        if QueryValueSemantics.number(value) != nil { return 1 }
        if case .objectID = value { return 1 }
        if QueryValueSemantics.text(value) != nil { return 2 }
        if QueryValueSemantics.bytes(value) != nil { return 3 }
        return 4
    }

    static func compare(_ a: QueryValue, _ b: QueryValue, comparator: StringComparison) -> ComparisonResult {
        let rankA = rank(a), rankB = rank(b)
        if rankA != rankB { return rankA < rankB ? .orderedAscending : .orderedDescending }
        switch (a, b) {
        case (.objectID(let x), .objectID(let y)): return compareIntegers(x.primaryKey, y.primaryKey)
        case (.objectID(let x), _): return QueryValueSemantics.order(.int(x.primaryKey), b) ?? .orderedSame
        case (_, .objectID(let y)): return QueryValueSemantics.order(a, .int(y.primaryKey)) ?? .orderedSame
        default: break
        }
        if let x = QueryValueSemantics.text(a), let y = QueryValueSemantics.text(b) {
            return compareStrings(x, y, comparator)
        }
        return QueryValueSemantics.order(a, b) ?? .orderedSame
    }

    private static func compareIntegers(_ a: Int64, _ b: Int64) -> ComparisonResult {
        a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
    }

    /// The string order of each comparator; the SQL collations call this too. Strings the comparison
    /// calls equal are ordered by their scalars, so that a sort comes out the same every time.
    static func compareStrings(_ a: String, _ b: String, _ comparator: StringComparison) -> ComparisonResult {
        let order: ComparisonResult
        switch comparator {
        case .compare: return QueryValueSemantics.compareScalars(a, b)
        case .caseInsensitiveCompare: order = StringCollation.caseInsensitive(a, b)
        case .localizedCompare: order = StringCollation.localized(a, b, caseSensitive: true, numeric: false)
        case .localizedCaseInsensitiveCompare: order = StringCollation.localized(a, b, caseSensitive: false, numeric: false)
        case .localizedStandardCompare: order = StringCollation.localized(a, b, caseSensitive: true, numeric: true)
        }
        return order != .orderedSame ? order : QueryValueSemantics.compareScalars(a, b)
    }
}
