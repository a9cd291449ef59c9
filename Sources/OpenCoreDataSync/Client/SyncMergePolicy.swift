import Foundation

/// How a pulled change meets local changes that have not been pushed yet.
///
/// Core Data's CloudKit mirroring merges property by property; so does this: a pulled change only touches
/// the properties it carries.
public enum SyncMergePolicy: Sendable, Hashable {
    /// The default. A property changed locally and not yet pushed keeps its local value; every other property
    /// takes the server's. The local value wins on the server too once pushed, so all replicas converge on
    /// it (Core Data's "object trumps", property by property, where the object is the local one).
    case localChangesWin
    /// Every pulled property overwrites the local value, pushed or not (Core Data's "store trumps"). Local
    /// changes not yet pushed are still pushed afterwards, so the last push still decides on the server.
    case serverWins
}
