import Foundation

/// Reading and writing a composite attribute's value (``CompositeAttributeDescription``) through the slots of
/// its stored elements: the dictionary is assembled on read and taken apart on write, so the object holds,
/// saves and fetches only the elements.
enum CompositeValue {
    /// The composite's value: its elements by name, a nested composite as a nested dictionary; elements
    /// that are nil are left out, and a composite whose elements are all nil reads as nil.
    ///
    /// - Throws: what reading an element's slot throws (``ObjectGraphError/objectNotFound(_:)``, ``StoreError``).
    static func read(_ composite: CompositeAttributeDescription, of object: ManagedObject) throws -> [String: Any]? {
        try dictionary(of: composite.elements, under: [composite.name], of: object)
    }

    private static func dictionary(of elements: [AttributeDescription], under path: [String],
                                   of object: ManagedObject) throws -> [String: Any]? {
        var result: [String: Any] = [:]
        for element in elements {
            let elementPath = path + [element.name]
            if let nested = element as? CompositeAttributeDescription {
                if let value = try dictionary(of: nested.elements, under: elementPath, of: object) {
                    result[element.name] = value
                }
            } else if let slot = object.entity.slot(forKey: elementPath.joined(separator: ".")),
                      let value = try object.value(atSlot: slot) {
                result[element.name] = value
            }
        }
        return result.isEmpty ? nil : result
    }

    /// Replaces the composite's value: every element takes the dictionary's value for it, nil where the
    /// dictionary has none; nil (or `NSNull`) clears them all. Everything is checked before any element
    /// changes, so a refused value leaves the object as it was.
    ///
    /// - Throws: ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` when the value (or a nested
    ///   composite's) is not a `[String: Any]`; ``ObjectGraphError/unknownCompositeElement(entity:key:element:)``
    ///   for a key that names no element; ``ObjectGraphError/missingCompositeElement(entity:key:element:)``
    ///   when a non-optional element (of a composite that is there) has no value;
    ///   ``ObjectGraphError/compositeElementTypeMismatch(entity:key:element:expected:actual:)`` for an element
    ///   value of the wrong type; ``ObjectGraphError/valueOutOfRange(entity:key:value:)`` for a number its
    ///   element cannot keep (the key is the element's key path).
    static func write(_ value: Any?, to composite: CompositeAttributeDescription, of object: ManagedObject) throws {
        var assignments: [(slot: Int, value: Any?)] = []
        try collect(value, elements: composite.elements, under: [], composite: composite, object: object,
                    into: &assignments)
        for assignment in assignments {
            try object.setValue(assignment.value, atSlot: assignment.slot)
        }
    }

    private static func collect(_ value: Any?, elements: [AttributeDescription], under path: [String],
                                composite: CompositeAttributeDescription, object: ManagedObject,
                                into assignments: inout [(slot: Int, value: Any?)]) throws {
        let entity = object.entity.name
        let dictionary: [String: Any]?
        switch unwrapped(value) {
        case nil:
            dictionary = nil
        case let given as [String: Any]:
            dictionary = given
        case let other?:
            let shown = ([composite.name] + path).joined(separator: ".")
            throw ObjectGraphError.typeMismatch(entity: entity, key: shown, expected: "[String: Any]",
                                                actual: String(describing: type(of: other)))
        }
        if let dictionary {
            let names = Set(elements.map(\.name))
            // Sorted, so the error names the same element whatever the dictionary's order.
            if let unknown = dictionary.keys.sorted().first(where: { !names.contains($0) }) {
                throw ObjectGraphError.unknownCompositeElement(entity: entity, key: composite.name,
                                                               element: (path + [unknown]).joined(separator: "."))
            }
        }
        for element in elements {
            let elementPath = path + [element.name]
            let shownElement = elementPath.joined(separator: ".")
            let elementValue = dictionary.flatMap { unwrapped($0[element.name]) }
            if dictionary != nil, elementValue == nil, !element.isOptional {
                throw ObjectGraphError.missingCompositeElement(entity: entity, key: composite.name, element: shownElement)
            }
            if let nested = element as? CompositeAttributeDescription {
                try collect(elementValue, elements: nested.elements, under: elementPath, composite: composite,
                            object: object, into: &assignments)
                continue
            }
            let key = ([composite.name] + elementPath).joined(separator: ".")
            guard let slot = object.entity.slot(forKey: key), let stored = composite.storedElement(atPath: elementPath) else {
                preconditionFailure("composite element '\(key)' of '\(entity)' has no slot")
            }
            do {
                _ = try ValueConversion.storeValue(elementValue, for: stored)
            } catch ObjectGraphError.typeMismatch(_, _, let expected, let actual) {
                throw ObjectGraphError.compositeElementTypeMismatch(entity: entity, key: composite.name,
                                                                    element: shownElement, expected: expected,
                                                                    actual: actual)
            }
            assignments.append((slot, elementValue))
        }
    }

    /// Folds dictionary-result rows' element columns (`magnitude.richter`) of each composite fetched whole
    /// into one dictionary under the composite's name, as ``read(_:of:)`` gives it; a composite whose
    /// elements are all nil is left out, as nil values are. Element keys the request named itself
    /// (`keeping`) stay in the row too.
    static func fold(_ rows: inout [[String: Any]], composites: [CompositeAttributeDescription],
                     keeping requested: Set<String>) {
        guard !composites.isEmpty else { return }
        for index in rows.indices {
            for composite in composites {
                var value: [String: Any] = [:]
                for element in composite.storedElements {
                    let elementValue = requested.contains(element.name)
                        ? rows[index][element.name] : rows[index].removeValue(forKey: element.name)
                    guard let elementValue else { continue }
                    let path = element.name.split(separator: ".").dropFirst().map(String.init)
                    insert(elementValue, at: path[...], into: &value)
                }
                if !value.isEmpty { rows[index][composite.name] = value }
            }
        }
    }

    private static func insert(_ value: Any, at path: ArraySlice<String>, into dictionary: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            dictionary[first] = value
            return
        }
        var nested = dictionary[first] as? [String: Any] ?? [:]
        insert(value, at: path.dropFirst(), into: &nested)
        dictionary[first] = nested
    }

    /// `value` with optionals and `NSNull` seen through: nil when there is no value.
    private static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if value is NSNull { return nil }
        if let optional = value as? any OptionalProtocol { return unwrapped(optional.wrappedAny) }
        return value
    }
}
