/// A small RFC 4180 CSV reader: comma-separated fields, fields in double quotes may hold commas, line
/// breaks and doubled quotes (`""` is one `"`), and records end with LF or CRLF (a lone CR too).
///
/// Errors name the line: an unclosed quote, or a quote in the middle of an unquoted field.
public struct CSVParser {
    /// Why a CSV text could not be read, and on which line.
    public struct Failure: Error, CustomStringConvertible, Equatable {
        /// The line (1-based) where the problem was found.
        public let line: Int
        /// What is wrong there.
        public let reason: String
        /// `CSV line N: reason`.
        public var description: String { "CSV line \(line): \(reason)" }
    }

    /// The records of `text`, each a list of fields. A trailing line break does not make an empty record;
    /// blank lines are skipped.
    /// - Throws: ``Failure`` naming the line of an unclosed quote or a stray quote.
    public static func parse(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var line = 1
        var inQuotes = false
        var fieldWasQuoted = false
        var afterClosingQuote = false
        var recordHasContent = false
        var scalars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil

        func next() -> Unicode.Scalar? {
            if let scalar = pending { pending = nil; return scalar }
            return scalars.next()
        }
        func endField() {
            record.append(field)
            field = ""
            fieldWasQuoted = false
            afterClosingQuote = false
        }
        func endRecord() {
            endField()
            if recordHasContent { records.append(record) }
            record = []
            recordHasContent = false
        }

        while let scalar = next() {
            if inQuotes {
                if scalar == "\"" {
                    if let following = next() {
                        if following == "\"" {
                            field.unicodeScalars.append("\"")
                        } else {
                            inQuotes = false
                            afterClosingQuote = true
                            pending = following
                        }
                    } else {
                        inQuotes = false
                        afterClosingQuote = true
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case ",":
                recordHasContent = true
                endField()
            case "\r", "\n":
                if scalar == "\r", let following = next(), following != "\n" { pending = following }
                endRecord()
                line += 1
            case "\"":
                guard field.isEmpty && !fieldWasQuoted else {
                    throw Failure(line: line, reason: "a quote inside an unquoted field")
                }
                inQuotes = true
                fieldWasQuoted = true
                recordHasContent = true
            default:
                if afterClosingQuote {
                    throw Failure(line: line, reason: "text after a closing quote")
                }
                field.unicodeScalars.append(scalar)
                recordHasContent = true
            }
        }
        if inQuotes { throw Failure(line: line, reason: "a quoted field is never closed") }
        endRecord()
        return records
    }
}
