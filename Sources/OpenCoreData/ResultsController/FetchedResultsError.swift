import Foundation

/// Why a fetched results controller refused a request or a call. Each case names the culprit.
public enum FetchedResultsError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
    /// The request has no sort descriptors; a controller needs an order.
    case missingSortDescriptors(entity: String)
    /// The first sort key does not group like the section key path.
    case sectionKeyPathMismatch(sectionNameKeyPath: String, firstSortKey: String)
    /// A key path names no property of the entity (or of an entity it goes through).
    case unknownKeyPath(entity: String, keyPath: String)
    /// A key path cannot be used to order or section (through a to-many, or ending at no stored attribute).
    case unsupportedKeyPath(entity: String, keyPath: String, reason: String)
    /// The request uses something the controller does not support (fetchLimit, fetchOffset, a result
    /// type other than objects).
    case unsupportedRequest(String)
    /// The controller has not fetched yet.
    case notFetched
    /// No object at this index path.
    case indexPathOutOfRange(IndexPath)
    /// No section has this index title.
    case unknownSectionIndexTitle(String)
    /// The controller's result type is a class the entity's objects are not (the entity, or a sub-entity the
    /// results include, makes objects of `objectClass`).
    case resultTypeMismatch(entity: String, objectClass: String, resultType: String)

    /// The message naming the culprit and, where there is one, the fix.
    public var description: String {
        switch self {
        case .missingSortDescriptors(let entity):
            return "A fetched results controller needs a fetch request with sort descriptors (entity '\(entity)')."
        case .sectionKeyPathMismatch(let sectionKeyPath, let firstSortKey):
            return "The section key path '\(sectionKeyPath)' does not group like the first sort key '\(firstSortKey)'; make '\(sectionKeyPath)' the first sort descriptor's key."
        case .unknownKeyPath(let entity, let keyPath):
            return "Entity '\(entity)' has no key path '\(keyPath)'."
        case .unsupportedKeyPath(let entity, let keyPath, let reason):
            return "Key path '\(keyPath)' of entity '\(entity)' cannot order or section results: \(reason)."
        case .unsupportedRequest(let reason):
            return "A fetched results controller cannot run this request: \(reason)."
        case .notFetched:
            return "The fetched results controller has not fetched yet; call performFetch() first."
        case .indexPathOutOfRange(let indexPath):
            return "No object at index path [section \(indexPath.section), item \(indexPath.item)]."
        case .unknownSectionIndexTitle(let title):
            return "No section has the index title '\(title)'."
        case .resultTypeMismatch(let entity, let objectClass, let resultType):
            return "Objects of entity '\(entity)' are \(objectClass), not \(resultType): make the controller's result type a class they are (or ManagedObject), or give the entity that class."
        }
    }

    /// The same text as ``description``, for `LocalizedError`.
    public var errorDescription: String? { description }
}
