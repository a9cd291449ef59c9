import Foundation

/// Turns values into other values, and back: Foundation's `ValueTransformer`, which Foundation on Linux
/// does not have, in the same shape, with its registry of named transformers.
///
/// A Transformable attribute names its transformer in the model (`valueTransformerName`); the context
/// looks it up here when a value is set and when one is read. Register your own before loading a model
/// that names them:
///
/// ```swift
/// final class PointTransformer: ValueTransformer {
///     override class func transformedValueClass() -> Any.Type { Data.self }
///     override func transformedValue(_ value: Any?) -> Any? {       // Point → Data, for the column
///         guard let point = value as? Point else { return nil }
///         return Data("\(point.x),\(point.y)".utf8)
///     }
///     override func reverseTransformedValue(_ value: Any?) -> Any? { // Data → Point, when read
///         ...
///     }
/// }
/// ValueTransformer.setValueTransformer(PointTransformer(), forName: ValueTransformerName("PointTransformer"))
/// ```
///
/// Registered by default, as on Apple's systems: ``ValueTransformerName/secureUnarchiveFromDataTransformerName``
/// and ``ValueTransformerName/keyedUnarchiveFromDataTransformerName``, both a
/// ``SecureUnarchiveFromDataTransformer``.
///
/// The name is Foundation's: on Linux there is no other, so code importing Foundation too names it plainly.
/// On Apple's systems, where Foundation has its own, a file importing both modules writes
/// `OpenCoreData.ValueTransformer` (the bare name is ambiguous there). Values are Swift values (`Any`),
/// not only objects, so ``transformedValueClass()`` returns `Any.Type` where Foundation's returns `AnyClass`.
///
/// A transformer is shared by every thread that uses the registry: a subclass keeps no mutable state, or
/// guards what it keeps.
open class ValueTransformer: @unchecked Sendable {
    // @unchecked Sendable: this class holds no state; subclasses are told above to guard theirs.

    /// Creates a transformer.
    public init() {}

    /// The type of the values ``transformedValue(_:)`` returns (`Any` here; subclasses narrow it).
    open class func transformedValueClass() -> Any.Type { Any.self }

    /// Whether ``reverseTransformedValue(_:)`` undoes ``transformedValue(_:)`` (true here, as in Foundation).
    open class func allowsReverseTransformation() -> Bool { true }

    /// The transformed value, or nil when `value` cannot be transformed. This base class returns `value`.
    open func transformedValue(_ value: Any?) -> Any? { value }

    /// The value `value` was transformed from, or nil when it cannot be turned back. This base class
    /// calls ``transformedValue(_:)`` when ``allowsReverseTransformation()`` is true, as Foundation's does.
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        type(of: self).allowsReverseTransformation() ? transformedValue(value) : nil
    }

    /// Registers `transformer` under `name`, replacing any transformer registered there; nil removes it.
    public class func setValueTransformer(_ transformer: ValueTransformer?, forName name: ValueTransformerName) {
        ValueTransformerRegistry.shared.set(transformer, forName: name)
    }

    /// The names of the registered transformers, sorted.
    public class func valueTransformerNames() -> [ValueTransformerName] {
        ValueTransformerRegistry.shared.names()
    }
}

/// Lets `ValueTransformer(forName:)` hand back the registered instance, as Foundation's does (a class's
/// own initializer cannot return another object; a protocol extension's can). Not for other uses.
public protocol ValueTransformerLookup {}

extension ValueTransformer: ValueTransformerLookup {}

extension ValueTransformerLookup {
    /// The transformer registered under `name`, or nil when none is (or it is not of this class).
    public init?(forName name: ValueTransformerName) {
        guard let found = ValueTransformerRegistry.shared.transformer(forName: name) as? Self else { return nil }
        self = found
    }
}

/// The registered transformers by name, behind a lock: registration and lookup may happen on any thread.
final class ValueTransformerRegistry: @unchecked Sendable {
    // @unchecked Sendable: `transformers` is read and written only while holding `lock`.
    static let shared = ValueTransformerRegistry()

    private let lock = NSLock()
    private var transformers: [ValueTransformerName: ValueTransformer] = [
        .secureUnarchiveFromDataTransformerName: SecureUnarchiveFromDataTransformer(),
        .keyedUnarchiveFromDataTransformerName: SecureUnarchiveFromDataTransformer(),
    ]

    func set(_ transformer: ValueTransformer?, forName name: ValueTransformerName) {
        lock.withLock { transformers[name] = transformer }
    }

    func transformer(forName name: ValueTransformerName) -> ValueTransformer? {
        lock.withLock { transformers[name] }
    }

    func names() -> [ValueTransformerName] {
        lock.withLock { transformers.keys.sorted { $0.rawValue < $1.rawValue } }
    }
}
