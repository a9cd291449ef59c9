import Foundation
import OpenCoreData

/// Reads an attribute for printing: a Transformable attribute whose value transformer this process lacks
/// (an app's own transformer class) gives its stored bytes instead, printed as binary data is, and says once
/// per transformer on stderr which one was missing.
final class MissingTransformerNotice: @unchecked Sendable {
    static let shared = MissingTransformerNotice()

    private let lock = NSLock()
    private var noted: Set<String> = []

    /// `object`'s value for `key`, or the stored bytes when its transformer is missing.
    ///
    /// - Throws: what ``ManagedObject/value(forKey:)`` throws, but for a missing transformer.
    func value(of object: ManagedObject, forKey key: String) throws -> Any? {
        do {
            return try object.value(forKey: key)
        } catch ObjectGraphError.unknownValueTransformer(let entity, let attribute, let name) {
            note(entity: entity, key: attribute, transformer: name)
            return try object.storedTransformableData(forKey: key)
        }
    }

    private func note(entity: String, key: String, transformer: String) {
        let first = lock.withLock { noted.insert(transformer).inserted }
        guard first else { return }
        Console.error("note: no value transformer named \(ValueText.quoted(transformer)) here (\(entity).\(key) names it); "
            + "its values are printed as their stored bytes")
    }
}
