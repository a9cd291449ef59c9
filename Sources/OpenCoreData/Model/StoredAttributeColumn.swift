/// Where a stored attribute's value sits in its entity's row, and its type: a plain value, so reading an
/// attribute copies no strings and retains nothing.
struct StoredAttributeColumn: Sendable {
    /// The column's position in the row (``StoreSchema/PropertyStorage/attribute(column:columnIndex:)``).
    let column: Int
    let type: AttributeType
}
