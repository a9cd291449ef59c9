import GRDB
import GRDBSQLite

/// What a ``RowBlock`` knows of itself.
struct RowBlockHeader {
    /// Values initialized so far.
    var count: Int
    /// Values the block has room for.
    let capacity: Int
    /// Values per row.
    let width: Int
}

/// The values of many rows of one width, back to back in the block's own allocation: fetched rows share
/// one allocation instead of one array each, and are decoded straight into place.
final class RowBlock: ManagedBuffer<RowBlockHeader, DatabaseValue> {

    /// An empty block with room for `capacity` values.
    static func make(width: Int, capacity: Int) -> RowBlock {
        let buffer = RowBlock.create(minimumCapacity: capacity) { _ in
            RowBlockHeader(count: 0, capacity: capacity, width: width)
        }
        return unsafeDowncast(buffer, to: RowBlock.self)
    }

    /// A block holding `values`.
    static func make<Values: Collection>(values: Values, width: Int) -> RowBlock where Values.Element == DatabaseValue {
        let block = make(width: width, capacity: values.count)
        block.withUnsafeMutablePointers { header, elements in
            var position = 0
            for value in values {
                (elements + position).initialize(to: value)
                position += 1
            }
            header.pointee.count = position
        }
        return block
    }

    deinit {
        withUnsafeMutablePointers { header, elements in
            // One value at a time: the specialized destroy of a `DatabaseValue` (a release only for text
            // and blobs), where `deinitialize(count:)` goes through the runtime's generic array destroy.
            for index in 0..<header.pointee.count { (elements + index).deinitialize(count: 1) }
        }
    }

    // The header is read through its pointer: the `header` property is checked for exclusive access at run
    // time on every use.

    /// Values per row.
    var width: Int { withUnsafeMutablePointerToHeader { $0.pointee.width } }

    /// Values initialized so far.
    var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

    /// Whether the block holds one row only, so a sole owner may write it in place.
    var holdsSingleRow: Bool { withUnsafeMutablePointerToHeader { $0.pointee.count == $0.pointee.width } }

    @inline(__always)
    func value(at index: Int) -> DatabaseValue {
        withUnsafeMutablePointers { header, elements in
            precondition(index >= 0 && index < header.pointee.count, "RowBlock index out of range")
            return elements[index]
        }
    }

    @inline(__always)
    func setValue(_ value: DatabaseValue, at index: Int) {
        withUnsafeMutablePointers { header, elements in
            precondition(index >= 0 && index < header.pointee.count, "RowBlock index out of range")
            elements[index] = value
        }
    }

    /// A new block holding a copy of `count` values from `start`.
    func copy(start: Int, count: Int) -> RowBlock {
        withUnsafeMutablePointers { header, elements in
            precondition(start >= 0 && start + count <= header.pointee.count, "RowBlock range out of bounds")
            return RowBlock.make(values: UnsafeBufferPointer(start: elements + start, count: count), width: header.pointee.width)
        }
    }

    /// Moves every value into `other` (empty, with room for them), leaving this block empty.
    func moveValues(into other: RowBlock) {
        withUnsafeMutablePointers { header, elements in
            other.withUnsafeMutablePointers { otherHeader, otherElements in
                precondition(otherHeader.pointee.count == 0 && header.pointee.count <= otherHeader.pointee.capacity,
                             "RowBlock move into a block without room")
                otherElements.moveInitialize(from: elements, count: header.pointee.count)
                otherHeader.pointee.count = header.pointee.count
                header.pointee.count = 0
            }
        }
    }
}

/// One row of an entity table, in the table's column order (Z_PK, Z_ENT, Z_OPT first): a window of
/// `count` values into a shared ``RowBlock``, with value semantics (a write copies the row out first
/// unless the row is alone in a block nobody else refers to).
struct RowValues: RandomAccessCollection, MutableCollection, @unchecked Sendable {
    // @unchecked Sendable (ManagedBuffer, under the block, is not Sendable): a block holding several rows
    // is never written after it is built; a single-row block is written only through the one `RowValues`
    // that refers to it (copy-on-write).
    private var block: RowBlock
    /// Where the row starts in `block.values`.
    private var start: Int

    init(block: RowBlock, start: Int) {
        self.block = block
        self.start = start
    }

    init(repeating value: DatabaseValue, count: Int) {
        self.init(block: RowBlock.make(values: repeatElement(value, count: count), width: count), start: 0)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { block.width }
    var count: Int { block.width }

    @inline(__always)
    func index(after index: Int) -> Int { index + 1 }
    @inline(__always)
    func index(before index: Int) -> Int { index - 1 }

    subscript(index: Int) -> DatabaseValue {
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

    /// Moves the row into a fresh single-row block, leaving the shared one (and its other rows) untouched.
    private mutating func copyToOwnBlock() {
        block = block.copy(start: start, count: block.width)
        start = 0
    }

    /// Whether this row is alone in a block only it refers to (written in place), for tests.
    mutating func isUniquelyOwned() -> Bool { isKnownUniquelyReferenced(&block) && block.holdsSingleRow }

    /// The block's identity, for tests.
    var blockIdentity: ObjectIdentifier { ObjectIdentifier(block) }

    /// Whether both rows lie in the same block, for tests.
    func sharesBlock(with other: RowValues) -> Bool { block === other.block }
}

extension RowValues: Equatable {
    static func == (lhs: RowValues, rhs: RowValues) -> Bool { lhs.elementsEqual(rhs) }
}

extension RowValues: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: DatabaseValue...) {
        self.init(block: RowBlock.make(values: elements, width: elements.count), start: 0)
    }
}

extension RowValues {
    var primaryKey: Int64 { if case .int64(let v) = self[0].storage { return v } else { return 0 } }
    var entityNumber: Int { if case .int64(let v) = self[1].storage { return Int(v) } else { return 0 } }
    var version: Int64 { if case .int64(let v) = self[2].storage { return v } else { return 0 } }
}
