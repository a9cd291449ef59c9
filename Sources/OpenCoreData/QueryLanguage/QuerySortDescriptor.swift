import Foundation

/// How strings are ordered by a ``QuerySortDescriptor``.
public enum StringComparison: String, Sendable, Hashable, CaseIterable {
    /// By Unicode scalar values (SQLite's BINARY order).
    case compare
    /// Case folded first; ties broken by ``compare``.
    case caseInsensitiveCompare
    /// Case and diacritics folded first (so "émile" sorts with "emile"); ties broken by case, then scalars.
    case localizedCompare
    /// As ``localizedCompare``, and runs of digits compare by value ("file2" before "file10"), as Finder sorts.
    case localizedStandardCompare

    /// The SQLite collation the store registers for this comparison (nil: the built-in BINARY order).
    var collationName: String? {
        switch self {
        case .compare: return nil
        case .caseInsensitiveCompare: return "OCD_CASE_INSENSITIVE"
        case .localizedCompare: return "OCD_LOCALIZED"
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
    public var ascending: Bool
    public var comparator: StringComparison

    public init(key: String, ascending: Bool = true, comparator: StringComparison = .compare) {
        self.key = key
        self.ascending = ascending
        self.comparator = comparator
    }

    /// The same key and comparator, the other direction.
    public var reversed: QuerySortDescriptor {
        QuerySortDescriptor(key: key, ascending: !ascending, comparator: comparator)
    }

    /// Orders two values already read at ``key`` (for callers that keep sort keys, not objects).
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

    /// The string order of each comparator; the SQL collations call this too.
    static func compareStrings(_ a: String, _ b: String, _ comparator: StringComparison) -> ComparisonResult {
        switch comparator {
        case .compare:
            return QueryValueSemantics.compareScalars(a, b)
        case .caseInsensitiveCompare:
            let folded = QueryValueSemantics.compareScalars(QueryValueSemantics.fold(a, .caseInsensitive),
                                                            QueryValueSemantics.fold(b, .caseInsensitive))
            return folded != .orderedSame ? folded : QueryValueSemantics.compareScalars(a, b)
        case .localizedCompare, .localizedStandardCompare:
            let natural = comparator == .localizedStandardCompare
            let both: QueryComparison.Options = [.caseInsensitive, .diacriticInsensitive]
            for options in [both, .caseInsensitive] as [QueryComparison.Options] {
                let x = QueryValueSemantics.fold(a, options), y = QueryValueSemantics.fold(b, options)
                let order = natural ? compareNatural(x, y) : QueryValueSemantics.compareScalars(x, y)
                if order != .orderedSame { return order }
            }
            return QueryValueSemantics.compareScalars(a, b)
        }
    }

    /// Compares digit runs by numeric value and everything else by scalar.
    static func compareNatural(_ a: String, _ b: String) -> ComparisonResult {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        var i = 0, j = 0
        func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 48 && s.value <= 57 }
        while i < x.count && j < y.count {
            if isDigit(x[i]) && isDigit(y[j]) {
                var endI = i, endJ = j
                while endI < x.count, isDigit(x[endI]) { endI += 1 }
                while endJ < y.count, isDigit(y[endJ]) { endJ += 1 }
                let digitsX = x[i..<endI].drop { $0 == "0" }, digitsY = y[j..<endJ].drop { $0 == "0" }
                if digitsX.count != digitsY.count { return digitsX.count < digitsY.count ? .orderedAscending : .orderedDescending }
                for (p, q) in zip(digitsX, digitsY) where p != q { return p.value < q.value ? .orderedAscending : .orderedDescending }
                i = endI; j = endJ
            } else {
                if x[i] != y[j] { return x[i].value < y[j].value ? .orderedAscending : .orderedDescending }
                i += 1; j += 1
            }
        }
        if i < x.count { return .orderedDescending }
        if j < y.count { return .orderedAscending }
        return .orderedSame
    }
}
