import Foundation

/// One property's value as it travels between replicas: an attribute's value, or a relationship's
/// destination(s) named by record ID (a replica's own primary keys never leave it).
///
/// On the wire each value is a one-key JSON object whose key says its kind (`{"int": 5}`, `{"ref": "…"}`,
/// `{"null": true}`), so that a value's type survives JSON's few types (a date is not a double, binary data
/// is not text) and a server can check it against the model without guessing.
public enum SyncValue: Sendable, Hashable, Codable {
    /// No value (an optional attribute left empty, a to-one relationship with no destination).
    case null
    /// A Boolean attribute.
    case bool(Bool)
    /// An Integer 16, 32 or 64 attribute.
    case integer(Int64)
    /// A Double or Float attribute.
    case double(Double)
    /// A Decimal attribute, as its exact decimal text.
    case decimal(String)
    /// A String attribute.
    case string(String)
    /// A Date attribute, as seconds since 2001-01-01 00:00:00 UTC (Core Data's reference date).
    case date(Double)
    /// A Binary Data or Transformable attribute's stored bytes.
    case data(Data)
    /// A UUID attribute.
    case uuid(UUID)
    /// A URI attribute, as its absolute string.
    case uri(String)
    /// A to-one relationship's destination.
    case reference(UUID)
    /// A to-many relationship's destinations (sorted for unordered relationships, in order for ordered ones).
    case references([UUID])

    private enum Kind: String, CodingKey, CaseIterable {
        case null, bool, int, double, decimal, string, date, data, uuid, uri, ref, refs
    }

    /// Reads the one-key object this type writes.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the object has no key or more than one, or a key this
    ///   type does not write; `DecodingError.typeMismatch` when the value does not have the key's type.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: Kind.self)
        guard container.allKeys.count == 1, let kind = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "a sync value is an object with exactly one of the keys \(Kind.allCases.map(\.rawValue))"))
        }
        switch kind {
        case .null: self = .null
        case .bool: self = .bool(try container.decode(Bool.self, forKey: kind))
        case .int: self = .integer(try container.decode(Int64.self, forKey: kind))
        case .double: self = .double(try container.decode(Double.self, forKey: kind))
        case .decimal: self = .decimal(try container.decode(String.self, forKey: kind))
        case .string: self = .string(try container.decode(String.self, forKey: kind))
        case .date: self = .date(try container.decode(Double.self, forKey: kind))
        case .data: self = .data(try container.decode(Data.self, forKey: kind))
        case .uuid: self = .uuid(try container.decode(UUID.self, forKey: kind))
        case .uri: self = .uri(try container.decode(String.self, forKey: kind))
        case .ref: self = .reference(try container.decode(UUID.self, forKey: kind))
        case .refs: self = .references(try container.decode([UUID].self, forKey: kind))
        }
    }

    /// Writes the value as a one-key object.
    ///
    /// - Throws: `EncodingError.invalidValue` for a double that is not finite (JSON has no spelling for it).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Kind.self)
        switch self {
        case .null: try container.encode(true, forKey: .null)
        case .bool(let value): try container.encode(value, forKey: .bool)
        case .integer(let value): try container.encode(value, forKey: .int)
        case .double(let value): try container.encode(value, forKey: .double)
        case .decimal(let value): try container.encode(value, forKey: .decimal)
        case .string(let value): try container.encode(value, forKey: .string)
        case .date(let value): try container.encode(value, forKey: .date)
        case .data(let value): try container.encode(value, forKey: .data)
        case .uuid(let value): try container.encode(value, forKey: .uuid)
        case .uri(let value): try container.encode(value, forKey: .uri)
        case .reference(let value): try container.encode(value, forKey: .ref)
        case .references(let value): try container.encode(value, forKey: .refs)
        }
    }
}

extension SyncValue {
    /// The kind's name, for messages (`integer`, `reference`, …).
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "Boolean"
        case .integer: "integer"
        case .double: "floating-point"
        case .decimal: "decimal"
        case .string: "string"
        case .date: "date"
        case .data: "binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .reference: "reference"
        case .references: "list of references"
        }
    }
}
