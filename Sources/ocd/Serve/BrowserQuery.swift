import Foundation

/// A request's query string, or a posted form's body, read as a form sends it: `name=value` pairs joined by `&`, `+` for a space and
/// `%XX` escapes decoded. Hummingbird's own reading keeps `+`, which a browser's GET form uses for spaces.
struct BrowserQuery {
    /// Each name's last value.
    private(set) var values: [String: String] = [:]

    /// Reads `query` (the part after `?`, or nil for none); pairs that do not decode are left out.
    init(_ query: String?) {
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decoded(parts[0]) else { continue }
            values[name] = parts.count > 1 ? Self.decoded(parts[1]) ?? "" : ""
        }
    }

    subscript(name: String) -> String? { values[name] }

    /// A form-encoded component decoded; nil when its `%` escapes are not UTF-8.
    static func decoded(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
