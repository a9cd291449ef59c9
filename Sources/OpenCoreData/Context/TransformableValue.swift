import Foundation

/// Converts the values of Transformable attributes to the bytes their column holds, and back, through the
/// attribute's ``ValueTransformer`` (``AttributeDescription/valueTransformerName``, the secure unarchiving
/// transformer when it names none), and checks them against ``AttributeDescription/customClassName``.
///
/// The direction follows Core Data: a ``SecureUnarchiveFromDataTransformer`` unarchives forward, so values
/// are written with its reverse transformation and read with its forward one; any other transformer turns
/// values into `Data` forward and back in reverse.
package enum TransformableValue {
    /// The transformer the attribute names.
    ///
    /// - Throws: ``ObjectGraphError/unknownValueTransformer(entity:key:name:)`` when none is registered
    ///   under that name.
    static func transformer(for attribute: AttributeDescription) throws -> ValueTransformer {
        let name = attribute.valueTransformerName.map { ValueTransformerName($0) } ?? .secureUnarchiveFromDataTransformerName
        guard let transformer = ValueTransformerRegistry.shared.transformer(forName: name) else {
            throw ObjectGraphError.unknownValueTransformer(entity: attribute.entity?.name ?? "?", key: attribute.name,
                                                           name: name.rawValue)
        }
        return transformer
    }

    /// The column value of `value`.
    ///
    /// - Throws: ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` when `value` is not of the
    ///   attribute's custom class or its transformer cannot turn it into `Data`;
    ///   ``ObjectGraphError/unknownValueTransformer(entity:key:name:)`` (see ``transformer(for:)``).
    static func storeValue(_ value: Any, for attribute: AttributeDescription) throws -> StoreValue {
        let entity = attribute.entity?.name ?? "?"
        try checkClass(value, for: attribute)
        let transformer = try transformer(for: attribute)
        let transformed: Any?
        if let secure = transformer as? SecureUnarchiveFromDataTransformer {
            do {
                transformed = try secure.archive(value)
            } catch let failure as KeyedArchiveWriter.Failure {
                throw ObjectGraphError.typeMismatch(entity: entity, key: attribute.name,
                                                    expected: "Foundation values a keyed archive holds (\(failure.reason))",
                                                    actual: String(describing: type(of: value)))
            }
        } else {
            transformed = transformer.transformedValue(value)
        }
        guard let data = transformed as? Data else {
            throw ObjectGraphError.typeMismatch(entity: entity, key: attribute.name,
                                                expected: "a value the transformer '\(attribute.valueTransformerName ?? "")' turns into Data",
                                                actual: String(describing: type(of: value)))
        }
        return data.storeValue
    }

    /// Checks `value` against the attribute's ``AttributeDescription/customClassName``: all a transient
    /// Transformable attribute checks, as its values are never stored.
    ///
    /// - Throws: ``ObjectGraphError/typeMismatch(entity:key:expected:actual:)`` when it is of another class.
    static func checkClass(_ value: Any, for attribute: AttributeDescription) throws {
        if let className = attribute.customClassName, !isValue(value, ofClassNamed: className) {
            throw ObjectGraphError.typeMismatch(entity: attribute.entity?.name ?? "?", key: attribute.name,
                                                expected: "a value of class \(className)",
                                                actual: String(describing: type(of: value)))
        }
    }

    /// The value of the column value `stored` of `object`; nil for NULL.
    ///
    /// - Throws: ``ObjectGraphError/undecodableValue(entity:key:object:reason:)`` when the column holds
    ///   something other than bytes, the transformer cannot turn them back into a value (damaged or hostile
    ///   bytes), or the value is not of the attribute's custom class;
    ///   ``ObjectGraphError/unknownValueTransformer(entity:key:name:)`` (see ``transformer(for:)``).
    static func value(_ stored: StoreValue, for attribute: AttributeDescription, of object: ManagedObjectID) throws -> Any? {
        func undecodable(_ reason: String) -> ObjectGraphError {
            .undecodableValue(entity: object.entity.name, key: attribute.name, object: object, reason: reason)
        }
        let data: Data
        switch stored.storage {
        case .null: return nil
        case .blob(let bytes): data = bytes
        case .string(let text): data = Data(text.utf8)
        case .int64, .double: throw undecodable("the column holds a number, not bytes")
        }
        let transformer = try transformer(for: attribute)
        let value: Any?
        if let secure = transformer as? SecureUnarchiveFromDataTransformer {
            do {
                value = try secure.unarchive(data)
            } catch let failure as KeyedArchive.Failure {
                throw undecodable("not a keyed archive of Foundation values: \(failure.reason)")
            }
        } else {
            guard let reversed = transformer.reverseTransformedValue(data) else {
                throw undecodable("the transformer '\(attribute.valueTransformerName ?? "")' could not turn \(data.count) bytes back into a value")
            }
            value = reversed
        }
        if let value, let className = attribute.customClassName, !isValue(value, ofClassNamed: className) {
            throw undecodable("it holds a \(type(of: value)), not a value of class \(className)")
        }
        return value
    }

    /// Whether `value` is of the class a model names: a Foundation class name (`NSArray`, `NSDictionary`,
    /// `NSSet`, `NSString`, `NSNumber`, `NSDate`, `NSData`, `NSURL`, `NSUUID`) matches the Swift values it
    /// bridges to; `NSObject` matches anything; any other name matches the value's type name, with or
    /// without its module (`Point`, `MyApp.Point`).
    static func isValue(_ value: Any, ofClassNamed className: String) -> Bool {
        let style = Mirror(reflecting: value).displayStyle
        switch className {
        case "NSObject": return true
        case "NSArray", "NSMutableArray", "NSOrderedSet", "NSMutableOrderedSet": return style == .collection && !(value is Data)
        case "NSDictionary", "NSMutableDictionary": return style == .dictionary
        case "NSSet", "NSMutableSet": return style == .set
        case "NSString", "NSMutableString": return value is String || value is Substring
        case "NSNumber":
            switch value {
            case is Bool, is Int, is Int64, is Int32, is Int16, is Int8, is UInt, is UInt64, is UInt32, is UInt16,
                 is UInt8, is Double, is Float: return true
            default: return false
            }
        case "NSDate": return value is Date
        case "NSData", "NSMutableData": return value is Data
        case "NSURL": return value is URL
        case "NSUUID": return value is UUID
        default:
            let typeName = String(describing: type(of: value))
            let unqualified = className.split(separator: ".").last.map(String.init) ?? className
            return typeName == className || typeName == unqualified || String(reflecting: type(of: value)) == className
        }
    }
}

/// The stored bytes of Transformable values, for code that moves them between stores without a column
/// (sync sends what the column would hold, so replicas need not agree on anything but the transformer).
extension TransformableValue {
    /// The bytes the attribute's column would hold for `value`.
    ///
    /// - Throws: what ``storeValue(_:for:)`` throws.
    package static func storedBytes(_ value: Any, for attribute: AttributeDescription) throws -> Data {
        let stored = try storeValue(value, for: attribute)
        guard case .blob(let bytes) = stored.storage else {
            throw ObjectGraphError.typeMismatch(entity: attribute.entity?.name ?? "?", key: attribute.name,
                                                expected: "bytes", actual: "\(stored)")
        }
        return bytes
    }

    /// The value of the stored bytes `bytes` of `object`.
    ///
    /// - Throws: what ``value(_:for:of:)`` throws.
    package static func value(fromStoredBytes bytes: Data, for attribute: AttributeDescription, of object: ManagedObjectID) throws -> Any? {
        try value(bytes.storeValue, for: attribute, of: object)
    }
}
