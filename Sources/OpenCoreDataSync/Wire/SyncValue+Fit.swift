import Foundation
import OpenCoreData

/// The one rule for whether a value fits an attribute, which the server checks pushes by and clients check
/// pulled changes by.
extension SyncValue {
    /// Why this value does not fit `attribute` (kind, integer width, decimal or URL text, finite date), or
    /// nil when it does. The server refuses a push with such a value; a client refuses such a pulled change.
    public func misfit(for attribute: AttributeDescription) -> String? {
        let value = self
        switch (attribute.attributeType, value) {
        case (_, .null): return nil
        case (.integer16, .integer(let number)): return Int16(exactly: number) == nil ? "\(number) does not fit Integer 16" : nil
        case (.integer32, .integer(let number)): return Int32(exactly: number) == nil ? "\(number) does not fit Integer 32" : nil
        case (.integer64, .integer): return nil
        case (.decimal, .decimal(let text)):
            return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) == nil ? "“\(text.prefix(40))” is not a decimal number" : nil
        case (.double, .double), (.float, .double): return nil
        case (.string, .string): return nil
        case (.boolean, .bool): return nil
        case (.date, .date(let seconds)): return seconds.isFinite ? nil : "a date is a finite number of seconds"
        case (.binaryData, .data), (.transformable, .data): return nil
        case (.uuid, .uuid): return nil
        case (.uri, .uri(let text)): return URL(string: text) == nil ? "“\(text.prefix(40))” is not a URL" : nil
        default: return "a \(value.kindName) value for a \(attribute.attributeType.rawValue) attribute"
        }
    }
}
