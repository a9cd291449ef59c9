import Foundation

/// A failure ocd reports as one line on stderr (ArgumentParser prints `Error: <description>` and exits 1).
struct OCDError: Error, CustomStringConvertible, LocalizedError {
    let description: String
    init(_ description: String) { self.description = description }
    var errorDescription: String? { description }
}
