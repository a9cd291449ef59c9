import Foundation

/// How a Decimal attribute's column value becomes a `Decimal`, whatever storage class the row holds. The
/// column has NUMERIC affinity, so SQLite keeps a number as INTEGER or REAL and anything else as TEXT; a
/// store written by another program may hold any of the three.
///
/// - INTEGER reads exactly.
/// - REAL reads as the decimal its shortest round-trip text spells: 0.1 reads 0.1, not the double's binary
///   expansion 0.1000000000000000055511151231257827.
/// - TEXT reads every digit of a decimal literal in SQLite's form (spaces around, a sign, digits with an
///   optional fraction and exponent) of at most ``maximumDigits`` significant digits.
///
/// Anything else reads as `Decimal.nan`, never as a nearby number and never as no value: an infinite REAL,
/// a number beyond `Decimal`'s range, text with more significant digits than `Decimal` keeps (rounding it
/// would change the value) or text that is not a number at all (`12abc` is not 12).
enum StoredDecimal {
    /// `Decimal` keeps 38 significant decimal digits (a 128-bit mantissa).
    static let maximumDigits = 38

    static func fromInteger(_ value: Int64) -> Decimal { Decimal(value) }

    static func fromReal(_ value: Double) -> Decimal {
        guard value.isFinite else { return .nan }
        // Swift's description of a Double is its shortest round-trip text ("0.1", "1e+20", "1.5e-07").
        return fromText(String(value))
    }

    static func fromText(_ text: String) -> Decimal {
        guard let literal = Literal(text) else { return .nan }
        guard !literal.digits.isEmpty else { return 0 }
        guard literal.digits.count <= maximumDigits else { return .nan }
        // Decimal's exponent spans -128...127; a number it cannot hold exactly is not read as another.
        guard let exponent = literal.exponent,
              exponent >= -128, exponent + literal.digits.count <= 128 + maximumDigits else { return .nan }
        let normalized = (literal.isNegative ? "-" : "") + String(decoding: literal.digits, as: UTF8.self) + "e\(exponent)"
        guard let value = Decimal(string: normalized, locale: Locale(identifier: "en_US_POSIX")),
              !value.isNaN, !value.isZero else { return .nan }
        return value
    }

    /// A decimal literal's value as significant digits × 10^exponent (leading and trailing zeros left out,
    /// so the digits are what must fit in `Decimal`'s mantissa).
    struct Literal {
        var isNegative = false
        /// The significant digits as ASCII; empty for zero.
        var digits: [UInt8] = []
        /// Nil when the written exponent is too large to be anything but out of range.
        var exponent: Int? = 0

        /// Parses SQLite's form of a number: optional white space around, an optional sign, digits with an
        /// optional fraction (at least one digit in all), and an optional exponent. Nil for anything else.
        init?(_ text: String) {
            var bytes = Array(text.utf8)[...]
            let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D]
            while let last = bytes.last, space.contains(last) { bytes.removeLast() }
            while let head = bytes.first, space.contains(head) { bytes.removeFirst() }
            func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                isNegative = sign == UInt8(ascii: "-")
                bytes.removeFirst()
            }
            var mantissa: [UInt8] = []
            var fractionDigits = 0
            var seenPoint = false
            while let byte = bytes.first, isDigit(byte) || (byte == UInt8(ascii: ".") && !seenPoint) {
                if byte == UInt8(ascii: ".") {
                    seenPoint = true
                } else {
                    mantissa.append(byte)
                    if seenPoint { fractionDigits += 1 }
                }
                bytes.removeFirst()
            }
            guard !mantissa.isEmpty else { return nil }
            var written = 0
            if let marker = bytes.first, marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
                bytes.removeFirst()
                var negativeExponent = false
                if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                    negativeExponent = sign == UInt8(ascii: "-")
                    bytes.removeFirst()
                }
                guard let digit = bytes.first, isDigit(digit) else { return nil }
                var magnitude = 0
                var tooLarge = false
                while let byte = bytes.first, isDigit(byte) {
                    magnitude = magnitude * 10 + Int(byte - UInt8(ascii: "0"))
                    if magnitude > 1_000_000 { tooLarge = true; magnitude = 1_000_000 }
                    bytes.removeFirst()
                }
                if tooLarge { exponent = nil }
                written = negativeExponent ? -magnitude : magnitude
            }
            guard bytes.isEmpty else { return nil }
            // Leading zeros carry nothing; trailing zeros move into the exponent.
            var significant = mantissa.drop { $0 == UInt8(ascii: "0") }
            var trailing = 0
            while let last = significant.last, last == UInt8(ascii: "0") {
                significant.removeLast()
                trailing += 1
            }
            digits = Array(significant)
            if digits.isEmpty {
                isNegative = false
                exponent = 0
            } else if exponent != nil {
                exponent = written - fractionDigits + trailing
            }
        }
    }
}
