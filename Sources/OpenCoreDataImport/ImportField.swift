import Foundation

/// One value of an imported row as the file wrote it: CSV fields are always text, JSON Lines values
/// keep their JSON type. ``AttributeValueConverter`` turns it into an attribute's type.
public enum ImportField: Sendable, Equatable, Decodable, CustomStringConvertible {
    /// JSON `null`.
    case null
    /// A JSON boolean.
    case bool(Bool)
    /// A JSON number without a fraction or exponent that fits 64 bits.
    case integer(Int64)
    /// Any other JSON number.
    case number(Double)
    /// A CSV field, or a JSON string.
    case text(String)
    /// A JSON array: only a transformable attribute whose transformer archives property-list values holds one.
    case array([ImportField])
    /// A JSON object: only a transformable attribute whose transformer archives property-list values holds one.
    case object([String: ImportField])

    /// Reads one JSON value, arrays and objects with their members.
    ///
    /// - Throws: `DecodingError` when the decoder has no single JSON value to give.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .text(value)
        } else if let value = try? container.decode([ImportField].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ImportField].self))
        }
    }

    /// The value as a Foundation property-list value, what a keyed archive holds: `NSNull`, `Bool`, `Int`
    /// (`Int64` beyond it), `Double`, `String`, `[Any]` and `[String: Any]`, nested.
    public var propertyListValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let value): return value
        case .integer(let value): return Int(exactly: value) ?? value
        case .number(let value): return value
        case .text(let value): return value
        case .array(let values): return values.map(\.propertyListValue)
        case .object(let values): return values.mapValues(\.propertyListValue)
        }
    }

    /// The value as the file wrote it, for messages.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return "\(value)"
        case .number(let value): return "\(value)"
        case .text(let value): return "'\(TerminalText.escaped(value))'"
        case .array: return "a JSON array"
        case .object: return "a JSON object"
        }
    }
}
