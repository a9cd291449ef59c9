import Foundation

/// The default transformer of Transformable attributes: Foundation's `NSSecureUnarchiveFromDataTransformer`,
/// reading and writing `NSKeyedArchiver` archives of Foundation values, the bytes Core Data stores.
///
/// As in Foundation, the forward direction unarchives: ``transformedValue(_:)`` takes `Data` and returns the
/// value; ``reverseTransformedValue(_:)`` archives a value into `Data`. Core Data therefore applies this
/// transformer (and subclasses of it) in reverse when it saves, and forward when it reads; a context here
/// does the same.
///
/// Values: `String`, `Bool`, integers, `Double`, `Float`, `Date`, `Data`, `URL`, `UUID`, and arrays, sets
/// and string-keyed dictionaries of these, nested. Integers read back as `Int`, reals as `Double`, sets as
/// `Set<AnyHashable>`, arrays as `[Any]`, dictionaries as `[String: Any]`.
///
/// Archives are read by the package's own keyed-archive reader, which builds no class the bytes name:
/// anything other than the Foundation value classes above is refused, and so is damaged or hostile data.
open class SecureUnarchiveFromDataTransformer: ValueTransformer, @unchecked Sendable {
    // @unchecked Sendable: no state.

    /// `Data`: the type ``reverseTransformedValue(_:)`` produces.
    override open class func transformedValueClass() -> Any.Type { Data.self }

    /// True: values are archived with ``reverseTransformedValue(_:)``.
    override open class func allowsReverseTransformation() -> Bool { true }

    /// The value archived in `value` (a `Data`), or nil when it is not an archive of Foundation values.
    override open func transformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        return try? unarchive(data)
    }

    /// The archive of `value` as `Data`, or nil when `value` holds something no archive of Foundation
    /// values can.
    override open func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value else { return nil }
        return try? archive(value)
    }

    /// The value archived in `data`; nil for an archive of `$null`.
    ///
    /// - Throws: ``KeyedArchive/Failure`` naming the object and field that are damaged or of a class that
    ///   is not a Foundation value class.
    func unarchive(_ data: Data) throws -> Any? {
        try KeyedArchive(data: data).foundationValue()
    }

    /// The archive of `value`.
    ///
    /// - Throws: ``KeyedArchiveWriter/Failure`` naming the element that cannot be archived.
    func archive(_ value: Any) throws -> Data {
        try KeyedArchiveWriter.archive(value)
    }
}
