import Foundation

/// One bank of the FDIC Failed Bank List, read from a CSV record.
///
/// Columns (by header name, in any order): `Bank Name`, `City`, `ST`, `CERT`, `Acquiring Institution`,
/// `Closing Date` (like `21-Oct-11`). The list has no ZIP code; ``cert`` goes into the model's `zip`.
struct FailedBankRecord: Equatable, Sendable {
    var name: String
    var city: String
    var state: String
    var cert: Int32
    var acquiringInstitution: String
    var closeDate: Date

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The records of a whole CSV text (header first).
    static func records(fromCSV text: String) throws -> [FailedBankRecord] {
        let rows = try CSVParser.parse(text)
        guard let header = rows.first else { throw Failure(description: "the CSV is empty") }
        let columns = Dictionary(header.enumerated().map {
            ($1.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{FEFF}", with: ""), $0)
        }, uniquingKeysWith: { first, _ in first })
        func column(_ name: String) throws -> Int {
            guard let index = columns[name] else { throw Failure(description: "the CSV has no '\(name)' column") }
            return index
        }
        let name = try column("Bank Name"), city = try column("City"), state = try column("ST")
        let cert = try column("CERT"), acquirer = try column("Acquiring Institution")
        let closing = try column("Closing Date")
        return try rows.dropFirst().enumerated().map { offset, row in
            let line = offset + 2
            func field(_ index: Int) throws -> String {
                guard index < row.count else { throw Failure(description: "CSV record \(line) has \(row.count) fields, fewer than the header") }
                return row[index].trimmingCharacters(in: .whitespaces)
            }
            let certText = try field(cert)
            guard let certNumber = Int32(certText) else {
                throw Failure(description: "CSV record \(line): CERT '\(certText)' is not a number")
            }
            let dateText = try field(closing)
            guard let date = ClosingDate.parse(dateText) else {
                throw Failure(description: "CSV record \(line): closing date '\(dateText)' is not like 21-Oct-11")
            }
            return FailedBankRecord(name: try field(name), city: try field(city), state: try field(state),
                                    cert: certNumber, acquiringInstitution: try field(acquirer), closeDate: date)
        }
    }
}

/// The FDIC list's dates: `21-Oct-11` (day, English month abbreviation, two-digit year), read as
/// midnight UTC. Two-digit years are 2000–2068 or 1969–1999 (the list starts in 2000).
enum ClosingDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
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
