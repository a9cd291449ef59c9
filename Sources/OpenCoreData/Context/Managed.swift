import Foundation

/// A Swift type that a ``Managed`` property can have: attribute values, related objects, and sets or
/// arrays of related objects.
public protocol ManagedPropertyValue {
    /// Converts what `value(forKey:)` returns into this type (nil if it does not fit).
    static func fromManagedValue(_ value: Any?) -> Self?
    /// What `setValue(_:forKey:)` is given for this value.
    var managedValue: Any? { get }
    /// Converts an attribute's stored value straight into this type, without boxing it in `Any` and
    /// casting it back: the read of an unchanged fetched attribute, the most common one. Nil means "take
    /// ``fromManagedValue(_:)``", which must give the same answer; the default always says so.
    static func fromStoredAttribute(_ stored: StoredAttributeValue) -> Self?
}

extension ManagedPropertyValue {
    /// Nil: the value is converted by ``fromManagedValue(_:)``.
    public static func fromStoredAttribute(_ stored: StoredAttributeValue) -> Self? { nil }
}

/// An attribute's value as the store holds it, with the attribute's type (see
/// ``ManagedPropertyValue/fromStoredAttribute(_:)``). Opaque: only the library's own conversions read it, so
/// a conformance of your own keeps the default and converts in ``ManagedPropertyValue/fromManagedValue(_:)``.
public struct StoredAttributeValue {
    let value: StoreValue
    let type: AttributeType

    /// Whether the store holds NULL.
    @usableFromInline
    var isNull: Bool { value.isNull }

    /// The integer of an integer attribute, truncated to the attribute's width as `value(forKey:)` does.
    var integer: Int64? {
        guard case .int64(let integer) = value.storage else { return nil }
        switch type {
        case .integer16: return Int64(Int16(truncatingIfNeeded: integer))
        case .integer32: return Int64(Int32(truncatingIfNeeded: integer))
        case .integer64: return integer
        default: return nil
        }
    }
}

/// A typed property of a ``ManagedObject`` subclass, backed by the entity's property of that name: the
/// Swift counterpart of `@NSManaged`, which Linux does not have.
///
/// ```swift
/// final class FailedBankInfo: ManagedObject {
///     @Managed("name") var name: String?
///     @Managed("details") var details: FailedBankDetails?
/// }
/// let close = bank.details?.closeDate
/// ```
///
/// The key must name a property of the entity and the Swift type must fit it; a mismatch is a programmer
/// error and stops the program with a message naming the entity and key, as would reading an object
/// whose row was deleted behind the context's back. Use `try value(forKey:)` where such failures are
/// expected.
@propertyWrapper
public struct Managed<Value: ManagedPropertyValue> {
    /// The entity property's name.
    public let key: String

    /// A property backed by the entity's property named `key`.
    public init(_ key: String) { self.key = key }

    /// Unavailable: a `@Managed` property is read and written through its object, so it works only in
    /// `ManagedObject` subclasses.
    @available(*, unavailable, message: "@Managed works only in ManagedObject subclasses")
    public var wrappedValue: Value {
        get { preconditionFailure("@Managed used outside a ManagedObject subclass") }
        set { preconditionFailure("@Managed used outside a ManagedObject subclass") }
    }

