import Foundation

/// One value of an imported row as the file wrote it: CSV fields are always text, JSON Lines values
/// keep their JSON type. ``AttributeValueConverter`` turns it into an attribute's type.
enum ImportField: Sendable, Equatable, Decodable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case text(String)
    /// A JSON array or object: nothing an attribute holds.
    case nested

    init(from decoder: Decoder) throws {
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
        } else {
            self = .nested
        }
    }

    /// The value as the file wrote it, for messages.
    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return "\(value)"
        case .number(let value): return "\(value)"
        case .text(let value): return "'\(TerminalText.escaped(value))'"
        case .nested: return "a nested JSON value"
        }
    }
}
