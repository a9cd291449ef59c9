import Foundation
import OpenCoreData

/// Attribute values to ``SyncValue`` and back, by the attribute's type.
enum SyncValueConversion {
    /// The wire form of `value` (what `value(forKey:)` returned) of `attribute`.
    ///
    /// - Throws: ``SyncError/invalidServerChange(entity:key:recordID:reason:)`` is never thrown here; a
    ///   Transformable value its transformer refuses throws the library's `ObjectGraphError`.
    static func syncValue(_ value: Any?, of attribute: AttributeDescription) throws -> SyncValue {
        guard let value else { return .null }
        switch attribute.attributeType {
        case .integer16: return (value as? Int16).map { .integer(Int64($0)) } ?? .null
        case .integer32: return (value as? Int32).map { .integer(Int64($0)) } ?? .null
        case .integer64: return (value as? Int64).map { .integer($0) } ?? .null
        case .decimal: return (value as? Decimal).map { .decimal(NSDecimalNumber(decimal: $0).description(withLocale: Locale(identifier: "en_US_POSIX"))) } ?? .null
        case .double: return (value as? Double).map { .double($0) } ?? .null
        case .float: return (value as? Float).map { .double(Double($0)) } ?? .null
        case .string: return (value as? String).map { .string($0) } ?? .null
        case .boolean: return (value as? Bool).map { .bool($0) } ?? .null
        case .date: return (value as? Date).map { .date($0.timeIntervalSinceReferenceDate) } ?? .null
        case .binaryData: return (value as? Data).map { .data($0) } ?? .null
        case .uuid: return (value as? UUID).map { .uuid($0) } ?? .null
        case .uri: return (value as? URL).map { .uri($0.absoluteString) } ?? .null
        case .transformable: return .data(try TransformableValue.storedBytes(value, for: attribute))
        case .objectID, .composite: return .null
        }
    }

    /// The value to set for `attribute` from its wire form.
    ///
    /// - Throws: ``SyncError/invalidServerChange(entity:key:recordID:reason:)`` when the value's kind does not
    ///   fit the attribute's type, or a number does not fit its width.
    static func modelValue(_ value: SyncValue, for attribute: AttributeDescription, object: ManagedObjectID,
                           recordID: UUID) throws -> Any? {
        if let reason = value.misfit(for: attribute) {
            throw SyncError.invalidServerChange(entity: object.entity.name, key: attribute.name, recordID: recordID, reason: reason)
        }
        // Fits, as checked above: each case below only converts.
        switch (attribute.attributeType, value) {
        case (.integer16, .integer(let number)): return Int16(truncatingIfNeeded: number)
        case (.integer32, .integer(let number)): return Int32(truncatingIfNeeded: number)
        case (.integer64, .integer(let number)): return number
        case (.decimal, .decimal(let text)): return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        case (.double, .double(let number)): return number
        case (.float, .double(let number)): return Float(number)
        case (.string, .string(let text)): return text
        case (.boolean, .bool(let flag)): return flag
        case (.date, .date(let seconds)): return Date(timeIntervalSinceReferenceDate: seconds)
        case (.binaryData, .data(let bytes)): return bytes
        case (.uuid, .uuid(let id)): return id
        case (.uri, .uri(let text)): return URL(string: text)
        case (.transformable, .data(let bytes)):
            return try TransformableValue.value(fromStoredBytes: bytes, for: attribute, of: object)
        default: return nil   // .null, which fits any attribute
        }
    }
}
