import Foundation

/// Converts between the Swift values that `value(forKey:)` speaks and the values a row holds.
///
/// The Swift type of each attribute type is fixed (see ``AttributeType``); setters accept any value that
/// converts without loss (an `Int` into an Integer 16 attribute if it fits, a `Float` into a Double…).
enum ValueConversion {
    static let referenceDateOffset: Double = 978_307_200

    /// The row value for a Swift value, or a typed error naming the attribute.
    static func storeValue(_ value: Any?, for attribute: AttributeDescription) throws -> StoreValue {
        guard let value else { return .null }
        // Fast paths: the exact Swift type of the attribute, without the general casts below.
        switch attribute.attributeType {
        case .string:
            if let v = value as? String {
                // SQLite's C strings end at NUL: refuse rather than store a shortened string.
                guard !containsNUL(v) else {
                    throw ObjectGraphError.typeMismatch(entity: attribute.entity?.name ?? "?", key: attribute.name,
                                                        expected: "a String without NUL characters (use Binary for bytes)",
                                                        actual: "a String containing NUL")
                }
                return v.storeValue
            }
        case .date:
            if let v = value as? Date {
                guard v.timeIntervalSinceReferenceDate.isFinite else { throw nonFinite(attribute, "\(v.timeIntervalSinceReferenceDate)") }
                return v.timeIntervalSinceReferenceDate.storeValue
            }
        case .boolean: if let v = value as? Bool { return (v ? 1 : 0).storeValue }
        case .double:
            if let v = value as? Double {
                guard !v.isNaN else { throw nonFinite(attribute, "NaN") }
                return v.storeValue
            }
        case .integer64: if let v = value as? Int64 { return v.storeValue }
        default: break
        }
        if value is NSNull { return .null }
        if let optional = value as? any OptionalProtocol {
            guard let wrapped = optional.wrappedAny else { return .null }
            return try storeValue(wrapped, for: attribute)
        }
        let entity = attribute.entity?.name ?? "?"
        func mismatch() -> ObjectGraphError {
            .typeMismatch(entity: entity, key: attribute.name, expected: swiftTypeName(attribute.attributeType),
                          actual: String(describing: type(of: value)))
        }
        func integer(_ min: Int64, _ max: Int64) throws -> StoreValue {
            let number: Int64
            switch value {
            case let v as Int: number = Int64(v)
            case let v as Int64: number = v
            case let v as Int32: number = Int64(v)
            case let v as Int16: number = Int64(v)
            case let v as Int8: number = Int64(v)
            case let v as UInt8: number = Int64(v)
            case let v as UInt16: number = Int64(v)
            case let v as UInt32: number = Int64(v)
            case let v as UInt:
                guard let exact = Int64(exactly: v) else { throw ObjectGraphError.valueOutOfRange(entity: entity, key: attribute.name, value: "\(v)") }
                number = exact
            case let v as UInt64:
                guard let exact = Int64(exactly: v) else { throw ObjectGraphError.valueOutOfRange(entity: entity, key: attribute.name, value: "\(v)") }
                number = exact
            case let v as Double:
                guard let exact = Int64(exactly: v) else { throw mismatch() }
                number = exact
            case let v as NSNumber:
                guard let exact = Int64(exactly: v.doubleValue) else { throw mismatch() }
                number = exact
            default: throw mismatch()
            }
            guard number >= min && number <= max else {
                throw ObjectGraphError.valueOutOfRange(entity: entity, key: attribute.name, value: "\(number)")
            }
            return number.storeValue
        }
        switch attribute.attributeType {
        case .integer16: return try integer(Int64(Int16.min), Int64(Int16.max))
        case .integer32: return try integer(Int64(Int32.min), Int64(Int32.max))
        case .integer64, .objectID: return try integer(Int64.min, Int64.max)
        case .boolean:
            switch value {
            case let v as Bool: return (v ? 1 : 0).storeValue
            case let v as Int where v == 0 || v == 1: return v.storeValue
            case let v as NSNumber: return (v.boolValue ? 1 : 0).storeValue
            default: throw mismatch()
            }
        case .double, .float:
            switch value {
            case let v as Double:
                guard !v.isNaN else { throw nonFinite(attribute, "NaN") }
                return v.storeValue
            case let v as Float:
                guard !v.isNaN else { throw nonFinite(attribute, "NaN") }
                return Double(v).storeValue
            case let v as Int: return Double(v).storeValue
            case let v as Int64: return Double(v).storeValue
            case let v as Int32: return Double(v).storeValue
            case let v as Int16: return Double(v).storeValue
            case let v as Decimal:
                guard !v.isNaN else { throw nonFinite(attribute, "NaN") }
                return nearestDouble(v).storeValue
            case let v as NSNumber:
                guard !v.doubleValue.isNaN else { throw nonFinite(attribute, "NaN") }
                return v.doubleValue.storeValue
            default: throw mismatch()
            }
        case .decimal:
            switch value {
            case let v as Decimal:
                guard !v.isNaN else { throw nonFinite(attribute, "NaN") }
                return try exactDecimal(v, attribute)
            case let v as Int: return try exactDecimal(Decimal(v), attribute)
            case let v as Int64: return try exactDecimal(Decimal(v), attribute)
            case let v as Int32: return try exactDecimal(Decimal(Int(v)), attribute)
            case let v as UInt: return try exactDecimal(Decimal(string: String(v)) ?? Decimal(v), attribute)
            case let v as UInt64: return try exactDecimal(Decimal(string: String(v)) ?? Decimal(v), attribute)
            case let v as Double:
                // Foundation's Decimal(Double) traps on infinities.
                guard v.isFinite else { throw nonFinite(attribute, "\(v)") }
                return try exactDecimal(Decimal(v), attribute)
            case let v as NSNumber:
                guard v.doubleValue.isFinite else { throw nonFinite(attribute, "\(v)") }
                return try exactDecimal(v.decimalValue, attribute)
            default: throw mismatch()
            }
        case .string:
            let string: String
            switch value {
            case let v as String: string = v
            case let v as Substring: string = String(v)
            case let v as NSString: string = v as String
            default: throw mismatch()
            }
            return try storeValue(string, for: attribute)
        case .date:
            guard let v = value as? Date else { throw mismatch() }
            guard v.timeIntervalSinceReferenceDate.isFinite else { throw nonFinite(attribute, "\(v.timeIntervalSinceReferenceDate)") }
            return v.timeIntervalSinceReferenceDate.storeValue
        case .transformable:
            return try TransformableValue.storeValue(value, for: attribute)
        case .composite:
            // A composite has no row value of its own: its elements are stored (CompositeValue).
            throw mismatch()
        case .binaryData:
            switch value {
            case let v as Data: return v.storeValue
            case let v as [UInt8]: return Data(v).storeValue
            default: throw mismatch()
            }
        case .uuid:
            guard let v = value as? UUID else { throw mismatch() }
            return uuidData(v).storeValue
        case .uri:
            guard let v = value as? URL else { throw mismatch() }
            return v.absoluteString.storeValue
        }
    }

