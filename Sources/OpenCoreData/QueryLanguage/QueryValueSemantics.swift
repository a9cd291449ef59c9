import Foundation
import Synchronization

/// How constants compare: one implementation shared by in-memory evaluation and the SQL functions the store
/// registers, so both give the same answer for the same values.
///
/// Numbers compare by value whatever their Swift type (Bool as 0/1); dates compare with dates and with
/// numbers as seconds since 2001 (the stored form); a string that spells a number (``spelledNumber(_:)``)
/// compares with a number as that number, any other string with no number; nil equals only nil and orders
/// against nothing; plain strings compare by Unicode scalars (SQLite's BINARY order), `[c]`/`[d]` fold first.
package enum QueryValueSemantics {
    enum Number: Equatable {
        case int(Int64), double(Double), decimal(Decimal)

        var doubleValue: Double {
            switch self {
            case .int(let v): return Double(v)
            case .double(let v): return v
            case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
            }
        }
    }

    static func number(_ value: QueryValue) -> Number? {
        switch value {
        case .int(let v): return .int(v)
        case .double(let v): return .double(v)
        case .decimal(let v): return .decimal(v)
        case .bool(let v): return .int(v ? 1 : 0)
        case .date(let v): return .double(v.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }

    /// The number a string spells, as SQLite reads text into a numeric column: optional spaces around, an
    /// optional sign, decimal digits with an optional fraction and exponent (`42`, ` -1.5e3 `, `.5`, `5.`).
    /// An integer that fits in 64 bits is an integer, anything else with digits a double; hexadecimal,
    /// `inf`, `nan`, digits other than ASCII, and anything else (a NUL inside included) spell no number.
    static func spelledNumber(_ text: String) -> Number? {
        let bytes = Array(text.utf8)
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
        var start = 0, end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        var index = start
        func skipSign() { if index < end, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 } }
        func digitRun() -> Int {
            let first = index
            while index < end, isDigit(bytes[index]) { index += 1 }
            return index - first
        }
        skipSign()
        var digits = digitRun()
        var isInteger = true
        if index < end, bytes[index] == 0x2E {  // "."
            isInteger = false
            index += 1
            digits += digitRun()
        }
        guard digits > 0 else { return nil }
        if index < end, bytes[index] == 0x65 || bytes[index] == 0x45 {  // "e", "E"
            isInteger = false
            index += 1
            skipSign()
            guard digitRun() > 0 else { return nil }
        }
        guard index == end else { return nil }
        let literal = String(decoding: bytes[start..<end], as: UTF8.self)
        if isInteger, let integer = Int64(literal) { return .int(integer) }
        guard let double = Double(literal), !double.isNaN else { return nil }
        return .double(double)
    }

    static func compareNumbers(_ a: Number, _ b: Number) -> ComparisonResult? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        case (.decimal(let x), .decimal(let y)): return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        case (.decimal(let x), .int(let y)): return compareNumbers(.decimal(x), .decimal(Decimal(y)))
        case (.int(let x), .decimal(let y)): return compareNumbers(.decimal(Decimal(x)), .decimal(y))
        default:
            let x = a.doubleValue, y = b.doubleValue
            if x.isNaN || y.isNaN { return nil }
            return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        }
    }

    /// Bytes of blob-like values (UUIDs are stored as their 16 bytes).
    static func bytes(_ value: QueryValue) -> Data? {
        switch value {
        case .data(let v): return v
        case .uuid(let v): return ValueConversion.uuidData(v)
        default: return nil
        }
    }

    /// Text of string-like values (URLs are stored as their absolute string).
    package static func text(_ value: QueryValue) -> String? {
        switch value {
        case .string(let v): return v
        case .url(let v): return v.absoluteString
        default: return nil
        }
    }

    package static func fold(_ text: String, _ options: QueryComparison.Options) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        if folding.isEmpty { return text }
        // ASCII has no diacritics, and Foundation folds its letters to lower case: the same text, without
        // Foundation's per-call cost (most values a residual predicate meets are ASCII).
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            guard folding.contains(.caseInsensitive), text.utf8.contains(where: { $0 &- 0x41 < 26 }) else { return text }
            return String(decoding: text.utf8.map { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        return text.folding(options: folding, locale: nil)
    }

    /// The last pattern folded by ``foldPattern(_:_:)``: a predicate compares every row with the same one.
    private static let lastFoldedPattern = Mutex<(text: String, options: QueryComparison.Options, folded: String)?>(nil)

    /// ``fold(_:_:)`` for the pattern side of a string comparison (a `CONTAINS` needle, a `LIKE` pattern), which
    /// is usually one constant across the rows a predicate is evaluated on: the last one is kept.
    static func foldPattern(_ text: String, _ options: QueryComparison.Options) -> String {
        guard !options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]), !text.utf8.allSatisfy({ $0 < 0x80 }) else {
            return fold(text, options)
        }
        if let hit = lastFoldedPattern.withLock({ last in last.flatMap { $0.text == text && $0.options == options ? $0.folded : nil } }) {
            return hit
        }
        let folded = fold(text, options)
        lastFoldedPattern.withLock { $0 = (text, options, folded) }
        return folded
    }

    static func compareScalars(_ a: String, _ b: String) -> ComparisonResult {
        var left = a.unicodeScalars.makeIterator(), right = b.unicodeScalars.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let x?, let y?):
                if x.value != y.value { return x.value < y.value ? .orderedAscending : .orderedDescending }
            }
        }
    }

    static func compareBytes(_ a: Data, _ b: Data) -> ComparisonResult {
        for (x, y) in zip(a, b) where x != y { return x < y ? .orderedAscending : .orderedDescending }
        return a.count == b.count ? .orderedSame : (a.count < b.count ? .orderedAscending : .orderedDescending)
    }

    /// The order of two values, or nil when they do not compare (nil involved, or unrelated types).
    static func order(_ a: QueryValue, _ b: QueryValue, _ options: QueryComparison.Options = []) -> ComparisonResult? {
        if let x = number(a), let y = number(b) { return compareNumbers(x, y) }
        if let x = text(a), let y = text(b) { return compareScalars(fold(x, options), fold(y, options)) }
        // A number and a string: the string as the number it spells, as a fetch from the store reads it.
        if let x = number(a), let y = text(b) { return spelledNumber(y).flatMap { compareNumbers(x, $0) } }
        if let x = text(a), let y = number(b) { return spelledNumber(x).flatMap { compareNumbers($0, y) } }
        if let x = bytes(a), let y = bytes(b) { return compareBytes(x, y) }
        return nil
    }

    static func equal(_ a: QueryValue, _ b: QueryValue, _ options: QueryComparison.Options = []) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.objectID(let x), .objectID(let y)): return x == y
        case (.objectID(let x), .int(let y)), (.int(let y), .objectID(let x)): return x.primaryKey == y && y != 0
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1, options) }
        default: return order(a, b, options) == .orderedSame
        }
    }

    /// The error for `<`, `<=`, `>`, `>=` or BETWEEN with an object (`SELF`, a to-one relationship, an object ID).
    static func objectsHaveNoOrder(_ op: QueryComparison.Operator) -> QueryLanguageError {
        .semantic("'\(op.rawValue)' cannot compare objects (SELF, a to-one relationship or an object ID): "
            + "objects have no order; compare one of their attributes")
    }

    /// A scalar comparison operator on two values (string operators on non-strings are false).
    ///
    /// - Throws: ``QueryLanguageError`` for an ordering operator on an object ID, and for BETWEEN without two bounds.
    static func compare(_ op: QueryComparison.Operator, _ a: QueryValue, _ b: QueryValue,
                        _ options: QueryComparison.Options) throws -> Bool {
        switch op {
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            // SQL would compare primary keys, which are no order anyone chose: refused in both.
            if case .objectID = a { throw objectsHaveNoOrder(op) }
            if case .objectID = b { throw objectsHaveNoOrder(op) }
        default: break
        }
        switch op {
        case .equal: return equal(a, b, options)
        case .notEqual: return !equal(a, b, options)
        case .less: return order(a, b, options) == .orderedAscending
        case .lessOrEqual: return [.orderedAscending, .orderedSame].contains(order(a, b, options))
        case .greater: return order(a, b, options) == .orderedDescending
        case .greaterOrEqual: return [.orderedDescending, .orderedSame].contains(order(a, b, options))
        case .between:
            guard case .array(let bounds) = b, bounds.count == 2 else {
                throw QueryLanguageError.semantic("BETWEEN needs an array of two bounds")
            }
            return try compare(.greaterOrEqual, a, bounds[0], options) && compare(.lessOrEqual, a, bounds[1], options)
        case .in:
            switch b {
            case .array(let members): return members.contains { equal(a, $0, options) }
            default:
                guard let haystack = text(b), let needle = text(a) else { return false }
                return QueryStringMatching.contains(fold(haystack, options), fold(needle, options))
            }
        case .contains:
            if case .array(let members) = a { return members.contains { equal($0, b, options) } }
            guard let haystack = text(a), let needle = text(b) else { return false }
            return QueryStringMatching.contains(fold(haystack, options), foldPattern(needle, options))
        case .beginsWith, .endsWith, .like, .matches:
            guard let subject = text(a), let pattern = text(b) else { return false }
            switch op {
            case .beginsWith:
                return fold(subject, options).unicodeScalars.starts(with: foldPattern(pattern, options).unicodeScalars)
            case .endsWith:
                return fold(subject, options).unicodeScalars.reversed()
                    .starts(with: foldPattern(pattern, options).unicodeScalars.reversed())
            case .like:
                return QueryStringMatching.like(fold(subject, options), pattern: foldPattern(pattern, options))
            default:
                return try QueryStringMatching.matches(subject, pattern: pattern, options: options)
            }
        }
    }
}
