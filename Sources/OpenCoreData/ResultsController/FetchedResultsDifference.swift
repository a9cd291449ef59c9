import Foundation

/// One transaction's changes to a fetched results controller as a value: the object IDs removed from
/// and inserted into each section, sections removed and inserted, and objects updated in place. For
/// code that applies snapshots instead of row-by-row updates.
///
/// ```swift
/// controller.onDifference = { difference in
///     rows = difference.applying(to: rows)        // [[ManagedObjectID]] per section
/// }
/// ```
///
/// Removals carry old positions and insertions new ones; a moved object is removed and inserted.
/// Applying: remove objects (old positions), remove sections (old indexes), insert sections (new
/// indexes), insert objects (new positions) — which ``applying(to:)`` does.
public struct FetchedResultsDifference: Sendable, Hashable {
    /// An object leaving (old index path) or arriving (new index path).
    public struct Change: Sendable, Hashable {
        /// The object.
        public var objectID: ManagedObjectID
        /// Its old index path for a removal, its new one for an insertion.
        public var indexPath: IndexPath
        /// The index path's section.
        public var section: Int { indexPath.section }
        /// The index path's item.
        public var item: Int { indexPath.item }
    }

    /// A section leaving (old index) or arriving (new index).
    public struct SectionChange: Sendable, Hashable {
        /// Its old index for a removal, its new one for an insertion.
        public var index: Int
        /// The section's name.
        public var name: String
    }

    /// Objects removed (deleted, or moved away), at their old index paths, in ascending order.
    public var removals: [Change] = []
    /// Objects inserted (new, or moved here), at their new index paths, in ascending order.
    public var insertions: [Change] = []
    /// Sections removed, at their old indexes, ascending.
    public var removedSections: [SectionChange] = []
    /// Sections inserted, at their new indexes, ascending.
    public var insertedSections: [SectionChange] = []
    /// Objects that changed without moving.
    public var updatedObjectIDs: [ManagedObjectID] = []
    /// Objects that moved (they are in both ``removals`` and ``insertions``).
    public var movedObjectIDs: [ManagedObjectID] = []

    /// Whether nothing changed.
    public var isEmpty: Bool {
        removals.isEmpty && insertions.isEmpty && removedSections.isEmpty && insertedSections.isEmpty
            && updatedObjectIDs.isEmpty
    }

    /// The IDs removed from each old section, by old section index.
    public var removedObjectIDsBySection: [Int: [ManagedObjectID]] {
        Dictionary(grouping: removals, by: \.section).mapValues { $0.map(\.objectID) }
    }

    /// The IDs inserted into each new section, by new section index.
    public var insertedObjectIDsBySection: [Int: [ManagedObjectID]] {
        Dictionary(grouping: insertions, by: \.section).mapValues { $0.map(\.objectID) }
    }

    /// The state after this difference, given the state before it (object IDs per section). Returns nil
    /// when the difference does not fit the given state.
    public func applying(to state: [[ManagedObjectID]]) -> [[ManagedObjectID]]? {
        var sections = state
        for removal in removals.sorted(by: { $0.indexPath > $1.indexPath }) {
            guard sections.indices.contains(removal.section),
                  sections[removal.section].indices.contains(removal.item),
                  sections[removal.section][removal.item] == removal.objectID else { return nil }
            sections[removal.section].remove(at: removal.item)
        }
        for section in removedSections.sorted(by: { $0.index > $1.index }) {
            guard sections.indices.contains(section.index), sections[section.index].isEmpty else { return nil }
            sections.remove(at: section.index)
        }
        for section in insertedSections.sorted(by: { $0.index < $1.index }) {
            guard section.index <= sections.count else { return nil }
            sections.insert([], at: section.index)
        }
        for insertion in insertions.sorted(by: { $0.indexPath < $1.indexPath }) {
            guard sections.indices.contains(insertion.section),
                  insertion.item <= sections[insertion.section].count else { return nil }
            sections[insertion.section].insert(insertion.objectID, at: insertion.item)
        }
        return sections
    }
}
