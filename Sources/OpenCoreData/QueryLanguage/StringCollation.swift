import Foundation

/// The string orders of Foundation's comparison selectors, done in Swift so that they are fast enough
/// to be SQLite collations (Foundation's own compare costs microseconds a call) and give the same answer
/// in SQL and in memory.
///
/// Two families, as measured against swift-corelibs-foundation:
/// - `caseInsensitiveCompare:` is not localized: both strings are canonically decomposed ("É" is "E" and
///   a combining acute), case folded ("ß" is "ss", "Ω" is "ω") and compared scalar by scalar.
/// - The localized selectors follow the Unicode collation's root order in three levels: letters first
///   (spaces, then punctuation, then digits, then letters by script: Latin, Greek, Cyrillic…), then
///   diacritics ("Zoe" before "Zoë"), then case (lowercase first). `localizedCaseInsensitiveCompare:`
///   stops after diacritics; `localizedStandardCompare:` also compares runs of digits by value.
///
/// Strings Foundation calls equal may be ordered here by a last tie-break (their scalars), so that a
/// sort is the same every time. Known corners where the order differs are listed in the DocC article PortingFromCoreData.md.
package enum StringCollation {
    // MARK: caseInsensitiveCompare:

    /// Foundation's `caseInsensitiveCompare:` (not localized).
    static func caseInsensitive(_ a: String, _ b: String) -> ComparisonResult {
        if let order = asciiCaseInsensitive(a, b) { return order }
        var x: [Unicode.Scalar] = [], y: [Unicode.Scalar] = []
        for scalar in decomposed(a) { fold(scalar, into: &x) }
        for scalar in decomposed(b) { fold(scalar, into: &y) }
        return order(x, y)
    }

    /// The case-insensitive order of two ASCII strings without allocating; nil when either is not ASCII.
    private static func asciiCaseInsensitive(_ a: String, _ b: String) -> ComparisonResult? {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y -> ComparisonResult? in
                for byte in x where byte >= 0x80 { return nil }
                for byte in y where byte >= 0x80 { return nil }
                for (p, q) in zip(x, y) {
                    let lp = p >= 65 && p <= 90 ? p + 32 : p, lq = q >= 65 && q <= 90 ? q + 32 : q
                    if lp != lq { return lp < lq ? .orderedAscending : .orderedDescending }
                }
                return x.count == y.count ? .orderedSame : (x.count < y.count ? .orderedAscending : .orderedDescending)
            }
        }
    }

    /// Appends the full case folding of `scalar`: the lowercase of its uppercase, so "ß" folds to "ss".
    package static func fold(_ scalar: Unicode.Scalar, into out: inout [Unicode.Scalar]) {
        if scalar.isASCII {
            let value = scalar.value
            out.append(value >= 65 && value <= 90 ? Unicode.Scalar(UInt8(value + 32)) : scalar)
            return
        }
        let properties = scalar.properties
        guard properties.changesWhenCaseFolded else { out.append(scalar); return }
        for upper in properties.uppercaseMapping.unicodeScalars {
            out.append(contentsOf: upper.properties.lowercaseMapping.unicodeScalars)
        }
    }

    /// The canonical decomposition of `text` (only non-ASCII text needs one).
    static func decomposed(_ text: String) -> String.UnicodeScalarView {
        for byte in text.utf8 where byte >= 0x80 { return text.decomposedStringWithCanonicalMapping.unicodeScalars }
        return text.unicodeScalars
    }

    private static func order(_ x: [Unicode.Scalar], _ y: [Unicode.Scalar]) -> ComparisonResult {
        for (p, q) in zip(x, y) where p != q { return p.value < q.value ? .orderedAscending : .orderedDescending }
        return x.count == y.count ? .orderedSame : (x.count < y.count ? .orderedAscending : .orderedDescending)
    }

    // MARK: The localized selectors

    /// One collation element: a letter, digit or mark, with its weight at each level.
    private struct Element {
        /// Letter order; 0 for a combining mark (it only counts for diacritics).
        var primary: UInt32
        /// The digits of a number run (`numeric` only), most significant first.
        var digits: [UInt8] = []
        /// Diacritic order: `commonSecondary` for a letter, a mark's own weight above it.
        var secondary: UInt32
        /// Case: 0 lowercase or uncased, 1 uppercase.
        var tertiary: UInt8
    }

    private static let commonSecondary: UInt32 = 5
    private static let numberPrimary: UInt32 = 0x10000
    /// ASCII punctuation and symbols in the root collation's order.
    private static let punctuation = Array("_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".unicodeScalars)

    /// Foundation's `localizedCompare:` (`caseSensitive`), `localizedCaseInsensitiveCompare:` and
    /// `localizedStandardCompare:` (`numeric`).
    static func localized(_ a: String, _ b: String, caseSensitive: Bool, numeric: Bool) -> ComparisonResult {
        let x = elements(a, numeric: numeric), y = elements(b, numeric: numeric)
        // Letters, ignoring marks.
        var i = 0, j = 0
        while true {
            while i < x.count, x[i].primary == 0 { i += 1 }
            while j < y.count, y[j].primary == 0 { j += 1 }
            guard i < x.count, j < y.count else {
                if i < x.count { return .orderedDescending }
                if j < y.count { return .orderedAscending }
                break
            }
            if x[i].primary != y[j].primary { return x[i].primary < y[j].primary ? .orderedAscending : .orderedDescending }
            if x[i].primary == numberPrimary {
                let order = compareNumbers(x[i].digits, y[j].digits)
                if order != .orderedSame { return order }
            }
            i += 1; j += 1
        }
        // Diacritics, element by element.
        for (p, q) in zip(x, y) where p.secondary != q.secondary {
            return p.secondary < q.secondary ? .orderedAscending : .orderedDescending
        }
        if x.count != y.count { return x.count < y.count ? .orderedAscending : .orderedDescending }
        guard caseSensitive else { return .orderedSame }
        for (p, q) in zip(x, y) where p.tertiary != q.tertiary {
            return p.tertiary < q.tertiary ? .orderedAscending : .orderedDescending
        }
        // Equal numbers: the one written with fewer digits ("x1" before "x01").
        for (p, q) in zip(x, y) where p.digits.count != q.digits.count {
            return p.digits.count < q.digits.count ? .orderedAscending : .orderedDescending
        }
        return .orderedSame
    }

    private static func elements(_ text: String, numeric: Bool) -> [Element] {
        var out: [Element] = []
        out.reserveCapacity(text.utf8.count)
        var folded: [Unicode.Scalar] = []
        for scalar in decomposed(text) {
            let properties = scalar.properties
            switch properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .spacingMark:
                out.append(Element(primary: 0, secondary: secondaryWeight(scalar), tertiary: 0))
                continue
            default: break
            }
            if numeric, properties.numericType == .decimal, let value = properties.numericValue {
                if let last = out.last, last.primary == numberPrimary {
                    out[out.count - 1].digits.append(UInt8(value))
                } else {
                    out.append(Element(primary: numberPrimary, digits: [UInt8(value)], secondary: commonSecondary, tertiary: 0))
                }
                continue
            }
            folded.removeAll(keepingCapacity: true)
            fold(scalar, into: &folded)
            let upper: UInt8 = folded.count == 1 && folded[0] == scalar ? 0 : 1
            for letter in folded {
                out.append(Element(primary: primaryWeight(letter), secondary: commonSecondary, tertiary: upper))
            }
        }
        return out
    }

    /// Spaces, then punctuation and symbols, then digits by value, then letters by script and letter.
    private static func primaryWeight(_ scalar: Unicode.Scalar) -> UInt32 {
        let properties = scalar.properties
        if properties.isWhitespace { return 0x100 + min(scalar.value, 0xEFF) }
        if let index = punctuation.firstIndex(of: scalar) { return 0x1000 + UInt32(index) }
        if properties.numericType == .decimal, let value = properties.numericValue { return numberPrimary + UInt32(value) }
        if properties.isAlphabetic { return 0x200000 + scalar.value }
        return 0x2000 + min(scalar.value, 0xDFFF)
    }

    /// The root collation's order of the common diacritics; other marks after them, by scalar.
    private static func secondaryWeight(_ mark: Unicode.Scalar) -> UInt32 {
        switch mark.value {
        case 0x301: return 6    // acute
        case 0x300: return 7    // grave
        case 0x306: return 8    // breve
        case 0x302: return 9    // circumflex
        case 0x30C: return 10   // caron
        case 0x30A: return 11   // ring
        case 0x308: return 12   // diaeresis
        case 0x30B: return 13   // double acute
        case 0x303: return 14   // tilde
        case 0x307: return 15   // dot above
        default: return 0x100 + mark.value
        }
    }

    private static func compareNumbers(_ x: [UInt8], _ y: [UInt8]) -> ComparisonResult {
        let a = x.drop { $0 == 0 }, b = y.drop { $0 == 0 }
        if a.count != b.count { return a.count < b.count ? .orderedAscending : .orderedDescending }
        for (p, q) in zip(a, b) where p != q { return p < q ? .orderedAscending : .orderedDescending }
        return .orderedSame
    }
}
