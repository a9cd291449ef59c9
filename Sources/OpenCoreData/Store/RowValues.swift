
/// One row of an entity table, in the table's column order (Z_PK, Z_ENT, Z_OPT first): a window of
/// `count` values into a shared ``RowBlock``, with value semantics (a write copies the row out first
/// unless the row is alone in a block nobody else refers to).
package struct RowValues: RandomAccessCollection, MutableCollection, @unchecked Sendable {
    // @unchecked Sendable (ManagedBuffer, under the block, is not Sendable): a block holding several rows
    // is never written after it is built; a single-row block is written only through the one `RowValues`
    // that refers to it (copy-on-write).
    private var block: RowBlock
    /// Where the row starts in `block.values`.
    private var start: Int

    /// The block the row is in (for checks that its references balance).
    var storageBlock: RowBlock { block }

    init(block: RowBlock, start: Int) {
        self.block = block
        self.start = start
    }

    init(repeating value: StoreValue, count: Int) {
        self.init(block: RowBlock.make(values: repeatElement(value, count: count), width: count), start: 0)
    }

    /// A row of its own holding `values`, as another store's reader gives them.
    package init(values: [StoreValue]) {
        self.init(block: RowBlock.make(values: values, width: values.count), start: 0)
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { block.width }
    package var count: Int { block.width }

    @inline(__always)
    package func index(after index: Int) -> Int { index + 1 }
    @inline(__always)
    package func index(before index: Int) -> Int { index - 1 }

    package subscript(index: Int) -> StoreValue {
        @inline(__always)
        get {
            // The block's own bounds check would let an index past the row read its neighbour.
            precondition(index >= 0 && index < block.width, "RowValues index out of range")
            return block.value(at: start &+ index)
        }
        set {
            precondition(index >= 0 && index < block.width, "RowValues index out of range")
            if !isKnownUniquelyReferenced(&block) || !block.holdsSingleRow { copyToOwnBlock() }
            block.setValue(newValue, at: index)
        }
    }

    /// The value at `index`, a value kept in an `_EXTERNAL_DATA` file read now (the subscript reads one
    /// that cannot be read as no value; an object's attribute read reports why instead).
    ///
    /// - Throws: ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)`` naming the row.
    func loadedValue(at index: Int) throws -> StoreValue {
        precondition(index >= 0 && index < block.width, "RowValues index out of range")
        return try block.withCells { try $0.loadedValue(at: start &+ index) }
    }

    /// The block's cells and where this row starts in them: for reading a row held in a stored property
    /// without copying it. Only pointers come back, so the caller's copy of the row (a retain of its block)
    /// ends here; they stay valid while the holder keeps the row unchanged.
    @inline(__always)
    var cellsInPlace: (cells: RowBlock.Cells, start: Int) { (block.withCells { $0 }, start) }

    /// Moves the row into a fresh single-row block, leaving the shared one (and its other rows) untouched.
    private mutating func copyToOwnBlock() {
        block = block.copy(start: start, count: block.width)
        start = 0
    }

    /// Whether this row is alone in a block only it refers to (written in place), for tests.
    mutating func isUniquelyOwned() -> Bool { isKnownUniquelyReferenced(&block) && block.holdsSingleRow }

    /// The block's identity, for tests.
    var blockIdentity: ObjectIdentifier { ObjectIdentifier(block) }

    /// Text and blob values the row's block keeps (some perhaps no longer referred to), for tests.
    var sideValueCount: Int { block.withCells { $0.header.pointee.sideCount } }

    /// Whether both rows lie in the same block, for tests.
    func sharesBlock(with other: RowValues) -> Bool { block === other.block }
}

extension RowValues: Equatable {
    package static func == (lhs: RowValues, rhs: RowValues) -> Bool { lhs.elementsEqual(rhs) }
}

extension RowValues: ExpressibleByArrayLiteral {
    package init(arrayLiteral elements: StoreValue...) {
        self.init(block: RowBlock.make(values: elements, width: elements.count), start: 0)
    }
}

extension RowValues {
    // Every entity table starts with these three integer columns.
    var primaryKey: Int64 { integer(at: 0) }
    var entityNumber: Int { Int(integer(at: 1)) }
    var version: Int64 { integer(at: 2) }

    /// An integer column's value straight from its cell (0 if it holds no integer).
    @inline(__always)
    private func integer(at index: Int) -> Int64 {
        precondition(index < block.width, "RowValues index out of range")
        return block.integer(at: start &+ index)
    }
}
