import Foundation

/// How a save resolves optimistic-locking conflicts: rows another context or process changed since
/// this context read them (`Z_OPT` moved on).
public enum MergePolicy: Sendable, Hashable {
    /// Refuse the save with ``ObjectGraphError/mergeConflict(_:)``, naming both versions (the default).
    case error
    /// Per property: the store's value wins where both changed; this context's other changes are kept.
    case mergeByPropertyStoreTrump
    /// Per property: this context's changed values win; the store's values fill in the rest.
    case mergeByPropertyObjectTrump
    /// This context's whole objects are written over the store's.
    case overwrite
    /// This context's changes to conflicting objects are thrown away in favour of the store.
    case rollback
}
