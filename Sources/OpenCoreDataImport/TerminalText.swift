/// Text from a store or an import file made safe to print: control characters (C0, DEL and C1, which
/// include the escape that starts terminal control sequences), the line and paragraph separators, and the
/// bidirectional formatting characters are written as Swift-style escapes, so a stored value can neither
/// move the cursor, change the terminal's state, start a line for readers that split on every Unicode
/// newline, nor reorder the text printed after it (as a right-to-left override does).
public enum TerminalText {
    /// `text` with every control character escaped (`\n`, `\t`, `\r`, otherwise `\u{1B}`); other
    /// characters as they are. With `keepingTabs`, tabs stay (they separate the columns of a line and
    /// move the cursor forward only).
    public static func escaped(_ text: String, keepingTabs: Bool = false) -> String {
        func escapes(_ scalar: Unicode.Scalar) -> Bool { isControl(scalar) && !(keepingTabs && scalar == "\t") }
        guard text.unicodeScalars.contains(where: escapes) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case _ where !escapes(scalar): out.unicodeScalars.append(scalar)
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(scalar): out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `scalar` is escaped on output: C0, DEL, C1, U+2028 and U+2029, and the bidirectional
    /// marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A…U+202E, U+2066…U+2069).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
