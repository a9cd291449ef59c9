import Foundation
import OpenCoreDataImport
import OpenCoreData

/// How `inspect` and `fetch` write attribute values: plain text (control characters escaped, so a stored
/// value cannot drive the terminal), or JSON (dates in ISO 8601 with their fractional seconds, decimals
/// with all their digits, objects as their URI, binary data as base64, collections as arrays).
enum ValueText {
    static func plain(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let date as Date: return iso8601(date)
        case let object as ManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let objects as Set<ManagedObject>: return "\(objects.count) objects"
        case let objects as [ManagedObject]: return "\(objects.count) objects"
        case let values as [Any]: return "[" + values.map { plain($0) }.joined(separator: ", ") + "]"
        case let data as Data: return "<\(data.count) bytes>"
        case let string as String: return TerminalText.escaped(string)
        case let some?: return TerminalText.escaped("\(some)")
        }
    }

    static func json(_ value: Any?) -> String {
        switch value {
        case nil: return "null"
        case let bool as Bool: return bool ? "true" : "false"
        case let date as Date: return quoted(iso8601(date))
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
        case let some?: return quoted("\(some)")
        }
    }

    /// `2011-10-21T09:30:00Z`, with the fraction of a second when the date has one (to the microsecond,
    /// trailing zeros left off): Core Data keeps dates as seconds in a double, so sub-second parts are
    /// real data.
    static func iso8601(_ date: Date) -> String {
        var whole = date.timeIntervalSinceReferenceDate.rounded(.down)
        var micros = Int(((date.timeIntervalSinceReferenceDate - whole) * 1_000_000).rounded())
        if micros == 1_000_000 {
            whole += 1
            micros = 0
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let text = formatter.string(from: Date(timeIntervalSinceReferenceDate: whole))
        guard micros != 0, text.hasSuffix("Z") else { return text }
        var fraction = String(format: "%06d", micros)
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return text.dropLast() + "." + fraction + "Z"
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

}
