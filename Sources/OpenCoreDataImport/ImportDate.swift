import Foundation

/// The date forms `ocd import` reads: ISO 8601 (a day `2011-10-21`, read as midnight UTC, or a
/// date-time with a zone `2011-10-21T09:30:00Z` or `…+02:00`, fractional seconds allowed), the FDIC
/// list's `21-Oct-11`, or a number of seconds since 2001-01-01 (Core Data's reference date).
///
/// Parsing is strict: a day that does not exist (`2011-02-30`), a time past `23:59:59` or a zone offset
/// beyond ±18:00 is refused rather than rolled over into another date, as a lenient formatter would.
public enum ImportDate {
    /// The date `text` names in one of the forms above, or nil.
    public static func parse(_ text: String) -> Date? {
        if let seconds = Double(text) { return date(seconds: seconds) }
        if let date = ClosingDate.parse(text) { return date }
        return iso8601(text)
    }

    /// Seconds since the reference date from 0001-01-01T00:00:00Z up to (not including) the year 10000:
    /// the dates ISO 8601 writes with four-digit years. A number outside (`1e308`) is no date anyone meant.
    public static let secondsRange: Range<Double> = -63_113_904_000 ..< 252_423_993_600

    /// The date `seconds` after the reference date, or nil outside ``secondsRange`` (or not finite).
    public static func date(seconds: Double) -> Date? {
        secondsRange.contains(seconds) ? Date(timeIntervalSinceReferenceDate: seconds) : nil
    }

    /// Largest zone offset accepted, in minutes: ISO 8601 itself allows any, but real zones stay within
    /// ±14 hours and common date libraries refuse past ±18.
    private static let maximumOffsetMinutes = 18 * 60

    /// `YYYY-MM-DD`, or `YYYY-MM-DDThh:mm[:ss[.fff…]]` followed by `Z` or `±hh:mm` (also `±hhmm`).
    static func iso8601(_ text: String) -> Date? {
        var reader = DigitReader(Array(text.utf8))
        guard let year = reader.number(digits: 4), reader.skip("-"),
              let month = reader.number(digits: 2), reader.skip("-"),
              let day = reader.number(digits: 2) else { return nil }
        var hour = 0, minute = 0, second = 0, fraction = 0.0, offsetMinutes = 0
        if !reader.atEnd {
            guard reader.skip("T") || reader.skip(" "),
                  let readHour = reader.number(digits: 2), reader.skip(":"),
                  let readMinute = reader.number(digits: 2) else { return nil }
            hour = readHour
            minute = readMinute
            if reader.skip(":") {
                guard let readSecond = reader.number(digits: 2) else { return nil }
                second = readSecond
                if reader.skip(".") || reader.skip(",") {
                    guard let digits = reader.digitRun(), digits.count <= 9 else { return nil }
                    fraction = Double("0." + digits) ?? 0
                }
            }
            if reader.skip("Z") || reader.skip("z") {
                offsetMinutes = 0
            } else {
                let sign: Int
                if reader.skip("+") { sign = 1 } else if reader.skip("-") { sign = -1 } else { return nil }
                guard let offsetHour = reader.number(digits: 2) else { return nil }
                _ = reader.skip(":")
                guard let offsetMinute = reader.number(digits: 2), offsetMinute < 60 else { return nil }
                offsetMinutes = sign * (offsetHour * 60 + offsetMinute)
                guard abs(offsetMinutes) <= maximumOffsetMinutes else { return nil }
            }
            guard reader.atEnd else { return nil }
        }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else {
            return nil
        }
        // ISO 8601's calendar is the proleptic Gregorian one, also before 1582 (``CivilDate``); 2011-02-30 is refused.
        guard year >= 1, Int64(day) <= CivilDate.daysInMonth(year: Int64(year), month: Int64(month)) else { return nil }
        let midnight = CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day)) * 86_400
        // Whole seconds counted from the reference date before the fraction is added: the double keeps more
        // of the fraction the closer it is to zero.
        let whole = midnight - 978_307_200 + Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        return Date(timeIntervalSinceReferenceDate: Double(whole) + fraction)
    }

    /// Reads fixed-width ASCII digit groups and separators from the front of a text.
    private struct DigitReader {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }

        mutating func skip(_ character: Character) -> Bool {
            guard let ascii = character.asciiValue, position < bytes.count, bytes[position] == ascii else { return false }
            position += 1
            return true
        }

        /// Exactly `digits` digits, as a number.
        mutating func number(digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + digits] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            position += digits
            return value
        }

        /// One or more digits, as text.
        mutating func digitRun() -> String? {
            let start = position
            while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
            return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
        }
    }
}
