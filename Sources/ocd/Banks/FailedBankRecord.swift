import Foundation
import OpenCoreDataImport

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
