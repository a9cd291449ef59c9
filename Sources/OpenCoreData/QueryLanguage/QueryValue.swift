import Foundation

/// A constant inside a predicate or expression, kept in a `Sendable` form.
///
/// Arguments given as `Any` (to `%@`, `%d`, substitution variables) are converted once, when the format is
/// parsed, so a ``QueryPredicate`` can cross concurrency domains. Managed objects become their object IDs.
///
/// ```swift
/// let value = try QueryValue(any: 42)   // .int(42)
/// ```
public enum QueryValue: Sendable, Hashable {
    /// `nil`, `NSNull`.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer that fits `Int64`.
    case int(Int64)
    /// A `Double` or `Float` (or an unsigned integer too large for `Int64`).
    case double(Double)
    /// A `Decimal`.
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URL.
    case url(URL)
    /// An object ID; a managed object given as a value becomes its ID.
    case objectID(ManagedObjectID)
    /// Arrays and sets alike (sets are kept in a stable order of their printed form).
    case array([QueryValue])

    /// Converts a Swift value; throws for values the query language cannot hold (closures, arbitrary objects).
    ///
    /// - Throws: ``QueryLanguageError`` naming the value's type when the query language cannot hold it.
    public init(any value: Any?) throws {
        guard let converted = QueryValue.convert(value) else {
            throw QueryLanguageError.semantic( "cannot use a value of type \(type(of: value as Any)) as a constant")
        }
        self = converted
    }

    /// The conversion, or nil for an unsupported value.
    static func convert(_ value: Any?) -> QueryValue? {
        guard let value else { return .null }
        // Text first: attribute values are mostly strings, and each failed cast below costs a runtime lookup.
        // Nothing else casts to String but NSString, which is text either way.
        if let text = value as? String { return .string(text) }
        if let optional = value as? any OptionalProtocol {
            return convert(optional.wrappedAny)
        }
        switch value {
        case is NSNull: return .null
        case let v as QueryValue: return v
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as UInt8: return .int(Int64(v))
        case let v as UInt16: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as UInt: return Int64(exactly: v).map(QueryValue.int) ?? .double(Double(v))
        case let v as UInt64: return Int64(exactly: v).map(QueryValue.int) ?? .double(Double(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as Decimal: return .decimal(v)
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as Character: return .string(String(v))
        case let v as Date: return .date(v)
        case let v as Data: return .data(v)
        case let v as UUID: return .uuid(v)
        case let v as URL: return .url(v)
        case let v as ManagedObjectID: return .objectID(v)
        case let v as ManagedObject: return .objectID(v.objectID)
        case let v as StoredRowObject: return .objectID(v.objectID)
        case let v as NSNumber: return v.queryValue
        case let v as [Any]: return convertCollection(v, sort: false)
        case let v as any Collection:
            // Sets and other unordered collections: a stable order keeps equal predicates equal.
            return convertCollection(Array(v.map { $0 as Any }), sort: !(v is any RandomAccessCollection))
        default: return nil
        }
    }

    private static func convertCollection(_ values: [Any], sort: Bool) -> QueryValue? {
        var converted: [QueryValue] = []
        for element in values {
            guard let value = convert(element) else { return nil }
            converted.append(value)
        }
        if sort { converted.sort { $0.formatText < $1.formatText } }
        return .array(converted)
    }

    /// The value as a plain Swift value, the kind `evaluate` returns.
    var swiftValue: Any? {
        switch self {
        case .null: return nil
        case .bool(let v): return v
        case .int(let v): return Int(exactly: v) ?? v
        case .double(let v): return v
        case .decimal(let v): return v
        case .string(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .url(let v): return v
        case .objectID(let v): return v
        case .array(let v): return v.map { $0.swiftValue as Any }
        }
    }

    /// How the constant prints in a format string (parses back to an equal constant, except object IDs).
    var formatText: String {
        switch self {
        case .null: return "nil"
        case .bool(let v): return v ? "YES" : "NO"
        case .int(let v):
            // -9223372036854775808 would read as minus a number too large for Int64, so a double.
            return v == Int64.min ? "CAST(\"\(v)\", \"NSNumber\")" : String(v)
        case .double(let v): return QueryValue.formatDouble(v)
        case .decimal(let v): return "CAST(\(QueryLexer.quote(v.description)), \"NSDecimalNumber\")"
        case .string(let v): return QueryLexer.quote(v)
        case .date(let v): return "CAST(\(QueryValue.formatDouble(v.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let v): return "CAST(\(QueryLexer.quote(v.base64EncodedString())), \"NSData\")"
        case .uuid(let v): return "CAST(\(QueryLexer.quote(v.uuidString)), \"NSUUID\")"
        case .url(let v): return "CAST(\(QueryLexer.quote(v.absoluteString)), \"NSURL\")"
        case .objectID(let v): return "CAST(\(QueryLexer.quote(v.uriRepresentation().absoluteString)), \"NSManagedObjectID\")"
        case .array(let v): return "{" + v.map(\.formatText).joined(separator: ", ") + "}"
        }
    }

    static func formatDouble(_ value: Double) -> String {
        if value.isNaN { return "CAST(\"nan\", \"NSNumber\")" }
        if value.isInfinite { return value > 0 ? "CAST(\"inf\", \"NSNumber\")" : "CAST(\"-inf\", \"NSNumber\")" }
        var text = value.description
        // Keep a decimal point so the constant parses back as a double, not an integer.
        if !text.contains(".") && !text.contains("e") { text += ".0" }
        return text
    }
}

extension NSNumber {
    /// Booleans, integers and floating-point numbers as Foundation boxed them.
    var queryValue: QueryValue {
        let type = String(cString: objCType)
        switch type {
        case "B": return .bool(boolValue)
        case "f", "d": return .double(doubleValue)
        case "Q": return Int64(exactly: uint64Value).map(QueryValue.int) ?? .double(doubleValue)
        default: return .int(int64Value)
        }
    }
}
