import Foundation
import OpenCoreData

/// An attribute's value as the text an edit form shows and takes back: numbers and Booleans as Swift
/// writes them, dates in ISO 8601 (as pages show them), UUIDs and URIs as their strings; an empty field is
/// nil. Binary, Transformable and other values are shown, never edited.
enum AttributeText {
    /// Whether a form can edit values of `attribute`.
    static func isEditable(_ attribute: AttributeDescription) -> Bool {
        switch attribute.attributeType {
        case .string, .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean, .date, .uuid, .uri: true
        case .binaryData, .transformable, .objectID, .composite: false
        }
    }

    /// The text an edit field starts with.
    static func text(of value: Any?) -> String {
        switch value {
        case nil: ""
        case let date as Date: DateText.iso8601(date)
        case let uuid as UUID: uuid.uuidString
        case let url as URL: url.absoluteString
        case let some?: "\(some)"
        }
    }

    /// The value `text` stands for in `attribute`.
    ///
    /// - Throws: ``BrowserError`` (422) naming the attribute and what the text should have been.
    static func value(_ text: String, for attribute: AttributeDescription) throws -> Any? {
        if text.isEmpty { return nil }
        func refuse(_ expected: String) -> BrowserError {
            BrowserError(status: 422, message: "\(attribute.name): “\(text.prefix(80))” is not \(expected)")
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch attribute.attributeType {
        case .string: return text
        case .integer16: guard let number = Int16(trimmed) else { throw refuse("a whole number from -32768 to 32767") }; return number
        case .integer32: guard let number = Int32(trimmed) else { throw refuse("a whole number from -2147483648 to 2147483647") }; return number
        case .integer64: guard let number = Int64(trimmed) else { throw refuse("a 64-bit whole number") }; return number
        case .decimal:
            guard let number = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")), !number.isNaN else {
                throw refuse("a decimal number")
            }
            return number
        case .double: guard let number = Double(trimmed), number.isFinite else { throw refuse("a finite number") }; return number
        case .float: guard let number = Float(trimmed), number.isFinite else { throw refuse("a finite number") }; return number
        case .boolean:
            switch trimmed.lowercased() {
            case "true", "yes", "1": return true
            case "false", "no", "0": return false
            default: throw refuse("true or false")
            }
        case .date:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = formatter.date(from: trimmed) { return date }
            formatter.formatOptions = [.withInternetDateTime]
            guard let date = formatter.date(from: trimmed) else { throw refuse("a date such as 2026-12-07T10:30:00Z") }
            return date
        case .uuid: guard let id = UUID(uuidString: trimmed) else { throw refuse("a UUID") }; return id
        case .uri: guard let url = URL(string: trimmed), url.scheme != nil else { throw refuse("an absolute URL") }; return url
        case .binaryData, .transformable, .objectID, .composite: throw refuse("editable here")
        }
    }
}
