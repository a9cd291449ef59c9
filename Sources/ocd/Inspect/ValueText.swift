import Foundation
import OpenCoreDataImport
import OpenCoreData

/// How `inspect` and `fetch` write attribute values: plain text (control characters escaped, so a stored
/// value cannot drive the terminal), or JSON (dates in ISO 8601 with their fractional seconds, decimals
/// with all their digits, objects as their URI, binary data as base64, arrays and sets as arrays (a set sorted), dictionaries as objects with sorted keys);
/// dates through ``DateText``, so no stored value, however far from any calendar, traps.
enum ValueText {
    static func plain(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case is NSNull: return "null"
        case let date as Date: return DateText.iso8601(date)
        case let object as ManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let objects as Set<ManagedObject>: return "\(objects.count) objects"
        case let objects as [ManagedObject]: return "\(objects.count) objects"
        case let values as [Any]: return "[" + values.map { plain($0) }.joined(separator: ", ") + "]"
        case let values as Set<AnyHashable>: return "{" + values.map { plain($0.base) }.sorted().joined(separator: ", ") + "}"
        case let dictionary as [String: Any]:
            return "[" + dictionary.sorted { $0.key < $1.key }
                .map { TerminalText.escaped($0.key) + ": " + plain($0.value) }.joined(separator: ", ") + "]"
        case let data as Data: return "<\(data.count) bytes>"
        case let string as String: return TerminalText.escaped(string)
        case let some?: return TerminalText.escaped("\(some)")
        }
    }

    static func json(_ value: Any?) -> String {
        switch value {
        case nil: return "null"
        case is NSNull: return "null"
        case let bool as Bool: return bool ? "true" : "false"
        case let date as Date: return quoted(DateText.iso8601(date))
        case let string as String: return quoted(string)
        case let double as Double: return double.isFinite ? "\(double)" : "null"
        case let float as Float: return float.isFinite ? "\(float)" : "null"
        case let integer as any BinaryInteger: return "\(integer)"
        // Decimal's description spells every digit, without an exponent; NaN (a stored value no Decimal holds) is no JSON number.
        case let decimal as Decimal: return decimal.isNaN ? "null" : "\(decimal)"
        case let uuid as UUID: return quoted(uuid.uuidString)
        case let url as URL: return quoted(url.absoluteString)
        case let data as Data: return quoted(data.base64EncodedString())
        case let object as ManagedObject: return quoted(object.objectID.uriRepresentation().absoluteString)
        case let objects as Set<ManagedObject>:
            return "[" + objects.map { json($0) }.sorted().joined(separator: ",") + "]"
        case let objects as [ManagedObject]: return "[" + objects.map { json($0) }.joined(separator: ",") + "]"
        case let values as [Any]: return "[" + values.map { json($0) }.joined(separator: ",") + "]"
        // A set has no order: its members print sorted by their JSON text, so equal sets print alike.
        case let values as Set<AnyHashable>: return "[" + values.map { json($0.base) }.sorted().joined(separator: ",") + "]"
        case let dictionary as [String: Any]:
            return "{" + dictionary.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + json($0.value) }.joined(separator: ",") + "}"
        case let some?: return quoted("\(some)")
        }
    }

    /// A JSON string literal, with every control character escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // C0, DEL and C1 (whose U+009B starts a terminal control sequence too), the line separators and
            // the bidirectional controls (TerminalText.isControl): JSON may hold all but C0 as they are, a
            // terminal and a reader splitting lines on every Unicode newline must not receive them.
            case _ where TerminalText.isControl(scalar):
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

}
