/// Text from a store or an import file made safe to print: control characters (C0, DEL and C1, which
/// include the escape that starts terminal control sequences) are written as Swift-style escapes, so a
/// stored value can neither move the cursor nor change the terminal's state.
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

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