    /// Whether a string holds a NUL character, which SQLite's C strings would end at.
    @inline(__always)
    static func containsNUL(_ string: String) -> Bool {
        // One memchr over the UTF-8 bytes where they are contiguous (native strings), instead of a
        // byte-at-a-time walk.
        if let found = string.utf8.withContiguousStorageIfAvailable({ bytes in
            bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
        }) {
            return found
        }
        return string.utf8.contains(0)
    }

    /// The Swift value of a row value (nil for NULL or an unreadable value).
    static func swiftValue(_ value: StoreValue, for type: AttributeType) -> Any? {
        switch value.storage {
        case .null: return nil
        case .int64(let v):
            switch type {
            case .integer16: return Int16(truncatingIfNeeded: v)
            case .integer32: return Int32(truncatingIfNeeded: v)
            case .integer64, .objectID: return v
            case .boolean: return v != 0
            case .double: return Double(v)
            case .float: return Float(v)
            case .decimal: return StoredDecimal.fromInteger(v)
            case .date: return Date(timeIntervalSinceReferenceDate: Double(v))
            case .string: return String(v)
            default: return nil
            }
        case .double(let v):
            switch type {
            case .double: return v
            case .float: return Float(v)
            case .date: return Date(timeIntervalSinceReferenceDate: v)
            case .decimal: return StoredDecimal.fromReal(v)
            case .integer16: return Int16(exactly: v.rounded(.towardZero))
            case .integer32: return Int32(exactly: v.rounded(.towardZero))
            case .integer64: return Int64(exactly: v.rounded(.towardZero))
            case .boolean: return v != 0
            case .string: return String(v)
            default: return nil
            }
        case .string(let v):
            switch type {
            case .string: return v
            case .uri: return URL(string: v)
            case .decimal: return StoredDecimal.fromText(v)
            case .date:
                return ISO8601DateFormatter().date(from: v)
            default: return nil
            }
        case .blob(let v):
            switch type {
            case .binaryData, .transformable: return v
            case .uuid: return v.count == 16 ? uuid(from: v) : nil
            case .string: return String(data: v, encoding: .utf8)
            default: return nil
            }
        }
    }

