import Foundation

/// An attribute made of named elements, each an attribute of its own (Core Data's
/// `NSCompositeAttributeDescription`, 2023).
///
/// Its value is a `[String: Any]` keyed by element name; an element that is itself composite holds a
/// nested dictionary. Each element is stored in a column of its own in the entity's table
/// (docs/STORE-LAYOUT.md), so predicates and sorts reach one with the key path `attribute.element`:
///
/// ```swift
/// let magnitude = CompositeAttributeDescription(name: "magnitude", elements: [
///     AttributeDescription(name: "richter", type: .double, isOptional: false),
///     AttributeDescription(name: "depth", type: .double),
/// ])
/// // quake.setValue(["richter": 6.1, "depth": 10.0], forKey: "magnitude")
/// // QueryPredicate("magnitude.richter > 5")
/// ```
///
/// Elements may be of any type but Transformable, ObjectID and derived ones (Core Data refuses undefined,
/// object ID and externally stored data; Transformable and derived elements are not supported here).
/// The composite itself has no default value: its elements' defaults are what a new object starts with.
public final class CompositeAttributeDescription: AttributeDescription, @unchecked Sendable {
    // @unchecked Sendable: as every description, written only before its model is frozen.

    /// The elements, in declaration order. Their names are unique within the composite.
    public var elements: [AttributeDescription] { didSet { checkMutable() } }

    /// The name of the composite type in an Xcode model file (`<composite name="…">`, which the attribute
    /// names with `composite="…"`); nil means the attribute's name with a capital, which the model writer
    /// then uses.
    public var compositeTypeName: String? { didSet { checkMutable() } }

    // Unchecked: set while the model is built and only read after (see `PropertyDescription`); skips the
    // access check when a key path reaches an element.
    /// The element attributes that hold the values, one per leaf element (nested composites flattened),
    /// each named by its key path from the entity (`magnitude.richter`); made when the model is built.
    /// They take slots and columns like any attribute, so saves, fetches and SQL need nothing of their own.
    @exclusivity(unchecked) private(set) var storedElements: [AttributeDescription] = []

    /// A composite attribute made of `elements`.
    public init(name: String, elements: [AttributeDescription], isOptional: Bool = true) {
        self.elements = elements
        super.init(name: name, type: .composite, isOptional: isOptional)
    }

    /// The element attribute stored for `path` (element names below this composite), if there is one.
    func storedElement(atPath path: [String]) -> AttributeDescription? {
        let keyPath = ([name] + path).joined(separator: ".")
        return storedElements.first { $0.name == keyPath }
    }

    /// Checks the composite and makes ``storedElements`` for the entity named `entity`.
    ///
    /// - Throws: ``ModelError/invalidComposite(entity:attribute:reason:)`` for a composite without elements,
    ///   with a default value, or with an element that is unnamed, repeated, derived, Transformable or an
    ///   object ID; the element's key path names it.
    func makeStoredElements(entity: String) throws {
        func refuse(_ reason: String) -> ModelError {
            ModelError.invalidComposite(entity: entity, attribute: name, reason: reason)
        }
        if defaultValue != nil { throw refuse("a composite attribute has no default value; its elements do") }
        var made: [AttributeDescription] = []
        // Recursion over nested composites, bounded so a model cannot nest without end.
        func flatten(_ elements: [AttributeDescription], under path: [String], optionalAbove: Bool,
                     depth: Int) throws {
            guard !elements.isEmpty else {
                throw refuse("'\(path.joined(separator: "."))' has no elements")
            }
            guard depth < 32 else { throw refuse("composites nest deeper than 32 levels at '\(path.joined(separator: "."))'") }
            var seen: Set<String> = []
            for element in elements {
                let keyPath = path + [element.name]
                let shown = keyPath.joined(separator: ".")
                guard EntityDescription.isValidName(element.name) else { throw refuse("element '\(shown)' has an invalid name") }
                guard seen.insert(element.name).inserted else { throw refuse("element '\(shown)' is declared twice") }
                if let nested = element as? CompositeAttributeDescription {
                    try flatten(nested.elements, under: keyPath, optionalAbove: optionalAbove || nested.isOptional,
                                depth: depth + 1)
                    continue
                }
                switch element.attributeType {
                case .transformable, .objectID, .composite:
                    throw refuse("element '\(shown)' is of type \(element.attributeType.rawValue), which a composite cannot hold")
                default: break
                }
                if element.isDerived { throw refuse("element '\(shown)' is derived, which a composite cannot hold") }
                made.append(Self.storedCopy(of: element, keyPath: shown, optionalAbove: optionalAbove, owner: self))
            }
        }
        try flatten(elements, under: [name], optionalAbove: isOptional, depth: 0)
        storedElements = made
    }

    /// The attribute that stores `element` under `keyPath`. It is optional when the element is or when a
    /// composite above it is: an absent composite leaves its elements nil, and the missing required element of
    /// a present one is refused when the value is set (``CompositeValue``).
    private static func storedCopy(of element: AttributeDescription, keyPath: String, optionalAbove: Bool,
                                   owner: CompositeAttributeDescription) -> AttributeDescription {
        let copy = AttributeDescription(name: keyPath, type: element.attributeType,
                                        isOptional: element.isOptional || optionalAbove,
                                        defaultValue: element.defaultValue)
        copy.minValue = element.minValue
        copy.maxValue = element.maxValue
        copy.minDate = element.minDate
        copy.maxDate = element.maxDate
        copy.minLength = element.minLength
        copy.maxLength = element.maxLength
        copy.regularExpression = element.regularExpression
        copy.isTransient = owner.isTransient
        copy.isReadOnly = owner.isReadOnly || element.isReadOnly
        copy.compositeOwner = owner
        return copy
    }
}

extension EntityDescription {
    /// The key of a stored composite element reached by `components` from `position` on, and the position
    /// of its last component: `magnitude.richter` when `components[position]` is the composite `magnitude`.
    /// Nil when that component is not a composite followed by an element path.
    func compositeElementKey(in components: [String], at position: Int) -> (key: String, last: Int)? {
        guard let composite = propertiesByName[components[position]] as? CompositeAttributeDescription,
              position + 1 < components.count else { return nil }
        // The longest element path that names a stored element (nested composites have several components).
        for last in stride(from: components.count - 1, to: position, by: -1) {
            if let element = composite.storedElement(atPath: Array(components[(position + 1)...last])) {
                return (element.name, last)
            }
        }
        return nil
    }
}