    // Inlinable so each property's getter is specialized where it is declared: unspecialized, every read
    // looks up the generic metadata of its value, wrapper and key path types at run time. Always inlined
    // into the getter, where the storage key path is a literal the compiler turns into a field read: left
    // to the inliner, a caller it declines projects the key path at run time (about 1,000 instructions a
    // read, measured in frc-batch-typed). What is not the fast path stays out of line.
    /// Reads and writes the property on its object: an unchanged stored attribute straight from the row,
    /// anything else through `value(forKey:)` and `setValue(_:forKey:)`. A key the entity lacks or a value that
    /// does not fit stops the program (see ``Managed``).
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        @inline(__always) get {
            let key = object[keyPath: storageKeyPath].key
            if let stored = object.storedAttributeValue(forKey: key), let value = Value.fromStoredAttribute(stored) {
                return value
            }
            return value(of: object, forKey: key)
        }
        @inline(__always) set {
            setValue(newValue, of: object, forKey: object[keyPath: storageKeyPath].key)
        }
    }

    /// A read the row cannot answer directly: through `value(forKey:)` and its conversion.
    @usableFromInline
    static func value(of object: ManagedObject, forKey key: String) -> Value {
        let raw: Any?
        // Unchecked: the getter's `storedAttributeValue(forKey:)` checked the queue.
        do { raw = try object.uncheckedValue(forKey: key) } catch {
            preconditionFailure("\(object.entity.name).\(key): \(error)")
        }
        guard let value = Value.fromManagedValue(raw) else {
            preconditionFailure("\(object.entity.name).\(key) holds \(raw.map { String(describing: type(of: $0)) } ?? "nil"), which is not \(Value.self)")
        }
        return value
    }

    @usableFromInline
    static func setValue(_ newValue: Value, of object: ManagedObject, forKey key: String) {
        do { try object.setValue(newValue.managedValue, forKey: key) } catch {
            preconditionFailure("\(object.entity.name).\(key): \(error)")
        }
    }
}

extension Optional: ManagedPropertyValue where Wrapped: ManagedPropertyValue {
    /// `.some(nil)` for nil or `NSNull`; otherwise the wrapped type's conversion (nil when it does not fit).
    public static func fromManagedValue(_ value: Any?) -> Wrapped?? {
        guard let value, !(value is NSNull) else { return .some(nil) }
        guard let wrapped = Wrapped.fromManagedValue(value) else { return nil }
        return .some(wrapped)
    }
    // Inlinable so it is specialized for its `Wrapped` where used: unspecialized, it moves the value through
    // generic metadata on every read.
    /// `.some(nil)` for NULL; otherwise the wrapped type's direct conversion.
    @inlinable
    public static func fromStoredAttribute(_ stored: StoredAttributeValue) -> Wrapped?? {
        if stored.isNull { return .some(nil) }
        guard let wrapped = Wrapped.fromStoredAttribute(stored) else { return nil }
        return .some(wrapped)
    }
    /// The wrapped value's, or nil.
    public var managedValue: Any? { self?.managedValue }
}

extension String: ManagedPropertyValue {
    /// The value as a `String`, or nil.
    public static func fromManagedValue(_ value: Any?) -> String? { value as? String }
    /// A string attribute's text, read without boxing it; nil for anything else.
    public static func fromStoredAttribute(_ stored: StoredAttributeValue) -> String? {
        guard stored.type == .string, case .string(let text) = stored.value.storage else { return nil }
        return text
    }
    /// The string itself.
    public var managedValue: Any? { self }
}

extension Bool: ManagedPropertyValue {
    /// The value as a `Bool`, or nil.
    public static func fromManagedValue(_ value: Any?) -> Bool? { value as? Bool }
    /// A Boolean attribute's value, read without boxing it; nil for anything else.
    public static func fromStoredAttribute(_ stored: StoredAttributeValue) -> Bool? {
        guard stored.type == .boolean, case .int64(let integer) = stored.value.storage else { return nil }
        return integer != 0
    }
    /// The Boolean itself.
    public var managedValue: Any? { self }
}

extension Date: ManagedPropertyValue {
    /// The value as a `Date`, or nil.
    public static func fromManagedValue(_ value: Any?) -> Date? { value as? Date }
    /// A date attribute's value, read without boxing it; nil for anything else.
    public static func fromStoredAttribute(_ stored: StoredAttributeValue) -> Date? {
        guard stored.type == .date else { return nil }
        switch stored.value.storage {
        case .double(let seconds): return Date(timeIntervalSinceReferenceDate: seconds)
        case .int64(let seconds): return Date(timeIntervalSinceReferenceDate: Double(seconds))
        default: return nil
        }
    }
    /// The date itself.
    public var managedValue: Any? { self }
}

extension Data: ManagedPropertyValue {
    /// The value as `Data`, or nil.
    public static func fromManagedValue(_ value: Any?) -> Data? { value as? Data }
    /// The data itself.
    public var managedValue: Any? { self }
}

extension UUID: ManagedPropertyValue {
    /// The value as a `UUID`, or nil.
    public static func fromManagedValue(_ value: Any?) -> UUID? { value as? UUID }
    /// The UUID itself.
    public var managedValue: Any? { self }
}

