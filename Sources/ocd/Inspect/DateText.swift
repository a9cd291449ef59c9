import Foundation
import OpenCoreDataImport

/// How ocd prints a date: ISO 8601 in UTC (proleptic Gregorian, ``CivilDate``), computed from the stored seconds with integer arithmetic, so
/// every double a store can hold prints without a trap (Foundation's formatters and `Date.description`
/// trap on infinities and NaN) and without a formatter made per value.
enum DateText {
    /// Seconds from the reference date within which the calendar is used: about ±31,000 years, where a
    /// double still holds the microseconds. Beyond it a date prints as its seconds, so it never reads as
    /// another date.
    static let calendarLimit: Double = 1e12

    /// Seconds between 1970-01-01 and the reference date, 2001-01-01.
    private static let referenceFromUnixEpoch: Int64 = 978_307_200

    /// `2011-10-21T09:30:00Z`, with the fraction of a second when the date has one (to the microsecond,
    /// trailing zeros left off); years before 1 or after 9999 with a sign (`-0044-03-15T…`,
    /// `+12000-01-01T…`, ISO 8601's expanded years); beyond ``calendarLimit`` or not finite, the seconds
    /// themselves: `1e+300 s since 2001-01-01T00:00:00Z`, `-inf s since …`, `nan s since …`.
    static func iso8601(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, seconds.magnitude < calendarLimit else {
            return "\(seconds) s since 2001-01-01T00:00:00Z"
        }
        var whole = seconds.rounded(.down)
        var micros = Int64(((seconds - whole) * 1_000_000).rounded())
        if micros == 1_000_000 {
            whole += 1
            micros = 0
        }
        let unix = Int64(whole) + referenceFromUnixEpoch
        let days = unix >= 0 ? unix / 86_400 : (unix - 86_399) / 86_400
        let secondOfDay = unix - days * 86_400
        let (year, month, day) = CivilDate.date(daysSinceUnixEpoch: days)
        var text = yearText(year) + "-" + twoDigits(month) + "-" + twoDigits(day) + "T"
            + twoDigits(secondOfDay / 3600) + ":" + twoDigits(secondOfDay / 60 % 60) + ":" + twoDigits(secondOfDay % 60)
        if micros != 0 {
            var fraction = String(micros)
            fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    private static func yearText(_ year: Int64) -> String {
        let digits = String(year.magnitude)
        let padded = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        if year < 0 { return "-" + padded }
        return year > 9999 ? "+" + padded : padded
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
