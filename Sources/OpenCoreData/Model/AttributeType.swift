import Foundation

/// The type of an attribute, as in an Xcode data model.
///
/// Each case names the Swift type that `value(forKey:)` returns for it, and the SQLite column type the
/// store uses (see docs/STORE-LAYOUT.md).
public enum AttributeType: String, Sendable, Hashable, CaseIterable {
    /// `Int16`
    case integer16 = "Integer 16"
    /// `Int32`
    case integer32 = "Integer 32"
    /// `Int64`
    case integer64 = "Integer 64"
    /// `Decimal`
    case decimal = "Decimal"
    /// `Double`
    case double = "Double"
    /// `Float`
    case float = "Float"
    /// `String`
    case string = "String"
    /// `Bool`
    case boolean = "Boolean"
    /// `Date`, stored as seconds since 2001-01-01 00:00:00 UTC.
    case date = "Date"
    /// `Data`
    case binaryData = "Binary"
    /// `UUID`, stored as 16 bytes.
    case uuid = "UUID"
    /// `URL`, stored as its absolute string.
    case uri = "URI"
    /// Any value the attribute's ``ValueTransformer`` takes (Foundation values by default), stored as the
    /// bytes the transformer makes (see ``AttributeDescription/valueTransformerName``).
    case transformable = "Transformable"
    /// A managed object ID (used by derived and expression attributes; rarely stored).
    case objectID = "ObjectID"
    /// A `[String: Any]` of named elements (Core Data's composite attributes): the attribute is a
    /// ``CompositeAttributeDescription``, and each element is stored in a column of its own.
    case composite = "Composite"

    /// Core Data's numeric code for the type, which enters the version hash.
    public var typeCode: Int32 {
        switch self {
        case .integer16: return 100
        case .integer32: return 200
        case .integer64: return 300
        case .decimal: return 400
        case .double: return 500
        case .float: return 600
        case .string: return 700
        case .boolean: return 800
        case .date: return 900
        case .binaryData: return 1000
        case .uuid: return 1100
        case .uri: return 1200
        case .transformable: return 1800
        case .objectID: return 2000
        case .composite: return 2100
        }
    }

    /// The declared column type in the SQLite table.
    public var sqlColumnType: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .decimal: return "DECIMAL"
        case .double, .float: return "FLOAT"
        case .string, .uri: return "VARCHAR"
        case .date: return "TIMESTAMP"
        case .binaryData, .uuid, .transformable: return "BLOB"
        case .objectID: return "INTEGER"
        // No column of its own: its elements have theirs (StoreSchema).
        case .composite: return ""
        }
    }

    var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64: return true
        default: return false
        }
    }

    var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .boolean: return true
        default: return false
        }
    }

    /// The attribute type named by an Xcode model file (`attributeType="Integer 32"`).
    public init?(modelFileName: String) {
        if let match = AttributeType(rawValue: modelFileName) {
            self = match
            return
        }
        switch modelFileName {
        case "Binary Data": self = .binaryData
        case "Integer16": self = .integer16
        case "Integer32": self = .integer32
        case "Integer64": self = .integer64
        default: return nil
        }
    }
}
