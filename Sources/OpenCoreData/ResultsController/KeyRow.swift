
/// One row's sort-key values, read from its ``KeyColumn``s where they are (no array per row), for
/// comparing rows by ``ResultsOrdering/less(_:_:_:_:)``.
struct KeyRow: RandomAccessCollection {
    let columns: [KeyColumn]
    let row: Int

    var startIndex: Int { 0 }
    var endIndex: Int { columns.count }
    subscript(index: Int) -> StoreValue { columns[index][row] }
}
