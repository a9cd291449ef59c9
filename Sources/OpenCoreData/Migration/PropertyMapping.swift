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
    /// True when ``valueExpression`` is the one a mapping model file leaves Xcode to generate
    /// (`autogenerateexpression`, none written): Xcode's mapping compiler writes it only where the source
    /// entity has the property it reads, so a migration uses it only there (``isGenerated(for:)``).
    var isGenerated = false

    /// A mapping of the destination property `name` to `valueExpression`.
    public init(name: String, valueExpression: MappingExpression?) {
        self.name = name
        self.valueExpression = valueExpression
    }

    /// The expression this mapping gives when the source objects are of `source` (nil: the mapping reads no
    /// source): a generated expression whose source key path `source` lacks gives none, as Xcode compiles
    /// it (a compiled `.cdm` holds no expression there), leaving the property to its default or the entity
    /// migration policy.
    func effectiveExpression(readingFrom source: EntityDescription?) -> MappingExpression? {
        guard isGenerated else { return valueExpression }
        guard let source, let first = valueExpression?.sourceKeyPath?.first,
              source.propertiesByName[first] != nil else { return nil }
        return valueExpression
    }
}
