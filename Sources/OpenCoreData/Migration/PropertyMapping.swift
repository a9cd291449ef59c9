import Foundation

/// How one property of a destination object gets its value (Core Data's `NSPropertyMapping`).
///
/// ```swift
/// let cents = PropertyMapping(name: "priceInCents", valueExpression: try MappingExpression(format: "$source.price * 100"))
/// ```
public struct PropertyMapping: Sendable, Hashable {
    /// The destination property the mapping fills.
    public var name: String
    /// What it is filled with; nil leaves the property at its default value.
    public var valueExpression: MappingExpression?
    /// The application's own values (Core Data's `userInfo`), for its migration policy to read.
    public var userInfo: [String: String] = [:]

    /// A mapping of the destination property `name` to `valueExpression`.
    public init(name: String, valueExpression: MappingExpression?) {
        self.name = name
        self.valueExpression = valueExpression
    }
}
