import Foundation

/// The banks list as plain text, for pipes, CI and the tour: each section's name and size, then its rows.
enum PlainSectionsPrinter {
    /// Prints at most `sectionLimit` sections (all if nil) and `rowsPerSection` rows of each (all if nil).
    static func print(_ sections: BankSections, sectionLimit: Int? = nil, rowsPerSection: Int? = nil, indent: String = "") {
        for section in sections.sections.prefix(sectionLimit ?? .max) {
            Console.line("\(indent)\(section.name) — \(section.rows.count) bank\(section.rows.count == 1 ? "" : "s")")
            for row in section.rows.prefix(rowsPerSection ?? .max) {
                guard let bank = sections.bank(at: row) else { continue }
                Console.line("\(indent)  \(bank.closeDateText)  \(bank.name), \(bank.city)")
            }
            if let limit = rowsPerSection, section.rows.count > limit {
                Console.line("\(indent)  … \(section.rows.count - limit) more")
            }
        }
    }
}
