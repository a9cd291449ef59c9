import OpenCoreData
/// `MATCHES`'s ICU regular expression written as a PostgreSQL advanced regular expression (ARE) that accepts
/// exactly the same whole strings, for the subset of ICU both engines read alike; the rest is refused by name.
///
/// Memory matches `\A(?:pattern)\z` with ICU (``QueryStringMatching/matches(_:pattern:options:)``); the
/// translation is `^(?:…)$` (without the newline-sensitive flag `^` and `$` are the ends of the string, as
/// `\A` and `\z`). What is translated, and how the two engines are made to agree:
/// - literal scalars; ASCII punctuation escaped with `\`, and `\t`, `\n`, `\r`;
/// - `.`: ICU's dot skips line terminators, PostgreSQL's does not, so it becomes the class of everything but
///   U+000A–U+000D, U+0085, U+2028 and U+2029;
/// - classes `[…]`, `[^…]` of literal scalars and ranges (PostgreSQL's text is in the `"C"` collation, so a
///   range is by code point, as in ICU);
/// - groups `(…)`, `(?:…)`, alternation `|`, `^`, and `$` as the pattern's last character;
/// - quantifiers `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` (up to 255, PostgreSQL's limit), lazy ones as greedy
///   (whether a whole string matches does not depend on greed);
/// - case-insensitive matching (`[c]`, or `(?i)` at the very start): PostgreSQL's own only folds ASCII in the
///   `"C"` collation, so each letter becomes the class of what ICU matches it with: both cases, plus U+212A
///   KELVIN SIGN for `k` and U+017F LONG S for `s` (``CaseMappingTable`` says which scalars fold to one ASCII
///   letter). Only ASCII is allowed then, and no two literal letters that begin a multi-letter folding (`ss`,
///   `st`, `ff`, `fi`, `fl`), which ICU also matches against `ß`, `ﬆ`, `ﬀ`, `ﬁ`, `ﬂ`.
///
/// Everything else (character class escapes such as `\d`, `\w`, `\s` and `\b`, Unicode properties, nested
/// sets, backreferences, look-around, possessive quantifiers, other flags, `\Q…\E`, `\x`/`\u` escapes) is
/// refused: the two engines read those differently (PostgreSQL's `\d` and `\w` are ASCII in `"C"`, ICU's are
/// Unicode).
enum PostgreSQLRegularExpression {
    /// The ICU construct that has no translation, as written in the pattern ("\\d", "(?=", "possessive a*+").
    struct Untranslatable: Error, Equatable {
        let construct: String
    }

    /// The ARE that matches the same whole strings as `pattern` (already checked to be a valid ICU pattern).
    ///
    /// - Throws: ``Untranslatable`` naming the first construct outside the subset.
    static func translate(_ pattern: String, caseInsensitive: Bool) throws(Untranslatable) -> String {
        var translator = Translator(Array(pattern.unicodeScalars), caseInsensitive: caseInsensitive)
        return "^(?:" + (try translator.body()) + ")$"
    }

    /// What `.` matches in ICU: anything but a line terminator.
    static let dotClass = "[^\u{A}\u{B}\u{C}\u{D}\u{85}\u{2028}\u{2029}]"

    /// The scalars ICU matches with an ASCII letter when matching case-insensitively: those whose case folding
    /// is that letter ("k": k, K, U+212A).
    static let caseVariants: [Unicode.Scalar: [Unicode.Scalar]] = {
        var variants: [Unicode.Scalar: [Unicode.Scalar]] = [:]
        for value in UInt32(0x61)...0x7A {
            let letter = Unicode.Scalar(UInt8(value))
            variants[letter] = [letter, Unicode.Scalar(UInt8(value - 32))]
        }
        for (from, to) in CaseMappingTable.caseFolding.singles where !from.isASCII && to.isASCII && variants[to] != nil {
            variants[to]?.append(from)
        }
        return variants
    }()

    /// Pairs of ASCII letters (lowercase) that begin a scalar's multi-letter case folding ("ss" for "ß").
    static let foldingPairs: Set<[Unicode.Scalar]> = Set(CaseMappingTable.caseFolding.expansions.compactMap { expansion in
        let scalars = Array(expansion.to.unicodeScalars)
        guard scalars.allSatisfy({ $0.isASCII }), scalars.count >= 2 else { return nil }
        return Array(scalars.prefix(2))
    })

