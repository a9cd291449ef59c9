import Foundation
import Synchronization

/// Substring search, LIKE wildcards and MATCHES regular expressions, all on Unicode scalars so that the
/// answer never depends on the locale or on where the code runs (in memory or inside SQLite).
package enum QueryStringMatching {
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

    /// Keyed by the pattern's UTF-8 bytes, not by `String`: `String` equality is canonical equivalence, under
    /// which `K` and the Kelvin sign (U+212A) are one key, while ICU tells them apart.
    private static let regexCache = Mutex<[[UInt8]: NSRegularExpression]>([:])

    /// The whole subject must match the pattern (ICU syntax).
    ///
    /// The pattern is checked on its own first and then wrapped as `\A(?:pattern)\z`: a pattern that is not a
    /// regular expression by itself (`x)|.*|(?:y`, which would otherwise escape the anchors) is refused, and
    /// one that swallows the wrapper (an unterminated `\Q` quote, a trailing `(?x)` comment) is refused too
    /// rather than matched differently. `\z` is the very end: `$` would also match before a final newline.
    ///
    /// - Throws: ``QueryLanguageError`` for an invalid pattern, and what ``RegularExpressionBudget/matches(_:_:pattern:)``
    ///   throws (time limit, cancellation, the engine giving up).
    static func matches(_ subject: String, pattern: String, options: QueryComparison.Options) throws -> Bool {
        var subject = subject, pattern = pattern
        if options.contains(.diacriticInsensitive) {
            subject = subject.folding(options: .diacriticInsensitive, locale: nil)
            pattern = pattern.folding(options: .diacriticInsensitive, locale: nil)
        }
        let budget = RegularExpressionBudget.current
        do {
            let expression = try anchoredExpression(pattern, caseInsensitive: options.contains(.caseInsensitive))
            return try (budget ?? RegularExpressionBudget()).matches(subject, expression, pattern: pattern)
        } catch {
            // Inside SQLite only the message would get through; the store throws the error itself.
            budget?.record(error)
            throw error
        }
    }

    /// The pattern compiled to match whole subjects only (cached by pattern and case option).
    ///
    /// - Throws: ``QueryLanguageError`` for a pattern ICU refuses, alone or anchored.
    package static func anchoredExpression(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let key = Array(((caseInsensitive ? "i:" : "s:") + pattern).utf8)
        if let cached = regexCache.withLock({ $0[key] }) { return cached }
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        // ICU refuses an empty pattern on its own; wrapped, it matches the empty string only, as it should.
        guard pattern.isEmpty || (try? NSRegularExpression(pattern: pattern, options: options)) != nil else {
            throw QueryLanguageError.semantic("MATCHES: '\(pattern)' is not a valid regular expression")
        }
        guard let expression = try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options) else {
            throw QueryLanguageError.semantic(
                "MATCHES: '\(pattern)' cannot be anchored to the whole string (it ends inside a \\Q quote or a comment)")
        }
        regexCache.withLock { cache in
            if cache.count > 256 { cache.removeAll() }
            cache[key] = expression
        }
        return expression
    }
}
