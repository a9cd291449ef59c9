import Foundation

/// Why a Core Data XML store (`NSXMLStoreType`) could not be read or written. Each case names the file and,
/// where there is one, the object (its `id` in the file), the key and the line.
public enum XMLStoreError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
    /// The file is not a Core Data XML store: not XML, not a `<database>`, an entity declaration, or an
    /// element a Core Data XML store never holds. `location` is the line (and column) where known.
    case malformed(path: String, location: String, reason: String)
    /// An object of the file is unusable: a missing or repeated id, an unknown value type, a value that does
    /// not parse as its type, a reference to an object the file lacks or of another entity. `key` is the
    /// attribute or relationship, when one is at fault.
    case invalidObject(path: String, objectID: String, key: String?, reason: String)
    /// The file's objects do not fit the model they were opened with (an entity or key the model lacks, a
    /// value of another type), or no model can be made of them.
    case modelMismatch(path: String, reason: String)
    /// A value of the store cannot be written in the XML store's layout (a type it has no spelling for).
    case unwritableValue(path: String, entity: String, key: String, reason: String)

    /// One line naming the file, the culprit and the reason.
    public var description: String {
        switch self {
        case .malformed(let path, let location, let reason):
            return "\(path) is not a Core Data XML store (\(location)): \(reason)."
        case .invalidObject(let path, let objectID, let key, let reason):
            return "\(path): object '\(objectID)'\(key.map { ", key '\($0)'" } ?? ""): \(reason)."
        case .modelMismatch(let path, let reason):
            return "\(path) does not fit the model: \(reason)."
        case .unwritableValue(let path, let entity, let key, let reason):
            return "\(path): \(entity).\(key) cannot be written to an XML store: \(reason)."
        }
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
