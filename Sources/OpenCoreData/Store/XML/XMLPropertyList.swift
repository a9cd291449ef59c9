import Foundation

/// The XML property list inside an XML store's `<metadata>`, read from and written as XML elements
/// (`<dict>`, `<key>`, `<string>`, `<integer>`, `<real>`, `<true/>`, `<false/>`, `<data>`, `<date>`, `<array>`).
enum XMLPropertyList {
    /// The dictionary a `<plist>` (or a bare `<dict>`) element holds.
    ///
    /// - Throws: ``XMLStoreError/malformed(path:location:reason:)`` naming the element that is not a
    ///   property list value.
    static func dictionary(from node: XcodeModelXMLNode, path: String) throws -> [String: PropertyListValue] {
        let top = node.name == "plist" ? node.children.first : node
        guard let top, case .dictionary(let dictionary) = try value(of: top, path: path) else {
            throw XMLStoreError.malformed(path: path, location: node.location, reason: "the metadata is not a dictionary")
        }
        return dictionary
    }

    private static func value(of node: XcodeModelXMLNode, path: String) throws -> PropertyListValue {
        func bad(_ reason: String) -> XMLStoreError { .malformed(path: path, location: node.location, reason: "metadata: \(reason)") }
        let text = node.text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch node.name {
        case "dict":
            var result: [String: PropertyListValue] = [:]
            var pendingKey: String?
            for child in node.children {
                if child.name == "key" {
                    guard pendingKey == nil else { throw bad("two <key>s in a row") }
                    pendingKey = child.text
                } else {
                    guard let key = pendingKey else { throw bad("a <\(child.name)> without its <key>") }
                    result[key] = try value(of: child, path: path)
                    pendingKey = nil
                }
            }
            guard pendingKey == nil else { throw bad("a <key> without a value") }
            return .dictionary(result)
        case "array": return .array(try node.children.map { try value(of: $0, path: path) })
        case "string": return .string(node.text)
        case "integer":
            guard let number = Int64(text) else { throw bad("'\(text.prefix(40))' is not an integer") }
            return .integer(number)
        case "real":
            guard let number = Double(text) else { throw bad("'\(text.prefix(40))' is not a number") }
            return .real(number)
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "data":
            guard let bytes = Data(base64Encoded: String(text.filter { !$0.isWhitespace })) else { throw bad("the <data> is not base64") }
            return .data(bytes)
        case "date":
            guard let date = ISO8601DateFormatter().date(from: text) else { throw bad("'\(text.prefix(40))' is not an ISO 8601 date") }
            return .date(date)
        default: throw bad("a <\(node.name)>, which is no property list value")
        }
    }

    /// The dictionary as `<plist version="1.0">` elements, indented by `indent` spaces, as Core Data writes it.
    static func text(of dictionary: [String: PropertyListValue], indent: Int) -> String {
        var out = String(repeating: " ", count: indent) + "<plist version=\"1.0\">\n"
        append(.dictionary(dictionary), indent: indent + 4, to: &out)
        out += String(repeating: " ", count: indent) + "</plist>\n"
        return out
    }

    private static func append(_ value: PropertyListValue, indent: Int, to out: inout String) {
        let pad = String(repeating: " ", count: indent)
        switch value {
        case .dictionary(let dictionary):
            out += pad + "<dict>\n"
            for (key, element) in dictionary.sorted(by: { $0.key < $1.key }) {
                out += pad + "    <key>\(XMLStoreText.escaped(key))</key>\n"
                append(element, indent: indent + 4, to: &out)
            }
            out += pad + "</dict>\n"
        case .array(let values):
            out += pad + "<array>\n"
            for element in values { append(element, indent: indent + 4, to: &out) }
            out += pad + "</array>\n"
        case .string(let text): out += pad + "<string>\(XMLStoreText.escaped(text))</string>\n"
        case .integer(let number): out += pad + "<integer>\(number)</integer>\n"
        case .real(let number): out += pad + "<real>\(number)</real>\n"
        case .boolean(let flag): out += pad + (flag ? "<true/>\n" : "<false/>\n")
        case .data(let bytes): out += pad + "<data>\(bytes.base64EncodedString())</data>\n"
        case .date(let date): out += pad + "<date>\(ISO8601DateFormatter().string(from: date))</date>\n"
        case .uid, .other: break
        }
    }
}
