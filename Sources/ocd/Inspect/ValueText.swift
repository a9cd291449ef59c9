import Foundation
import OpenCoreData

/// How `inspect` and `fetch` write attribute values: plain text, or JSON (dates in ISO 8601, objects as
/// their URI, binary data as base64).
enum ValueText {
    static func plain(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let date as Date: return iso8601(date)
        case let object as ManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let objects as Set<ManagedObject>: return "\(objects.count) objects"
        case let objects as [ManagedObject]: return "\(objects.count) objects"
        case let data as Data: return "<\(data.count) bytes>"
        case let string as String: return string
        case let some?: return "\(some)"
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
        case let decimal as Decimal: return "\(decimal)"
        case let uuid as UUID: return quoted(uuid.uuidString)
        case let url as URL: return quoted(url.absoluteString)
        case let data as Data: return quoted(data.base64EncodedString())
        case let object as ManagedObject: return quoted(object.objectID.uriRepresentation().absoluteString)
        case let objects as Set<ManagedObject>:
            return "[" + objects.map { json($0) }.sorted().joined(separator: ",") + "]"
        case let objects as [ManagedObject]: return "[" + objects.map { json($0) }.joined(separator: ",") + "]"
        case let some?: return quoted("\(some)")
        }
    }

    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
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

    /// The value at a dotted key path, following to-one relationships (`details.closeDate`).
    static func value(of object: ManagedObject, keyPath: String) throws -> Any? {
        var current: Any? = object
        for key in keyPath.split(separator: ".", omittingEmptySubsequences: false) {
            guard let next = current as? ManagedObject else { return nil }
            current = try next.value(forKey: String(key))
        }
        return current
    }
}
