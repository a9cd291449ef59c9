import Foundation

/// Converts the text of a model file's `defaultValueString` into the Swift value the attribute's type
/// names (see ``AttributeType``).
enum XcodeModelValue {
    static func defaultValue(_ text: String, type: AttributeType, entity: String,
                             attribute: String) throws -> (any Sendable)? {
        func invalid() -> ModelError {
            .invalidDefaultValue(entity: entity, attribute: attribute,
                                 reason: "'\(text)' is not a valid \(type.rawValue) value")
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16:
            guard let value = integer(trimmed).flatMap({ Int16(exactly: $0) }) else { throw invalid() }
            return value
        case .integer32:
            guard let value = integer(trimmed).flatMap({ Int32(exactly: $0) }) else { throw invalid() }
            return value
        case .integer64:
            guard let value = integer(trimmed) else { throw invalid() }
            return value
        case .double:
            guard let value = Double(trimmed) ?? booleanSpelling(trimmed).map({ $0 ? 1 : 0 }) else { throw invalid() }
            return value
        case .float:
            guard let value = Float(trimmed) ?? booleanSpelling(trimmed).map({ $0 ? 1 : 0 }) else { throw invalid() }
            return value
        case .decimal:
            guard let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")),
                  !value.isNaN else { throw invalid() }
            return value
        case .boolean:
            switch trimmed {
            case "YES", "yes", "true", "TRUE", "1": return true
            case "NO", "no", "false", "FALSE", "0": return false
            default: throw invalid()
            }
        case .string:
            return text
        case .date:
            // Xcode stores dates as seconds since 2001-01-01 00:00:00 UTC.
            guard let seconds = Double(trimmed), seconds.isFinite else { throw invalid() }
            return Date(timeIntervalSinceReferenceDate: seconds)
        case .uuid:
            guard let value = UUID(uuidString: trimmed) else { throw invalid() }
            return value
        case .uri:
            guard let value = URL(string: trimmed) else { throw invalid() }
            return value
        case .binaryData, .transformable, .objectID, .composite:
            // Xcode offers no default for these (a composite's elements have theirs); a stray value is ignored rather than guessed at.
            return nil
        }
    }

    /// An integer written as "42" or, as some older files do, "42.0"; or Xcode's boolean spelling "NO" or
    /// "YES" (left by an attribute that was Boolean before), read as 0 or 1 as Core Data loads such a model
    /// (inferred: docs/INTEROP.md, "Default values").
    private static func integer(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        if let value = Double(text), let exact = Int64(exactly: value) { return exact }
        return booleanSpelling(text).map { $0 ? 1 : 0 }
    }

    /// Xcode's spelling of a boolean default value, as a boolean; nil for any other text.
    private static func booleanSpelling(_ text: String) -> Bool? {
        switch text {
        case "YES": true
        case "NO": false
        default: nil
        }
    }
}
