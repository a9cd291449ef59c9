import Foundation
import OpenCoreData

/// How pages show an attribute's value, as HTML: text escaped, dates in ISO 8601, binary data as its size
/// and first bytes in hex (an image as the image itself on an object page), anything else (a transformable
/// value) as its description.
enum ValueHTML {
    /// How many leading bytes of binary data are shown in hex.
    static let shownByteCount = 16

    /// `value` for a table cell: short, never an image (a page of 50 rows stays small).
    static func cell(_ value: Any?) -> String {
        switch value {
        case let data as Data: return bytesSummary(data)
        default: return text(value)
        }
    }

    /// `value` for an object page: binary data as an image when its first bytes say PNG, JPEG or GIF.
    static func full(_ value: Any?) -> String {
        guard let data = value as? Data else { return text(value) }
        guard let type = imageType(of: data) else { return bytesSummary(data) }
        let source = "data:\(type);base64,\(data.base64EncodedString())"
        return "<img class=\"stored\" src=\"\(HTMLText.escaped(source))\" alt=\"\(HTMLText.escaped(type)) image\"><br>"
            + bytesSummary(data)
    }

    /// A value other than binary data, escaped: `nil` set apart from the text "nil".
    static func text(_ value: Any?) -> String {
        switch value {
        case nil: return "<span class=\"nil\">nil</span>"
        case let date as Date: return HTMLText.escaped(DateText.iso8601(date))
        case let string as String: return HTMLText.escaped(string)
        case let uuid as UUID: return HTMLText.escaped(uuid.uuidString)
        case let url as URL: return HTMLText.escaped(url.absoluteString)
        case let some?: return HTMLText.escaped("\(some)")
        }
    }

    /// `<N bytes> 89 50 4e 47 …`: the size and the first ``shownByteCount`` bytes in hex.
    static func bytesSummary(_ data: Data) -> String {
        let hex = data.prefix(shownByteCount).map { String(format: "%02x", $0) }.joined(separator: " ")
        let more = data.count > shownByteCount ? " …" : ""
        return "<span class=\"bytes\">\(data.count) byte\(data.count == 1 ? "" : "s")</span> <code>\(hex)\(more)</code>"
    }

    /// The image type data's magic bytes announce (`image/png`, `image/jpeg`, `image/gif`), nil for others.
    static func imageType(of data: Data) -> String? {
        let head = [UInt8](data.prefix(8))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) { return "image/gif" }
        return nil
    }
}
