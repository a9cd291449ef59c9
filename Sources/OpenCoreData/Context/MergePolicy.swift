import Foundation

/// How a save resolves its conflicts, as Core Data's merge policies do: optimistic-locking conflicts (rows
/// another context or process changed since this context read them, `Z_OPT` moved on) and
/// uniqueness-constraint conflicts (objects of the save sharing a `uniquenessConstraints` entry's values
/// with each other or with a stored row; see ``ConstraintConflict``).
///
/// A constraint conflict is settled before anything is written by folding the group into one object: the
/// stored row's object when there is one (its ID survives), otherwise the group's first object that already
/// has a row, otherwise its first new object. The other objects are merged into it by the policy's rule and
/// deleted; a new object deleted so keeps the survivor's values, so references to it read what was saved.
/// Under every merging policy, the objects a loser's to-many relationships hold are added to the survivor's.
public enum MergePolicy: Sendable, Hashable {
    /// Refuse the save: ``ObjectGraphError/mergeConflict(_:)`` naming both versions, or
    /// ``ObjectGraphError/constraintConflict(_:)`` naming the constraint, its values and the objects (the
    /// default).
    case error
    /// Per property: the store's value wins where both changed; this context's other changes are kept.
    /// For a constraint conflict: the survivor's values win; a loser's values fill only what it leaves empty.
    case mergeByPropertyStoreTrump
    /// Per property: this context's changed values win; the store's values fill in the rest. For a
    /// constraint conflict: each loser's changed values (all set values of a new object) are written over the
    /// survivor's, later objects over earlier ones; the rest of the survivor stays.
    case mergeByPropertyObjectTrump
    /// This context's whole objects are written over the store's. For a constraint conflict: every
    /// attribute and to-one of a loser, set or not, is written over the survivor.
    case overwrite
    /// This context's changes to conflicting objects are thrown away in favour of the store. For a
    /// constraint conflict: a new loser is discarded and a changed one loses its unsaved changes; the survivor
    /// stays as it is.
    case rollback
}
