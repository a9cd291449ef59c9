import Foundation

/// Why a format string, an evaluation or an SQL compilation failed.
///
/// `position` is the offset, in Unicode scalars, in the format string where the problem was found (-1 when
/// the error did not come from parsing). For text without combining marks it is the character offset.
///
/// ```swift
/// do { _ = try QueryPredicate(format: "name ==") }
/// catch let error as QueryLanguageError { print(error) }  // "at character 7: expected an expression…"
/// ```
public struct QueryLanguageError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// Character offset into the format string (-1 when the error did not come from parsing).
    public var position: Int
    /// What went wrong, or what was expected.
    public var message: String
    /// The documented limit the input went beyond, when that is why it was refused (nil otherwise).
    public var exceededLimit: QueryLanguageLimits.Limit?

    /// An error at `position` (-1 when it did not come from parsing), with what went wrong.
    public init(position: Int, message: String) {
        self.position = position
        self.message = message
    }

    /// An error that did not come from parsing (evaluation, compilation).
    static func semantic(_ message: String) -> QueryLanguageError {
        QueryLanguageError(position: -1, message: message)
    }

    /// The message, after `at character n:` when it came from parsing.
    public var description: String { position >= 0 ? "at character \(position): \(message)" : message }
    /// The same text as ``description``, for `LocalizedError`.
    public var errorDescription: String? { description }
}
