import Foundation

/// Why an import file, or a part of one, cannot be imported: the message names the culprit (the line, the
/// column, the `--map` pair, the file).
public struct ImportError: Error, CustomStringConvertible, LocalizedError, Equatable {
    /// The message, naming what is wrong and where.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }

    /// The message, for `localizedDescription`.
    public var errorDescription: String? { description }
}
