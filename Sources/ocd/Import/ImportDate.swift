import Foundation

/// The date forms `ocd import` reads: ISO 8601 (a day `2011-10-21`, read as midnight UTC, or a
/// date-time with a zone `2011-10-21T09:30:00Z`, fractional seconds allowed), the FDIC list's
/// `21-Oct-11`, or a number of seconds since 2001-01-01 (Core Data's reference date).
enum ImportDate {
    static func parse(_ text: String) -> Date? {
        if let seconds = Double(text), seconds.isFinite { return Date(timeIntervalSinceReferenceDate: seconds) }
        if let date = ClosingDate.parse(text) { return date }
        let withTime = ISO8601DateFormatter()
        withTime.formatOptions = [.withInternetDateTime]
        if let date = withTime.date(from: text) { return date }
        withTime.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = withTime.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        day.timeZone = TimeZone(identifier: "UTC")
        if text.count == 10, let date = day.date(from: text) { return date }
        return nil
    }
}
