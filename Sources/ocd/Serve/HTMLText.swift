import Foundation

/// The one way text from a store, a model or a request reaches a page or the diagram: every character HTML
/// gives a meaning to (`&<>"'`) written as an entity, so the text is safe in element content and in quoted
/// attribute values alike.
enum HTMLText {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by their character references.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            // Control characters other than tab and newline have no place in a page (XML 1.0 forbids them in
            // the SVG), so they are shown as their code.
            case _ where character.value < 0x20 && character != "\t" && character != "\n":
                out += "\\u{\(String(character.value, radix: 16))}"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// `text` percent-encoded for one path segment or query value of a link (then escaped for the attribute
    /// it sits in by ``escaped(_:)``): everything but unreserved characters is encoded.
    static func urlComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// RFC 3986's unreserved characters, ASCII only.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
