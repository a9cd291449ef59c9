import Foundation

/// The value types of Core Data's XML store, as its `<attribute type="…">` spells them, and how each value
/// is written as text. `string`, `binary` (base64), `bool` (`1`/`0`) and `int16` are read from real files
/// (every Xcode `xcmapping.xml`); the other spellings and forms are inferred (docs/INTEROP.md, "XML stores").
enum XMLStoreValueType: String, CaseIterable, Sendable {
    case int16, int32, int64, decimal, float, double, string, bool, date, binary, transformable
    /// Inferred: Core Data's documentation lists no spelling for these two.
    case uuid, uri

    /// The spelling of an attribute type, or nil for a type the XML store cannot hold (object IDs,
    /// composite attributes, whose elements are attributes of their own).
    init?(_ type: AttributeType) {
        guard let spelling = Self.allCases.first(where: { $0.attributeType == type }) else { return nil }
        self = spelling
    }

    /// The model's attribute type for this spelling.
    var attributeType: AttributeType {
        switch self {
        case .int16: .integer16
        case .int32: .integer32
        case .int64: .integer64
        case .decimal: .decimal
        case .double: .double
        case .float: .float
        case .string: .string
        case .bool: .boolean
        case .date: .date
        case .binary: .binaryData
        case .transformable: .transformable
        case .uuid: .uuid
        case .uri: .uri
        }
    }

    /// The row value for an attribute's text: the Swift value the text spells, stored as the library stores
    /// it (a transformable attribute keeps its bytes as they are, without its transformer). Nil with a reason
    /// when the text is not a value of this type.
    func storeValue(of text: String, for attribute: AttributeDescription) -> Result<StoreValue, XMLStoreValueRefusal> {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        func refused(_ what: String) -> Result<StoreValue, XMLStoreValueRefusal> {
            .failure(XMLStoreValueRefusal(reason: "'\(trimmed.prefix(40))' is not \(what)"))
        }
        let value: Any
        switch self {
        case .int16: guard let number = Int16(trimmed) else { return refused("an int16") }; value = number
        case .int32: guard let number = Int32(trimmed) else { return refused("an int32") }; value = number
        case .int64: guard let number = Int64(trimmed) else { return refused("an int64") }; value = number
        case .double: guard let number = Double(trimmed), !number.isNaN else { return refused("a double") }; value = number
        case .float: guard let number = Float(trimmed), !number.isNaN else { return refused("a float") }; value = number
        case .decimal:
            guard Self.isDecimalNumeral(trimmed), let number = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX"))
            else { return refused("a decimal") }
            value = number
        case .bool:
            switch trimmed.lowercased() {
            case "1", "yes", "true": value = true
            case "0", "no", "false": value = false
            default: return refused("a bool (1 or 0)")
            }
        case .date:
            guard let seconds = Double(trimmed), seconds.isFinite else { return refused("a date (seconds since 2001-01-01)") }
            value = Date(timeIntervalSinceReferenceDate: seconds)
        case .string: value = text
        case .binary, .transformable:
            // Line breaks and indentation are allowed (Core Data wraps base64), nothing else that is not base64.
            guard let bytes = Data(base64Encoded: String(trimmed.filter { !$0.isWhitespace })) else { return refused("base64") }
            if self == .transformable { return .success(bytes.storeValue) }
            value = bytes
        case .uuid: guard let uuid = UUID(uuidString: trimmed) else { return refused("a UUID") }; value = uuid
        case .uri: guard let url = URL(string: trimmed) else { return refused("a URI") }; value = url
        }
        do {
            return .success(try ValueConversion.storeValue(value, for: attribute))
        } catch {
            return .failure(XMLStoreValueRefusal(reason: "\(error)"))
        }
    }

    /// The text Core Data writes for a row value of this type; nil for NULL (the attribute is left out).
    func text(of value: StoreValue) -> String? {
        if case .blob(let bytes) = value.storage, self == .binary || self == .transformable {
            return bytes.base64EncodedString()
        }
        guard let swift = ValueConversion.swiftValue(value, for: attributeType) else { return nil }
        switch swift {
        case let flag as Bool: return flag ? "1" : "0"
        case let date as Date: return "\(date.timeIntervalSinceReferenceDate)"
        case let number as Double: return "\(number)"
        case let number as Float: return "\(number)"
        case let number as Decimal: return number.description
        case let uuid as UUID: return uuid.uuidString
        case let url as URL: return url.absoluteString
        default: return "\(swift)"
        }
    }

    /// Digits with an optional sign, point and exponent, and nothing else (Foundation's parser stops at the
    /// first character it cannot take and returns what came before).
    private static func isDecimalNumeral(_ text: String) -> Bool {
        text.wholeMatch(of: /[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?/) != nil
    }
}

/// Why an attribute's text is not a value of its type.
struct XMLStoreValueRefusal: Error {
    var reason: String
}
