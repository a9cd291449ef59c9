import Foundation

/// Reading values by key, as Foundation's key-value coding does on Apple's systems.
///
/// Managed objects and `[String: Any]` dictionaries conform, so predicates and sort descriptors evaluate
/// in memory on either.
public protocol KeyValueCoding {
    /// The value for one key (no dots).
    ///
    /// - Throws: whatever the conforming type reports for a key it cannot read;
    ///   ``ManagedObject/value(forKey:)`` says what a managed object throws, and a dictionary never throws.
    func value(forKey key: String) throws -> Any?
}

extension KeyValueCoding {
    /// The value at a dotted key path. Through a to-many step the result is an array of the values
    /// reached from each member (nil members left out), as Foundation's key-value coding gives.
    ///
    /// - Throws: what ``value(forKey:)`` throws at any step of the path, for a managed object
    ///   ``ObjectGraphError/unknownKey(entity:key:)`` when a key is not a property of the entity reached there.
    public func value(forKeyPath keyPath: String) throws -> Any? {
        var current: Any? = self
        for key in keyPath.split(separator: ".", omittingEmptySubsequences: false) {
            current = try KeyValueCodingSupport.step(current, key: String(key))
        }
        return current
    }
}

enum KeyValueCodingSupport {
    static func step(_ value: Any?, key: String) throws -> Any? {
        switch value {
        case nil: return nil
        case let object as KeyValueCoding: return try object.value(forKey: key)
        case let collection as any Collection:
            var results: [Any] = []
            for element in collection {
                if let next = try step(element, key: key) {
                    if let nested = next as? [Any] { results.append(contentsOf: nested) } else { results.append(next) }
                }
            }
            return results
        default: return nil
        }
    }
}

extension Dictionary: KeyValueCoding where Key == String {
    /// The value stored under `key`, unwrapped when it is an optional; nil when there is none.
    ///
    /// - Throws: nothing: a missing key reads as nil.
    public func value(forKey key: String) throws -> Any? {
        guard let value = self[key] else { return nil }
        if let optional = value as? any OptionalProtocol { return optional.wrappedAny }
        return value
    }
}
