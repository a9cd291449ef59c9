import Foundation

/// The keys of a JSON object's top level, read from its text: JSON decoders keep one value of a key
/// written twice and say nothing, so a record whose key repeats is found here and refused.
enum JSONObjectKeys {
    /// The first top-level key of the object `text` (valid JSON) that appears a second time, unescaped;
    /// nil when every key appears once.
    static func firstRepeated(in text: String) -> String? {
        let bytes = Array(text.utf8)
        var seen = Set<String>()
        var depth = 0
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                // A string at the top level followed by ':' is a key.
                var next = index + 1
                while next < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[next]) { next += 1 }
                if depth == 1, next < bytes.count, bytes[next] == UInt8(ascii: ":"), index < bytes.count {
                    let literal = Data("[".utf8) + Data(bytes[start...index]) + Data("]".utf8)
                    if let key = (try? JSONDecoder().decode([String].self, from: literal))?.first, !seen.insert(key).inserted {
                        return key
                    }
                }
            default: break
            }
            index += 1
        }
        return nil
    }
}
