/// The name a ``ValueTransformer`` is registered under: Foundation's `NSValueTransformerName`.
///
/// A model's `valueTransformerName` is one of these; an attribute without one uses
/// ``secureUnarchiveFromDataTransformerName``, as Core Data does.
public struct ValueTransformerName: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name as the model file spells it.
    public let rawValue: String

    /// A name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A name.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// A name written as a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The name itself.
    public var description: String { rawValue }

    /// `NSSecureUnarchiveFromData` (Core Data's `NSSecureUnarchiveFromDataTransformerName`): the default
    /// transformer of Transformable attributes, keyed archives of Foundation values.
    public static let secureUnarchiveFromDataTransformerName = ValueTransformerName("NSSecureUnarchiveFromData")

    /// `NSKeyedUnarchiveFromData`, which older models name. Registered here as the same secure transformer:
    /// the archive is read by the package's own reader, never by an unarchiver that builds arbitrary classes.
    public static let keyedUnarchiveFromDataTransformerName = ValueTransformerName("NSKeyedUnarchiveFromData")
}
