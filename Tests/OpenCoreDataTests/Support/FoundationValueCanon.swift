import Foundation

/// One text for a Foundation value however it was made (Swift values, or the NSObjects Foundation's
/// unarchiver returns): sets and dictionaries sorted, numbers and booleans by their double value. Two values
/// with the same text hold the same things.
enum FoundationValueCanon {
    static func text(_ value: Any?) -> String {
        guard let value, !(value is NSNull) else { return "null" }
        if let string = value as? String { return "s:\(string)" }
        if let data = value as? Data { return "d:\(data.base64EncodedString())" }
        if let date = value as? Date { return "t:\(date.timeIntervalSinceReferenceDate)" }
        if let url = value as? URL { return "u:\(url.absoluteString)" }
        if let uuid = value as? UUID { return "id:\(uuid.uuidString)" }
        if let uuid = value as? NSUUID { return "id:\(uuid.uuidString)" }
        if let flag = value as? Bool, type(of: value) == Bool.self { return "n:\(flag ? 1.0 : 0.0)" }
        if let number = value as? NSNumber { return "n:\(number.doubleValue)" }
        if let dictionary = value as? [String: Any] {
            return "{" + dictionary.keys.sorted().map { "\($0)=\(text(dictionary[$0]))" }.joined(separator: ",") + "}"
        }
        if let dictionary = value as? NSDictionary {
            let keys = dictionary.allKeys.map { "\($0)" }.sorted()
            return "{" + keys.map { "\($0)=\(text(dictionary[NSString(string: $0)] ?? dictionary[$0]))" }.joined(separator: ",") + "}"
        }
        if let set = value as? Set<AnyHashable> { return "<" + set.map { text($0.base) }.sorted().joined(separator: ",") + ">" }
        if let set = value as? NSSet { return "<" + set.allObjects.map { text($0) }.sorted().joined(separator: ",") + ">" }
        if let array = value as? [Any] { return "[" + array.map { text($0) }.joined(separator: ",") + "]" }
        if let array = value as? NSArray { return "[" + array.map { text($0) }.joined(separator: ",") + "]" }
        return "?\(type(of: value)):\(value)"
    }
}
