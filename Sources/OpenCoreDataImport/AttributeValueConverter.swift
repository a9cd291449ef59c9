import Foundation
import OpenCoreData

/// Turns an imported value into the Swift value an attribute of a given type holds: numbers (range
/// checked), booleans (yes/no/true/false/1/0), dates (ISO 8601, `21-Oct-11`, or seconds since 2001),
/// UUIDs, URLs and base64 data. A value that does not fit is a ``Refusal`` naming it.
public enum AttributeValueConverter {
    /// Why a value does not fit its attribute, naming the value.
    public struct Refusal: Error, CustomStringConvertible {
        /// The reason, naming the value and the type.
        public let description: String
    }

    /// The attribute's value for `field`; nil for a missing value (null, or an empty CSV field for any
    /// type but String).
    ///
    /// - Throws: ``Refusal`` when the value does not fit the attribute's type or range.
    public static func value(_ field: ImportField, for attribute: AttributeDescription) throws -> (any Sendable)? {
        let type = attribute.attributeType
        func refuse(_ why: String = "") -> Refusal {
            Refusal(description: "\(field) is not a valid \(type.rawValue)\(why)")
        }
        if case .null = field { return nil }
        if type == .transformable, archivesPropertyLists(attribute) {
            // The value as JSON wrote it; the insert hands its property-list form to the transformer.
            return field
        }
        switch field {
        case .array, .object: throw refuse()
        default: break
        }
        if case .text(let text) = field, text.trimmingCharacters(in: .whitespaces).isEmpty, type != .string { return nil }
        switch type {
        case .string:
            switch field {
            case .text(let text):
                // The store refuses NUL in strings; refusing here keeps it to this row.
                guard !text.unicodeScalars.contains("\0") else { throw refuse(" (it holds a NUL character)") }
                return text
            case .integer(let value): return "\(value)"
            case .number(let value): return "\(value)"
            case .bool(let value): return value ? "true" : "false"
            case .null, .array, .object: throw refuse()
            }
        case .integer16, .integer32, .integer64:
            let whole: Int64
            switch field {
            case .integer(let value): whole = value
            case .number(let value) where value.rounded() == value && abs(value) < 9.2e18: whole = Int64(value)
            case .text(let text):
                guard let parsed = Int64(text.trimmingCharacters(in: .whitespaces)) else { throw refuse() }
                whole = parsed
            default: throw refuse()
            }
            switch type {
            case .integer16:
                guard let fitted = Int16(exactly: whole) else { throw refuse(" (out of range)") }
                return fitted
            case .integer32:
                guard let fitted = Int32(exactly: whole) else { throw refuse(" (out of range)") }
                return fitted
            default: return whole
            }
        case .double, .float:
            let number: Double
            switch field {
            case .integer(let value): number = Double(value)
            case .number(let value): number = value
            case .text(let text):
                guard let parsed = Double(text.trimmingCharacters(in: .whitespaces)), parsed.isFinite else { throw refuse() }
                number = parsed
            default: throw refuse()
            }
            guard type == .float else { return number }
            let narrowed = Float(number)
            guard narrowed.isFinite else { throw refuse(" (out of range)") }
            return narrowed
        case .decimal:
            switch field {
            case .integer(let value): return Decimal(value)
            case .number(let value): return Decimal(value)
            case .text(let text):
                // Decimal(string:) stops at the first character it cannot read ("12abc" gives 12), so
                // the whole text must be a number first.
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                guard isDecimalNumber(trimmed),
                      let parsed = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")), !parsed.isNaN else {
                    throw refuse()
                }
                return parsed
            default: throw refuse()
            }
        case .boolean:
            switch field {
            case .bool(let value): return value
            case .integer(let value) where value == 0 || value == 1: return value == 1
            case .text(let text):
                switch text.trimmingCharacters(in: .whitespaces).lowercased() {
                case "yes", "true", "1": return true
                case "no", "false", "0": return false
                default: throw refuse(" (write yes/no, true/false or 1/0)")
                }
            default: throw refuse(" (write yes/no, true/false or 1/0)")
            }
        case .date:
            switch field {
            case .integer(let value):
                guard let date = ImportDate.date(seconds: Double(value)) else { throw refuse(" (out of range: years 1 to 9999)") }
                return date
            case .number(let value):
                guard let date = ImportDate.date(seconds: value) else { throw refuse(" (out of range: years 1 to 9999)") }
                return date
            case .text(let text):
                guard let date = ImportDate.parse(text.trimmingCharacters(in: .whitespaces)) else {
                    throw refuse(" (write ISO 8601, like 2011-10-21 or 2011-10-21T09:30:00Z, 21-Oct-11, or seconds since 2001)")
                }
                return date
            default: throw refuse()
            }
        case .uuid:
            guard case .text(let text) = field, let uuid = UUID(uuidString: text.trimmingCharacters(in: .whitespaces)) else {
                throw refuse()
            }
            return uuid
        case .uri:
            guard case .text(let text) = field, let url = URL(string: text.trimmingCharacters(in: .whitespaces)) else {
                throw refuse()
            }
            return url
        case .binaryData:
            guard case .text(let text) = field, let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespaces)) else {
                throw refuse(" (write base64)")
            }
            return data
        case .transformable, .objectID, .composite:
            // A composite's elements are imported by their key paths (`magnitude.richter`), not as one field.
            throw Refusal(description: "\(type.rawValue) attributes cannot be imported from text"
                          + (type == .transformable ? " unless their transformer archives property-list values" : ""))
        }
    }

    /// Whether `attribute`'s transformer archives Foundation property-list values (the default,
    /// `NSSecureUnarchiveFromData`, and its subclasses), so any JSON value fits it.
    public static func archivesPropertyLists(_ attribute: AttributeDescription) -> Bool {
        let name = ValueTransformerName(attribute.valueTransformerName ?? ValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue)
        return SecureUnarchiveFromDataTransformer(forName: name) != nil
    }

    /// Whether `text` is one plain decimal number: an optional sign, digits with at most one point, and
    /// an optional exponent (`-12.5`, `.5`, `1e-3`).
    static func isDecimalNumber(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars[...]
        if let first = scalars.first, first == "+" || first == "-" { scalars = scalars.dropFirst() }
        var digits = 0, points = 0
        while let scalar = scalars.first, scalar == "." || ("0"..."9").contains(scalar) {
            if scalar == "." { points += 1 } else { digits += 1 }
            scalars = scalars.dropFirst()
        }
        guard digits > 0, points <= 1 else { return false }
        if let marker = scalars.first, marker == "e" || marker == "E" {
            scalars = scalars.dropFirst()
            if let sign = scalars.first, sign == "+" || sign == "-" { scalars = scalars.dropFirst() }
            guard let digit = scalars.first, ("0"..."9").contains(digit) else { return false }
            while let scalar = scalars.first, ("0"..."9").contains(scalar) { scalars = scalars.dropFirst() }
        }
        return scalars.isEmpty
    }
}
