import Foundation

/// Text as an XML store holds it: escaped as in Xcode's model files (``XcodeModelWriter/escaped(_:)``),
/// after checking that XML can carry it at all.
enum XMLStoreText {
    /// The escaped text, or nil when it holds a character XML 1.0 cannot carry even escaped (control
    /// characters other than tab, newline and carriage return, U+FFFE, U+FFFF).
    static func escapedIfPossible(_ text: String) -> String? {
        guard text.unicodeScalars.allSatisfy(isCarried) else { return nil }
        return XcodeModelWriter.escaped(text)
    }

    /// Escaped text for names and metadata this library writes, leaving out characters XML cannot carry.
    static func escaped(_ text: String) -> String {
        XcodeModelWriter.escaped(String(String.UnicodeScalarView(text.unicodeScalars.filter(isCarried))))
    }

    private static func isCarried(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x20 ? scalar.value != 0xFFFE && scalar.value != 0xFFFF : scalar == "\t" || scalar == "\n" || scalar == "\r"
    }
}
