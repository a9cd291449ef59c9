import Foundation

/// The FDIC list's dates: `21-Oct-11` (day, English month abbreviation, two-digit year), read as
/// midnight UTC. Two-digit years are 2000–2068 or 1969–1999 (the list starts in 2000).
public enum ClosingDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date `text` names, or nil when it is not such a date or names a day that does not exist.
    public static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: "-")
        guard parts.count == 3, let day = Int(parts[0]), (1...31).contains(day),
              let monthIndex = months.firstIndex(of: parts[1].lowercased()),
              let yearValue = Int(parts[2]) else { return nil }
        let year: Int
        switch parts[2].count {
        case 2: year = yearValue < 69 ? 2000 + yearValue : 1900 + yearValue
        case 4: year = yearValue
        default: return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        guard let utc = TimeZone(identifier: "UTC") else { return nil }
        calendar.timeZone = utc
        let components = DateComponents(year: year, month: monthIndex + 1, day: day)
        guard let date = calendar.date(from: components),
              calendar.component(.day, from: date) == day else { return nil }   // refuses 31-Feb
        return date
    }
}
