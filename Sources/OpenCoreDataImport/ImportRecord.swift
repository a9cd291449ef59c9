import Foundation

/// One row of an import file: where it is (for messages) and its values by column or key name; or why
/// the row could not even be read (a JSON line that is not an object).
public struct ImportRecord: Sendable {
    /// `row 3` (CSV: the third row after the header) or `line 3` (JSON Lines).
    public let location: String
    /// The row's values by column or key name.
    public let fields: [String: ImportField]
    /// Why the row could not be read at all; nil when it could.
    public let unreadable: String?
}

/// Reads an import file's rows: CSV with a header row (``CSVParser``), or JSON Lines (one object a line).
public enum ImportRecordReader {
    /// The columns (CSV header order) and rows of a CSV text.
    ///
    /// - Throws: ``ImportError`` for a malformed CSV text (naming the line), an empty file, or a header
    ///   column without a name or named twice.
    public static func csv(_ text: String) throws -> (columns: [String], records: [ImportRecord]) {
        let rows: [[String]]
        do {
            rows = try CSVParser.parse(text)
        } catch {
            throw ImportError("\(error)")
        }
        guard let header = rows.first else { throw ImportError("the CSV file is empty (no header row)") }
        let columns = header.map { $0.replacingOccurrences(of: "\u{FEFF}", with: "").trimmingCharacters(in: .whitespaces) }
        if let empty = columns.firstIndex(of: "") { throw ImportError("the CSV header's column \(empty + 1) has no name") }
        var seen = Set<String>()
        for column in columns where !seen.insert(column.lowercased()).inserted {
            throw ImportError("the CSV header names '\(column)' twice")
        }
        let records = rows.dropFirst().enumerated().map { offset, row -> ImportRecord in
            let location = "row \(offset + 1)"
            guard row.count == columns.count else {
                return ImportRecord(location: location, fields: [:],
                                    unreadable: "\(row.count) fields where the header has \(columns.count)")
            }
            var fields: [String: ImportField] = [:]
            for (column, value) in zip(columns, row) { fields[column] = .text(value) }
            return ImportRecord(location: location, fields: fields, unreadable: nil)
        }
        return (columns, records)
    }

    /// The keys (in order of first appearance) and rows of a JSON Lines text; blank lines are skipped.
    public static func jsonLines(_ text: String) -> (columns: [String], records: [ImportRecord]) {
        let decoder = JSONDecoder()
        var columns: [String] = []
        var seen = Set<String>()
        var records: [ImportRecord] = []
        // JSON Lines ends a line at "\n" only (a "\r" before it is whitespace): U+2028 and the other
        // Unicode line breaks are text a JSON string may hold as it is.
        for (offset, line) in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let trimmed = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { continue }
            let location = "line \(offset + 1)"
            guard let object = try? decoder.decode([String: ImportField].self, from: Data(trimmed.utf8)) else {
                records.append(ImportRecord(location: location, fields: [:], unreadable: "not a JSON object"))
                continue
            }
            // The decoder keeps one value of a key written twice; which one the writer meant is unknown.
            if let repeated = JSONObjectKeys.firstRepeated(in: trimmed) {
                records.append(ImportRecord(location: location, fields: [:],
                                            unreadable: "the key '\(TerminalText.escaped(repeated))' appears twice"))
                continue
            }
            for key in object.keys.sorted() where seen.insert(key).inserted { columns.append(key) }
            records.append(ImportRecord(location: location, fields: object, unreadable: nil))
        }
        return (columns, records)
    }
}