    private struct Translator {
        let scalars: [Unicode.Scalar]
        var index = 0
        var caseInsensitive: Bool
        /// Whether a quantifier may follow what was last written.
        var quantifiable = false
        /// The last literal letter written (lowercase), while nothing but group parentheses followed it.
        var lastLetter: Unicode.Scalar?

        init(_ scalars: [Unicode.Scalar], caseInsensitive: Bool) {
            self.scalars = scalars
            self.caseInsensitive = caseInsensitive
        }

        var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

        func peek(_ offset: Int) -> Unicode.Scalar? { index + offset < scalars.count ? scalars[index + offset] : nil }

        func text(_ range: Range<Int>) -> String {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[max(0, range.lowerBound)..<min(scalars.count, range.upperBound)])
            return String(view)
        }

        mutating func body() throws(Untranslatable) -> String {
            var out = ""
            if text(0..<4) == "(?i)" {
                caseInsensitive = true
                index = 4
            }
            while let scalar = current {
                switch scalar {
                case "(":
                    if peek(1) == "?" {
                        guard peek(2) == ":" else { throw Untranslatable(construct: text(index..<(index + 3))) }
                        out += "(?:"
                        index += 3
                    } else {
                        out += "("
                        index += 1
                    }
                    quantifiable = false
                case ")":
                    out += ")"
                    index += 1
                    quantifiable = true
                case "|":
                    out += "|"
                    index += 1
                    quantifiable = false
                    lastLetter = nil
                case "^":
                    out += "^"
                    index += 1
                    quantifiable = false
                    lastLetter = nil
                case "$":
                    // ICU's $ also matches before a final line terminator; only at the very end is it the end.
                    guard index == scalars.count - 1 else { throw Untranslatable(construct: "$ before the end of the pattern") }
                    out += "$"
                    index += 1
                    quantifiable = false
                case ".":
                    out += PostgreSQLRegularExpression.dotClass
                    index += 1
                    quantifiable = true
                    lastLetter = nil
                case "[":
                    out += try characterClass()
                    quantifiable = true
                    lastLetter = nil
                case "*", "+", "?", "{":
                    out += try quantifier()
                case "\\":
                    let literal = try escape()
                    out += try self.literal(literal)
                default:
                    index += 1
                    out += try literal(scalar)
                }
            }
            return out
        }

        /// One literal scalar, as the ARE writes it (as a class of its case variants when case-insensitive).
        mutating func literal(_ scalar: Unicode.Scalar) throws(Untranslatable) -> String {
            quantifiable = true
            guard caseInsensitive else {
                lastLetter = nil
                return Self.written(scalar, inClass: false)
            }
            guard scalar.isASCII else { throw Untranslatable(construct: "'\(scalar)' (not ASCII) matched case-insensitively") }
            let lower = scalar.properties.isUppercase ? Unicode.Scalar(UInt8(scalar.value + 32)) : scalar
            guard let variants = PostgreSQLRegularExpression.caseVariants[lower] else {
                lastLetter = nil
                return Self.written(scalar, inClass: false)
            }
            if let previous = lastLetter, PostgreSQLRegularExpression.foldingPairs.contains([previous, lower]) {
                throw Untranslatable(construct: "'\(previous)\(lower)' matched case-insensitively (ICU also matches it with one scalar that folds to it)")
            }
            lastLetter = lower
            return "[" + variants.map { Self.written($0, inClass: true) }.joined() + "]"
        }

        /// An escape outside a class: the scalar it stands for.
        mutating func escape() throws(Untranslatable) -> Unicode.Scalar {
            guard let next = peek(1) else { throw Untranslatable(construct: "\\ at the end") }
            index += 2
            switch next {
            case "t": return "\t"
            case "n": return "\n"
            case "r": return "\r"
            default:
                guard next.isASCII, !next.properties.isAlphabetic, !("0"..."9").contains(next), next.value > 0x20 else {
                    throw Untranslatable(construct: "\\" + String(next))
                }
                return next
            }
        }

