import Foundation

/// One token of a format string, with the character offset where it starts.
struct QueryToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// A bare word: a key, or a keyword (keywords are recognised case-insensitively by the parser).
        /// `escaped` is set for `#word`, which is always a key, never a keyword.
        case word(String, escaped: Bool)
        /// `@count`, `@sum`…
        case atWord(String)
        /// `$name`
        case variable(String)
        case integer(Int64)
        case double(Double)
        case string(String)
        /// `%@`, `%K`, `%d`…: which argument conversion.
        case argument(ArgumentKind)
        /// `%%`: a literal percent sign.
        case percent
        /// Operators and punctuation, normalised (`=` → `==`, `<>` → `!=`, `=<` → `<=`, `&&` → `AND`…).
        case symbol(String)
        case end
    }

    enum ArgumentKind: Sendable, Equatable {
        case object, keyPath, integer, float
    }

    var kind: Kind
    var position: Int
}

/// Splits a format string into tokens. Never traps: anything it does not understand is an error with a position.
///
/// It reads Unicode scalars, not grapheme clusters, so a quote followed by a combining mark still closes a
/// string; positions are scalar offsets.
struct QueryLexer {
    private let characters: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) {
        characters = Array(text.unicodeScalars)
    }

    static func tokenize(_ text: String) throws -> [QueryToken] {
        var lexer = QueryLexer(text)
        var tokens: [QueryToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let position = index + offset
        return position < characters.count ? characters[position] : nil
    }

    private func error(_ message: String, at position: Int? = nil) -> QueryLanguageError {
        QueryLanguageError(position: position ?? index, message: message)
    }

    static func isWordStart(_ c: Unicode.Scalar) -> Bool { c == "_" || c.properties.isAlphabetic }
    static func isWordPart(_ c: Unicode.Scalar) -> Bool {
        switch c.properties.generalCategory {
        case .decimalNumber, .nonspacingMark, .spacingMark: return true
        default: return isWordStart(c)
        }
    }
    static func isWordStart(_ c: Character) -> Bool { c.unicodeScalars.first.map { isWordStart($0) } ?? false }
    static func isWordPart(_ c: Character) -> Bool { c.unicodeScalars.allSatisfy { isWordPart($0) } }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { c.value >= 48 && c.value <= 57 }

    private mutating func readWord() -> String {
        var word = ""
        while let c = peek(), QueryLexer.isWordPart(c) {
            word.unicodeScalars.append(c)
            index += 1
        }
        return word
    }

    mutating func next() throws -> QueryToken {
        while let c = peek(), c.properties.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return QueryToken(kind: .end, position: start) }
        func token(_ kind: QueryToken.Kind) -> QueryToken { QueryToken(kind: kind, position: start) }

        if QueryLexer.isWordStart(c) {
            return token(.word(readWord(), escaped: false))
        }
        if QueryLexer.isDigit(c) {
            return token(try readNumber())
        }
        switch c {
        case "\"", "'":
            return token(.string(try readString(quote: c)))
        case "#":
            index += 1
            guard let next = peek(), QueryLexer.isWordStart(next) else { throw error("expected a key name after '#'") }
            return token(.word(readWord(), escaped: true))
        case "@":
            index += 1
            guard let next = peek(), QueryLexer.isWordStart(next) else { throw error("expected an operator name after '@'") }
            return token(.atWord(readWord()))
        case "$":
            index += 1
            guard let next = peek(), QueryLexer.isWordStart(next) else { throw error("expected a variable name after '$'") }
            return token(.variable(readWord()))
        case "%":
            return token(try readArgument())
        default:
            break
        }
        // Operators, longest first.
        let two = peek(1).map { String(Character(c)) + String(Character($0)) } ?? ""
        let twoCharacter: [String: String] = [
            "==": "==", "!=": "!=", "<>": "!=", "<=": "<=", "=<": "<=", ">=": ">=", "=>": ">=",
            "&&": "AND", "||": "OR", "**": "**",
        ]
        if let symbol = twoCharacter[two] {
            index += 2
            return token(.symbol(symbol))
        }
        let oneCharacter: [Unicode.Scalar: String] = [
            "=": "==", "<": "<", ">": ">", "!": "NOT", "(": "(", ")": ")", "{": "{", "}": "}", "[": "[", "]": "]",
            ",": ",", ".": ".", "+": "+", "-": "-", "*": "*", "/": "/", ":": ":",
        ]
        if let symbol = oneCharacter[c] {
            index += 1
            return token(.symbol(symbol))
        }
        throw error("unexpected character \(QueryLexer.describe(c))")
    }

    static func describe(_ c: Unicode.Scalar) -> String {
        if c.value < 0x20 || c.value == 0x7F || c.properties.generalCategory == .nonspacingMark {
            return "U+" + String(c.value, radix: 16, uppercase: true)
        }
        return "'\(c)'"
    }

    private mutating func readNumber() throws -> QueryToken.Kind {
        let start = index
        if peek() == "0", let marker = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][marker] {
            index += 2
            var digits = ""
            while let c = peek(), QueryLexer.isWordPart(c) {
                digits.unicodeScalars.append(c)
                index += 1
            }
            guard !digits.isEmpty, let value = Int64(digits, radix: radix) else {
                throw error("'0\(marker)\(digits)' is not a valid number", at: start)
            }
            return .integer(value)
        }
        var text = ""
        var isInteger = true
        while let c = peek(), QueryLexer.isDigit(c) { text.unicodeScalars.append(c); index += 1 }
        if peek() == ".", let after = peek(1), QueryLexer.isDigit(after) {
            isInteger = false
            text.append("."); index += 1
            while let c = peek(), QueryLexer.isDigit(c) { text.unicodeScalars.append(c); index += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            var lookahead = 1
            if let sign = peek(1), sign == "+" || sign == "-" { lookahead = 2 }
            if let digit = peek(lookahead), QueryLexer.isDigit(digit) {
                isInteger = false
                text.append("e")
                if lookahead == 2, let sign = peek(1) { text.unicodeScalars.append(sign) }
                index += lookahead
                while let c = peek(), QueryLexer.isDigit(c) { text.unicodeScalars.append(c); index += 1 }
            }
        }
        if let c = peek(), QueryLexer.isWordStart(c) {
            throw error("unexpected \(QueryLexer.describe(c)) after a number")
        }
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { throw error("'\(text)' is not a valid number", at: start) }
        return .double(value)
    }

    private mutating func readString(quote: Unicode.Scalar) throws -> String {
        let start = index
        index += 1
        var text = ""
        while true {
            guard let c = peek() else { throw error("unterminated string", at: start) }
            index += 1
            if c == quote { return text }
            guard c == "\\" else { text.unicodeScalars.append(c); continue }
            guard let escaped = peek() else { throw error("unterminated string", at: start) }
            index += 1
            switch escaped {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "0": text.append("\0")
            case "u":
                var hex = ""
                while hex.count < 4, let h = peek(), h.properties.isASCIIHexDigit { hex.unicodeScalars.append(h); index += 1 }
                guard hex.count == 4, let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                    throw error("expected four hex digits after \\u")
                }
                text.unicodeScalars.append(scalar)
            default: text.unicodeScalars.append(escaped)
            }
        }
    }

    private mutating func readArgument() throws -> QueryToken.Kind {
        let start = index
        index += 1
        if peek() == "%" { index += 1; return .percent }
        // Length modifiers are accepted and ignored: arguments arrive as Swift values anyway.
        while let c = peek(), "hlqLzjt".unicodeScalars.contains(c) { index += 1 }
        guard let conversion = peek() else { throw error("incomplete format specifier", at: start) }
        index += 1
        switch conversion {
        case "@": return .argument(.object)
        case "K": return .argument(.keyPath)
        case "d", "i", "u", "D", "U", "x", "X", "o", "O", "c": return .argument(.integer)
        case "f", "e", "E", "g", "G", "a", "A", "F": return .argument(.float)
        default: throw error("unsupported format specifier '%\(conversion)'", at: start)
        }
    }

    /// A string constant as it appears in a format string: double-quoted, with escapes.
    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u" + String(format: "%04X", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
