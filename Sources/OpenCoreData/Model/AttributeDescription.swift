import Foundation

/// An attribute of an entity: a typed value stored in a column of the entity's table.
///
/// ```swift
/// let name = AttributeDescription(name: "name", type: .string)
/// name.isOptional = false
/// name.maxLength = 80
/// ```
public class AttributeDescription: PropertyDescription, @unchecked Sendable {
    // Unchecked: written only before the model is frozen, like `PropertyDescription`'s (see there); read per
    // value converted, each read skips a `swift_beginAccess`.
    /// The value's type.
    @exclusivity(unchecked) public var attributeType: AttributeType { didSet { checkMutable() } }
    /// The value a new object starts with. Must be of the Swift type that ``attributeType`` names.
    @exclusivity(unchecked) public var defaultValue: (any Sendable)? { didSet { checkMutable() } }

    /// Smallest allowed value, for numeric attributes (checked on save).
    public var minValue: Double? { didSet { checkMutable() } }
    /// Largest allowed value, for numeric attributes (checked on save).
    public var maxValue: Double? { didSet { checkMutable() } }
    /// Earliest allowed date, for date attributes (checked on save).
    public var minDate: Date? { didSet { checkMutable() } }
    /// Latest allowed date, for date attributes (checked on save).
    public var maxDate: Date? { didSet { checkMutable() } }
    /// Minimum length in characters, for string attributes (checked on save).
    public var minLength: Int? { didSet { checkMutable() } }
    /// Maximum length in characters, for string attributes (checked on save).
    public var maxLength: Int? { didSet { checkMutable() } }
    /// A regular expression the whole string must match (checked on save).
    public var regularExpression: String? { didSet { checkMutable() } }

    /// Core Data's "allows external storage" flag; it enters the version hash. Data stays in the row here.
    public var allowsExternalBinaryDataStorage = false { didSet { checkMutable() } }
    /// Core Data's "preserve after deletion" flag for persistent history; it enters the version hash.
    public var preservesValueInHistoryOnDeletion = false { didSet { checkMutable() } }
    /// The name of a Transformable attribute's ``ValueTransformer`` (registered with
    /// ``ValueTransformer/setValueTransformer(_:forName:)``); nil means
    /// ``ValueTransformerName/secureUnarchiveFromDataTransformerName``, as in Core Data.
    public var valueTransformerName: String? { didSet { checkMutable() } }
    /// The class of a Transformable attribute's values (`NSArray`, `NSDictionary`, a type of the app such as
    /// `MyApp.Point`): a value of another class is refused when set and when read. Nil accepts any value
    /// the transformer takes.
    public var customClassName: String? { didSet { checkMutable() } }

    /// How a derived attribute's value is computed (Core Data's `NSDerivedAttributeDescription`): a key path
    /// from the object (`author.name`, `items.@count`, `items.@sum.price`), `now()`, `canonical:(name)`, or
    /// arithmetic on those. The value is recomputed at every save and stored in the attribute's column, so
    /// it reads, filters and sorts like any attribute; setting it directly is refused. Checked when the model
    /// is built (docs/FEATURES.md, "Derived attributes").
    public var derivationExpression: QueryExpression? { didSet { checkMutable() } }
    /// Whether the attribute is derived (has a ``derivationExpression``).
    public var isDerived: Bool { derivationExpression != nil }

    /// For an attribute that stores one element of a composite (``CompositeAttributeDescription``), the
    /// composite; nil for every declared attribute. Weak: the composite holds its stored elements.
    weak var compositeOwner: CompositeAttributeDescription?

    /// Whether any validation rule is set (so saves skip the checks of attributes without rules).
    var hasValidationRules: Bool {
        minValue != nil || maxValue != nil || minDate != nil || maxDate != nil || minLength != nil
            || maxLength != nil || regularExpression != nil
    }

    /// Creates an attribute.
    public init(name: String, type: AttributeType, isOptional: Bool = true, defaultValue: (any Sendable)? = nil) {
        self.attributeType = type
        self.defaultValue = defaultValue
        super.init(name: name)
        self.isOptional = isOptional
    }
}

extension AttributeDescription {
    /// Checks that `value` can be stored in this attribute exactly as `setValue(_:forKey:)` would store it
    /// (type, range, the digits SQLite keeps), without an object: what an importer asks before it accepts a row.
    ///
    /// - Throws: ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` or
    ///   ``ObjectGraphError/valueOutOfRange(entity:key:value:)``, as `setValue` would.
    public func checkStorable(_ value: Any?) throws {
        _ = try ValueConversion.storeValue(value, for: self)
    }
}