        /// `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` after something that repeats; lazy ones as greedy.
        mutating func quantifier() throws(Untranslatable) -> String {
            let start = index
            guard quantifiable else { throw Untranslatable(construct: "quantifier '\(text(start..<(start + 1)))' after nothing repeatable") }
            var out: String
            switch current {
            case "{":
                index += 1
                let low = digits()
                var high: Int? = low
                if current == "," {
                    index += 1
                    high = current == "}" ? nil : digits()
                }
                guard current == "}", let lowBound = low, lowBound <= 255, (high ?? 0) <= 255,
                      high.map({ $0 >= lowBound }) ?? true else {
                    throw Untranslatable(construct: "bound '\(text(start..<(index + 1)))'")
                }
                index += 1
                out = text(start..<index)
            default:
                out = String(scalars[index])
                index += 1
            }
            if current == "?" {
                index += 1
            } else if current == "+" {
                throw Untranslatable(construct: "possessive quantifier '\(text(start..<(index + 1)))'")
            }
            // A letter repeated no longer begins a literal string with the next one.
            lastLetter = nil
            quantifiable = false
            return out
        }

        mutating func digits() -> Int? {
            var value: Int?
            while let scalar = current, ("0"..."9").contains(scalar) {
                value = min((value ?? 0) * 10 + Int(scalar.value - 48), 10_000)
                index += 1
            }
            return value
        }

        /// `[…]` or `[^…]` of literal scalars and ranges.
        mutating func characterClass() throws(Untranslatable) -> String {
            let start = index
            index += 1
            var out = "["
            if current == "^" {
                out += "^"
                index += 1
            }
            var members: [ClosedRange<UInt32>] = []
            var first = true
            while true {
                guard var low = current else { throw Untranslatable(construct: "unterminated class") }
                if low == "]" {
                    if first { throw Untranslatable(construct: "']' first in a class") }
                    index += 1
                    break
                }
                low = try classMember(first: first)
                var high = low
                if current == "-", let after = peek(1), after != "]" {
                    index += 1
                    high = try classMember(first: false)
                }
                members.append(low.value...high.value)
                first = false
            }
            for range in members {
                let low = Unicode.Scalar(range.lowerBound)!, high = Unicode.Scalar(range.upperBound)!
                out += Self.written(low, inClass: true)
                if range.count > 1 { out += "-" + Self.written(high, inClass: true) }
                guard caseInsensitive else { continue }
                guard range.upperBound < 0x80 else {
                    throw Untranslatable(construct: "class member beyond ASCII in \(text(start..<index)) matched case-insensitively")
                }
                for value in range {
                    let scalar = Unicode.Scalar(UInt8(value))
                    let lower = scalar.properties.isUppercase ? Unicode.Scalar(UInt8(value + 32)) : scalar
                    for variant in PostgreSQLRegularExpression.caseVariants[lower] ?? [] where variant != scalar {
                        out += Self.written(variant, inClass: true)
                    }
                }
            }
            return out + "]"
        }

        /// One scalar in a class; ICU's set syntax (nested sets, `&&`, `--`, properties, escapes for classes)
        /// is refused, and so is anything ICU might read as syntax there.
        mutating func classMember(first: Bool) throws(Untranslatable) -> Unicode.Scalar {
            guard let scalar = current else { throw Untranslatable(construct: "unterminated class") }
            if scalar == "\\" {
                let escaped = try escape()
                return escaped
            }
            if scalar == "-" && (first || peek(1) == "]") {
                index += 1
                return scalar
            }
            if "[]-&^$:{}".unicodeScalars.contains(scalar) || scalar.properties.isWhitespace {
                throw Untranslatable(construct: "'\(scalar)' inside a class")
            }
            index += 1
            return scalar
        }

        /// A literal scalar as the ARE writes it: ASCII punctuation escaped, everything else as itself.
        static func written(_ scalar: Unicode.Scalar, inClass: Bool) -> String {
            if scalar.isASCII, scalar.value > 0x20, scalar.value < 0x7F, !scalar.properties.isAlphabetic,
               !("0"..."9").contains(scalar) {
                return "\\" + String(scalar)
            }
            return String(scalar)
        }
    }
}
