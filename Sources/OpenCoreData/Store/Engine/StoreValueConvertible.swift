import Foundation

/// A Swift value that converts to and from a ``StoreValue``: the integers, `Double`, `Bool`, `String` and
/// `Data` the engine binds and reads back.
///
/// Conversions read as SQLite reads a column of another class: an integer from a whole floating-point
/// value in range, a `Double` from an integer, text from UTF-8 bytes and bytes from text; anything else
/// (NULL included) is nil.
package protocol StoreValueConvertible {
    /// The value as a store holds it.
    var storeValue: StoreValue { get }
    /// The value read back from a store, or nil when `value` holds no value of this type.
    static func fromStoreValue(_ value: StoreValue) -> Self?
}

extension StoreValue: StoreValueConvertible {
    /// The value itself.
    package var storeValue: StoreValue { self }
    /// The value itself.
    package static func fromStoreValue(_ value: StoreValue) -> StoreValue? { value }
}

extension Int64: StoreValueConvertible {
    /// An integer value.
    package var storeValue: StoreValue { StoreValue(storage: .int64(self)) }
    /// The integer, or a floating-point value in Int64's range truncated to a whole number.
    package static func fromStoreValue(_ value: StoreValue) -> Int64? {
        switch value.storage {
        case .int64(let integer): return integer
        case .double(let real):
            guard real >= Double(Int64.min), real < Double(Int64.max) else { return nil }
            return Int64(real)
        default: return nil
        }
    }
}

extension Int: StoreValueConvertible {
    /// An integer value.
    package var storeValue: StoreValue { StoreValue(storage: .int64(Int64(self))) }
    /// As `Int64.fromStoreValue`, when it fits.
    package static func fromStoreValue(_ value: StoreValue) -> Int? { Int64.fromStoreValue(value).flatMap { Int(exactly: $0) } }
}

extension Int32: StoreValueConvertible {
    /// An integer value.
    package var storeValue: StoreValue { StoreValue(storage: .int64(Int64(self))) }
    /// As `Int64.fromStoreValue`, when it fits.
    package static func fromStoreValue(_ value: StoreValue) -> Int32? { Int64.fromStoreValue(value).flatMap { Int32(exactly: $0) } }
}

extension Int16: StoreValueConvertible {
    /// An integer value.
    package var storeValue: StoreValue { StoreValue(storage: .int64(Int64(self))) }
    /// As `Int64.fromStoreValue`, when it fits.
    package static func fromStoreValue(_ value: StoreValue) -> Int16? { Int64.fromStoreValue(value).flatMap { Int16(exactly: $0) } }
}

extension Bool: StoreValueConvertible {
    /// 1 or 0, as Core Data stores a Boolean.
    package var storeValue: StoreValue { StoreValue(storage: .int64(self ? 1 : 0)) }
    /// Whether a number is nonzero; nil for text, bytes and NULL.
    package static func fromStoreValue(_ value: StoreValue) -> Bool? {
        switch value.storage {
        case .int64(let integer): return integer != 0
        case .double(let real): return real != 0
        default: return nil
        }
    }
}

extension Double: StoreValueConvertible {
    /// A floating-point value.
    package var storeValue: StoreValue { StoreValue(storage: .double(self)) }
    /// The number, whole or not.
    package static func fromStoreValue(_ value: StoreValue) -> Double? {
        switch value.storage {
        case .int64(let integer): return Double(integer)
        case .double(let real): return real
        default: return nil
        }
    }
}

extension Float: StoreValueConvertible {
    /// A floating-point value.
    package var storeValue: StoreValue { StoreValue(storage: .double(Double(self))) }
    /// The number, rounded to a `Float`.
    package static func fromStoreValue(_ value: StoreValue) -> Float? { Double.fromStoreValue(value).map { Float($0) } }
}

extension String: StoreValueConvertible {
    /// A text value.
    package var storeValue: StoreValue { StoreValue(storage: .string(self)) }
    /// The text, or bytes read as UTF-8.
    package static func fromStoreValue(_ value: StoreValue) -> String? {
        switch value.storage {
        case .string(let text): return text
        case .blob(let bytes): return String(data: bytes, encoding: .utf8)
        default: return nil
        }
    }
}

extension Data: StoreValueConvertible {
    /// A bytes value.
    package var storeValue: StoreValue { StoreValue(storage: .blob(self)) }
    /// The bytes, or text as its UTF-8 bytes.
    package static func fromStoreValue(_ value: StoreValue) -> Data? {
        switch value.storage {
        case .blob(let bytes): return bytes
        case .string(let text): return Data(text.utf8)
        default: return nil
        }
    }
}

extension Optional: StoreValueConvertible where Wrapped: StoreValueConvertible {
    /// The wrapped value's, or NULL.
    package var storeValue: StoreValue { self?.storeValue ?? .null }
    /// NULL as `.some(nil)`; otherwise the wrapped type's reading, nil when that fails.
    package static func fromStoreValue(_ value: StoreValue) -> Wrapped?? {
        if let wrapped = Wrapped.fromStoreValue(value) { return .some(wrapped) }
        return value.isNull ? .some(nil) : nil
    }
}