    /// NaN (and infinities where the type has none) cannot be stored faithfully: SQLite turns NaN into NULL.
    static func nonFinite(_ attribute: AttributeDescription, _ value: String) -> ObjectGraphError {
        .valueOutOfRange(entity: attribute.entity?.name ?? "?", key: attribute.name, value: value)
    }

    /// A decimal the store can keep exactly, or a typed error. The column has NUMERIC affinity: SQLite keeps
    /// any 64-bit integer exactly, but other numbers only to 15 significant digits (it converts them to
    /// REAL), so a decimal with more would come back changed. We refuse it instead.
    static func exactDecimal(_ value: Decimal, _ attribute: AttributeDescription) throws -> StoreValue {
        let text = digits(of: value)
        if let whole = Int64(text) { return whole.storeValue }
        var digits = text.filter(\.isNumber)
        while digits.first == "0" { digits.removeFirst() }
        if text.contains(".") { while digits.last == "0" { digits.removeLast() } }
        guard digits.count <= 15 else {
            throw ObjectGraphError.valueOutOfRange(entity: attribute.entity?.name ?? "?", key: attribute.name,
                                                   value: "\(text) (more than 15 significant digits, which SQLite does not keep)")
        }
        return nearestDouble(value, digits: text).storeValue
    }

    /// A decimal as the stores keep it and as queries compare with it: a whole value that fits as a 64-bit
    /// integer, any other as the double nearest its digits. Either store reads it back as those digits
    /// (``exactDecimal(_:_:)`` allows no more than a double keeps), and a query's constant is bound the same
    /// way, so equal decimals meet in SQL.
    static func decimalStoreValue(_ value: Decimal) -> StoreValue {
        let text = digits(of: value)
        if let whole = Int64(text) { return whole.storeValue }
        return nearestDouble(value, digits: text).storeValue
    }

    /// The double nearest a decimal, parsed from its digits, which rounds correctly (Foundation's
    /// `doubleValue` can miss by an ulp, and a decimal would then not meet its own stored value).
    static func nearestDouble(_ value: Decimal) -> Double {
        nearestDouble(value, digits: digits(of: value))
    }

    private static func nearestDouble(_ value: Decimal, digits: String) -> Double {
        Double(digits) ?? NSDecimalNumber(decimal: value).doubleValue
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// A decimal's plain digits (`-12.25`, `0.0000000001`), whatever the process's locale.
    private static func digits(of value: Decimal) -> String {
        NSDecimalNumber(decimal: value).description(withLocale: posix)
    }

    static func uuidData(_ uuid: UUID) -> Data {
        withUnsafeBytes(of: uuid.uuid) { Data($0) }
    }

    static func uuid(from data: Data) -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in _ = data.copyBytes(to: buffer) }
        return UUID(uuid: bytes)
    }

    static func swiftTypeName(_ type: AttributeType) -> String {
        switch type {
        case .integer16: return "Int16"
        case .integer32: return "Int32"
        case .integer64: return "Int64"
        case .decimal: return "Decimal"
        case .double: return "Double"
        case .float: return "Float"
        case .string: return "String"
        case .boolean: return "Bool"
        case .date: return "Date"
        case .binaryData: return "Data"
        case .transformable: return "a value its transformer takes"
        case .composite: return "[String: Any]"
        case .uuid: return "UUID"
        case .uri: return "URL"
        case .objectID: return "ManagedObjectID"
        }
    }
}

/// Lets conversion code see through `Optional` values hidden in `Any`.
protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    var wrappedAny: Any? {
        switch self {
        case .some(let value): return value
        case .none: return nil
        }
    }
}
