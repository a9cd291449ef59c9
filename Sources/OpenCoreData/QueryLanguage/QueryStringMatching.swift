import Foundation
import Synchronization

/// Substring search, LIKE wildcards and MATCHES regular expressions, all on Unicode scalars so that the
/// answer never depends on the locale or on where the code runs (in memory or inside SQLite).
enum QueryStringMatching {
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        let h = Array(haystack.unicodeScalars), n = Array(needle.unicodeScalars)
        if n.isEmpty { return true }
        guard n.count <= h.count else { return false }
        for start in 0...(h.count - n.count) where h[start] == n[0] {
            if h[start..<(start + n.count)].elementsEqual(n) { return true }
        }
        return false
    }

    /// `*` matches any run of characters, `?` exactly one, `\` escapes the next character.
    static func like(_ subject: String, pattern: String) -> Bool {
        enum Piece: Equatable { case literal(Unicode.Scalar), one, any }
        var pieces: [Piece] = []
        var escaping = false
        for scalar in pattern.unicodeScalars {
            if escaping { pieces.append(.literal(scalar)); escaping = false; continue }
            switch scalar {
            case "\\": escaping = true
            case "*": if pieces.last != .any { pieces.append(.any) }
            case "?": pieces.append(.one)
            default: pieces.append(.literal(scalar))
            }
        }
        if escaping { pieces.append(.literal("\\")) }
        let text = Array(subject.unicodeScalars)
        // Greedy matching with a single backtrack point: linear in practice, never exponential.
        var t = 0, p = 0
        var starPiece = -1, starText = 0
        while t < text.count {
            if p < pieces.count, pieces[p] != .any,
               pieces[p] == .one || pieces[p] == .literal(text[t]) {
                t += 1; p += 1
            } else if p < pieces.count, pieces[p] == .any {
                starPiece = p; starText = t; p += 1
            } else if starPiece >= 0 {
                p = starPiece + 1; starText += 1; t = starText
            } else {
                return false
            }
        }
        while p < pieces.count, pieces[p] == .any { p += 1 }
        return p == pieces.count
    }

    private static let regexCache = Mutex<[String: NSRegularExpression]>([:])

    /// The whole subject must match the pattern (ICU syntax).
    static func matches(_ subject: String, pattern: String, options: QueryComparison.Options) throws -> Bool {
        var subject = subject, pattern = pattern
        if options.contains(.diacriticInsensitive) {
            subject = subject.folding(options: .diacriticInsensitive, locale: nil)
            pattern = pattern.folding(options: .diacriticInsensitive, locale: nil)
        }
        let caseInsensitive = options.contains(.caseInsensitive)
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        let expression: NSRegularExpression
        if let cached = regexCache.withLock({ $0[key] }) {
            expression = cached
        } else {
            do {
                expression = try NSRegularExpression(pattern: "^(?:" + pattern + ")$",
                                                     options: caseInsensitive ? [.caseInsensitive] : [])
            } catch {
                throw QueryLanguageError.semantic("MATCHES: '\(pattern)' is not a valid regular expression")
            }
            regexCache.withLock { cache in
                if cache.count > 256 { cache.removeAll() }
                cache[key] = expression
            }
        }
        let range = NSRange(subject.startIndex..., in: subject)
        return expression.firstMatch(in: subject, options: [.anchored], range: range) != nil
    }
}
