import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key press, decoded from the bytes a terminal sends.
enum Key: Equatable, Sendable {
    case up, down, pageUp, pageDown, enter, escape, backspace
    case character(Character)
}

/// Reads stdin on a thread of its own and hands each key to `onKey`.
enum KeyReader {
    static func start(_ onKey: @escaping @Sendable (Key) -> Void) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count <= 0 { onKey(.character("q")); return }   // stdin closed: leave cleanly
                for key in decode(Array(buffer[0..<count])) { onKey(key) }
            }
        }
        thread.start()
    }

    /// Decodes one read's bytes: escape sequences for arrows and paging (both `ESC [` and `ESC O` forms),
    /// a lone ESC, and UTF-8 text.
    static func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B {
                let rest = bytes[(index + 1)...]
                if rest.starts(with: [0x5B, 0x41]) || rest.starts(with: [0x4F, 0x41]) { keys.append(.up); index += 3; continue }
                if rest.starts(with: [0x5B, 0x42]) || rest.starts(with: [0x4F, 0x42]) { keys.append(.down); index += 3; continue }
                if rest.starts(with: [0x5B, 0x35, 0x7E]) { keys.append(.pageUp); index += 4; continue }
                if rest.starts(with: [0x5B, 0x36, 0x7E]) { keys.append(.pageDown); index += 4; continue }
                if rest.first == 0x5B || rest.first == 0x4F {
                    // Another sequence (left, right, home…): skip to its final byte.
                    var end = index + 2
                    while end < bytes.count && !(0x40...0x7E).contains(bytes[end]) { end += 1 }
                    index = end + 1
                    continue
                }
                keys.append(.escape)
                index += 1
                continue
            }
            switch byte {
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            default:
                // Gather a whole UTF-8 scalar.
                var length = 1
                if byte >= 0xF0 { length = 4 } else if byte >= 0xE0 { length = 3 } else if byte >= 0xC0 { length = 2 }
                let end = min(bytes.count, index + length)
                if let text = String(bytes: bytes[index..<end], encoding: .utf8), let character = text.first {
                    keys.append(.character(character))
                }
                index = end
                continue
            }
            index += 1
        }
        return keys
    }
}
