import Foundation

#if !canImport(UIKit) && !canImport(AppKit)
// Apple's UI frameworks give IndexPath these; elsewhere the controller provides them.
extension IndexPath {
    /// An index path for an item (or table row) in a section.
    public init(item: Int, section: Int) { self.init(section: section, position: item) }
    /// An index path for a table row in a section (`row` is `item`).
    public init(row: Int, section: Int) { self.init(section: section, position: row) }

    /// Built by appending rather than from `[section, item]`: IndexPath keeps two indexes inline, so this
    /// allocates nothing, where the array costs an allocation on every call (it is made once per access).
    private init(section: Int, position: Int) {
        self.init(index: section)
        append(position)
    }

    /// The section (the first index; 0 for an empty path).
    public var section: Int { count > 0 ? self[0] : 0 }
    /// The item in the section (the second index; 0 for a shorter path).
    public var item: Int { count > 1 ? self[1] : 0 }
    /// The table row (`item`).
    public var row: Int { item }
}
#endif
