import Foundation

/// What happened to an object or a section in a fetched results controller's report.
public enum FetchedResultsChangeType: Sendable, Hashable, CustomStringConvertible {
    /// It is new: `newIndexPath` (or the new section index) gives where.
    case insert
    /// It is gone: `indexPath` (or the old section index) gives where it was.
    case delete
    /// It moved from `indexPath` (old) to `newIndexPath` (new).
    case move
    /// It changed in place: `indexPath` is where it was before the change, `newIndexPath` where it is after.
    case update

    /// The change's name: `insert`, `delete`, `move` or `update`.
    public var description: String {
        switch self {
        case .insert: return "insert"
        case .delete: return "delete"
        case .move: return "move"
        case .update: return "update"
        }
    }
}

/// Hears what changed in a fetched results controller, in the order a table view's batch update wants.
///
/// Every method has a default that does nothing. Index paths follow the table-view batch-update
/// contract: deletions (of objects and sections) at old positions, insertions at new positions, moves
/// from old to new, updates at old positions.
///
/// The delegate names the controller's result type in its methods, and only a delegate of that type can
/// be set: a method written for another type would otherwise never be called, without a word.
///
/// ```swift
/// final class ListScreen: FetchedResultsControllerDelegate {
///     func controllerWillChangeContent(_ controller: FetchedResultsController<Item>) { table.beginUpdates() }
///     func controller(_ controller: FetchedResultsController<Item>, didChange object: ManagedObject,
///                     at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
///         switch type {
///         case .insert: table.insertRows(at: [newIndexPath!])
///         case .delete: table.deleteRows(at: [indexPath!])
///         case .move: table.moveRow(at: indexPath!, to: newIndexPath!)
///         case .update: table.reloadRows(at: [indexPath!])
///         }
///     }
///     func controllerDidChangeContent(_ controller: FetchedResultsController<Item>) { table.endUpdates() }
/// }
/// ```
public protocol FetchedResultsControllerDelegate<ResultType>: AnyObject {
    /// The result type of the controllers this delegate hears (inferred from its methods).
    associatedtype ResultType: ManagedObject = ManagedObject
    /// Changes are about to be reported.
    func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>)
    /// An object was inserted, deleted, moved or updated.
    func controller(_ controller: FetchedResultsController<ResultType>, didChange object: ManagedObject,
                    at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// A section was inserted (at its new index) or deleted (at its old index).
    func controller(_ controller: FetchedResultsController<ResultType>, didChange sectionInfo: SectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// Every change of this transaction has been reported.
    func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>)
    /// The index title for a section name; nil for the default (the name's first letter, capitalized).
    func controller(_ controller: FetchedResultsController<ResultType>,
                    sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension FetchedResultsControllerDelegate {
    /// Does nothing.
    public func controllerWillChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    /// Does nothing.
    public func controller(_ controller: FetchedResultsController<ResultType>, didChange object: ManagedObject,
                           at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    /// Does nothing.
    public func controller(_ controller: FetchedResultsController<ResultType>, didChange sectionInfo: SectionInfo,
                           atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {}
    /// Does nothing.
    public func controllerDidChangeContent(_ controller: FetchedResultsController<ResultType>) {}
    /// Nil: the default title, the name's first letter capitalized.
    public func controller(_ controller: FetchedResultsController<ResultType>,
                           sectionIndexTitleForSectionName sectionName: String) -> String? { nil }
}
