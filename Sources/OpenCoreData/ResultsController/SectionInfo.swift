import Foundation

/// One section of a fetched results controller: its name, index title, and objects.
///
/// ```swift
/// for section in controller.sections ?? [] {
///     print(section.name, section.numberOfObjects)
/// }
/// let first = try controller.sections?.first?.objects().first
/// ```
///
/// A section is a view of the controller at the time it was read: read it again after changes.
public struct SectionInfo {
    /// The section's name: the section key's value as a string ("" for nil, and for the one section of a
    /// controller without a section key path).
    public let name: String
    /// The index title (by default the name's first letter, capitalized); see
    /// ``FetchedResultsControllerDelegate/controller(_:sectionIndexTitleForSectionName:)``.
    public let indexTitle: String?
    /// How many objects the section holds.
    public let numberOfObjects: Int
    /// The section's position.
    public let index: Int
    unowned let controller: any SectionContents

    /// The section's objects, in order. With a `fetchBatchSize` they are read a batch at a time as the
    /// collection is used.
    ///
    /// - Throws: ``FetchedResultsError/notFetched`` when the controller has not fetched;
    ///   ``FetchedResultsError/indexPathOutOfRange(_:)`` when the section is gone after a later fetch or
    ///   change.
    public func objects() throws -> FetchResults<ManagedObject> {
        try controller.objects(inSection: index)
    }

    /// The section's object IDs, in order, without reading any object.
    public var objectIDs: [ManagedObjectID] {
        controller.objectIDs(inSection: index)
    }
}

/// What a ``SectionInfo`` reads its objects from: its controller, whatever the controller's result type.
protocol SectionContents: AnyObject {
    func objects(inSection section: Int) throws -> FetchResults<ManagedObject>
    func objectIDs(inSection section: Int) -> [ManagedObjectID]
}