extension URL: ManagedPropertyValue {
    /// The value as a `URL`, or nil.
    public static func fromManagedValue(_ value: Any?) -> URL? { value as? URL }
    /// The URL itself.
    public var managedValue: Any? { self }
}

extension Decimal: ManagedPropertyValue {
    /// The value as a `Decimal`, or nil.
    public static func fromManagedValue(_ value: Any?) -> Decimal? { value as? Decimal }
    /// The decimal itself.
    public var managedValue: Any? { self }
}

/// Integers convert between widths when the value fits.
extension ManagedPropertyValue where Self: FixedWidthInteger {
    /// An integer of any width, when this type holds it exactly; nil otherwise.
    public static func fromManagedValue(_ value: Any?) -> Self? {
        switch value {
        case let v as Int16: return Self(exactly: v)
        case let v as Int32: return Self(exactly: v)
        case let v as Int64: return Self(exactly: v)
        case let v as Int: return Self(exactly: v)
        default: return nil
        }
    }
    /// An integer attribute's value, read without boxing it, when this type holds it exactly.
    public static func fromStoredAttribute(_ stored: StoredAttributeValue) -> Self? {
        stored.integer.flatMap { Self(exactly: $0) }
    }
    /// The integer itself.
    public var managedValue: Any? { self }
}

extension Int: ManagedPropertyValue {}
extension Int16: ManagedPropertyValue {}
extension Int32: ManagedPropertyValue {}
extension Int64: ManagedPropertyValue {}

extension Double: ManagedPropertyValue {
    /// A `Double`, or a `Float` widened; nil otherwise.
    public static func fromManagedValue(_ value: Any?) -> Double? {
        switch value {
        case let v as Double: return v
        case let v as Float: return Double(v)
        default: return nil
        }
    }
    /// A double attribute's value, read without boxing it; nil for anything else.
    public static func fromStoredAttribute(_ stored: StoredAttributeValue) -> Double? {
        guard stored.type == .double else { return nil }
        switch stored.value.storage {
        case .double(let v): return v
        case .int64(let v): return Double(v)
        default: return nil
        }
    }
    /// The number itself.
    public var managedValue: Any? { self }
}

extension Float: ManagedPropertyValue {
    /// A `Float`, or a `Double` narrowed; nil otherwise.
    public static func fromManagedValue(_ value: Any?) -> Float? {
        switch value {
        case let v as Float: return v
        case let v as Double: return Float(v)
        default: return nil
        }
    }
    /// The number itself.
    public var managedValue: Any? { self }
}

extension ManagedObject: ManagedPropertyValue {
    /// The object, when it is of this class; nil otherwise.
    public static func fromManagedValue(_ value: Any?) -> Self? { value as? Self }
    /// The object itself.
    public var managedValue: Any? { self }
}

extension Set: ManagedPropertyValue where Element: ManagedObject {
    /// The related objects of this class, from a set or an array of objects; nil for anything else.
    public static func fromManagedValue(_ value: Any?) -> Set<Element>? {
        if let set = value as? Set<ManagedObject> { return Set(set.compactMap { $0 as? Element }) }
        if let array = value as? [ManagedObject] { return Set(array.compactMap { $0 as? Element }) }
        return nil
    }
    /// The objects as an array, as `setValue(_:forKey:)` takes them.
    public var managedValue: Any? { Array(self) as [ManagedObject] }
}

extension Array: ManagedPropertyValue where Element: ManagedObject {
    /// The related objects of this class, from an array (in order) or a set; nil for anything else.
    public static func fromManagedValue(_ value: Any?) -> [Element]? {
        if let array = value as? [ManagedObject] { return array.compactMap { $0 as? Element } }
        if let set = value as? Set<ManagedObject> { return set.compactMap { $0 as? Element } }
        return nil
    }
    /// The objects as an array of `ManagedObject`.
    public var managedValue: Any? { self as [ManagedObject] }
}

extension FetchRequest where Result: ManagedObject {
    /// A request for a typed subclass's entity (`FetchRequest<Item>()`).
    public convenience init() {
        self.init(entityName: Result.entityName)
    }
}
