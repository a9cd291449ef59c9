import Foundation

/// What a ``RowBlock`` knows of itself.
struct RowBlockHeader {
    /// Values initialized so far.
    var count: Int
    /// Values the block has room for.
    let capacity: Int
    /// Values per row.
    let width: Int
    /// The block's text and blob values, each referred to by the one cell that holds its index: memory
    /// of the block's own (no array to check for uniqueness on every append, or to retain on every read).
    /// Unsafe: allocated, grown and freed only by the methods below and the block's deinit, so no pointer to
    /// it outlives the block. Saves an array's uniqueness check per text value decoded (`fetch-all`).
    var side: UnsafeMutablePointer<StoreValue>?
    var sideCount = 0
    var sideCapacity = 0
    /// The flagged columns whose `.external` cells this block holds: what reads their files when asked.
    var external: ExternalBinaryStorage.TableColumns?

    init(capacity: Int, width: Int) {
        count = 0
        self.capacity = capacity
        self.width = width
    }

    /// Room for at least `capacity` side values in all.
    mutating func reserveSide(_ capacity: Int) {
        guard capacity > sideCapacity else { return }
        let grown = UnsafeMutablePointer<StoreValue>.allocate(capacity: capacity)
        if let side {
            grown.moveInitialize(from: side, count: sideCount)
            side.deallocate()
        }
        side = grown
        sideCapacity = capacity
    }

    mutating func appendSide(_ value: StoreValue) -> Int {
        if sideCount == sideCapacity { reserveSide(max(4, sideCapacity * 2)) }
        (side.unsafelyUnwrapped + sideCount).initialize(to: value)
        sideCount += 1
        return sideCount - 1
    }

    /// Gives the side values back (the block is going).
    mutating func releaseSide() {
        guard let side else { return }
        side.deinitialize(count: sideCount)
        side.deallocate()
        self.side = nil
        sideCount = 0
        sideCapacity = 0
    }
}

/// How a ``RowBlock`` cell holds its value.
enum RowCellKind: UInt8 {
    case null = 0
    /// The cell's bits are an `Int64`.
    case integer
    /// The cell's bits are a `Double`.
    case real
    /// The cell's bits are an index into the header's `side` values (text or blob).
    case side
    /// The cell's bits are an index into the header's `side` values holding a column's reference to a file
    /// in `_EXTERNAL_DATA`: the value is read from the file when asked for (the header's `external`), so a
    /// fetch does not read, or hold, values nobody asks for.
    case external
}

/// The values of many rows of one width, back to back in the block's own allocation: fetched rows share
/// one allocation instead of one array each, and are decoded straight into place.
///
/// Each value is an 8-byte cell with a kind byte, not a 24-byte `StoreValue`: a context's rows are most
/// of the memory it holds, and every byte of a freshly read row is memory the processor has to fetch and
/// write. Numbers live in the cell; text and blobs in the header's `side` list, by index. The kinds follow
/// the cells in the same allocation (one byte per cell, rounded up to whole words).
final class RowBlock: ManagedBuffer<RowBlockHeader, UInt64> {

    /// Words holding the kind bytes of `capacity` cells.
    private static func kindWords(_ capacity: Int) -> Int { (capacity + 7) / 8 }

    /// An empty block with room for `capacity` values.
    static func make(width: Int, capacity: Int) -> RowBlock {
        let buffer = RowBlock.create(minimumCapacity: capacity + kindWords(capacity)) { _ in
            RowBlockHeader(capacity: capacity, width: width)
        }
        // The kinds' words are only ever read and written as bytes: bind them so (see `Cells.kinds`).
        // Safe: the words lie past the `capacity` cells, inside the block's own allocation, and nothing reads
        // them as `UInt64`. Saves a separate kinds array (an allocation and a free) per block (`fetch-all`).
        buffer.withUnsafeMutablePointerToElements { elements in
            _ = UnsafeMutableRawPointer(elements + capacity).bindMemory(to: UInt8.self, capacity: kindWords(capacity) * 8)
        }
        // `RowBlock.create` makes a RowBlock (ManagedBuffer.create returns the base type): the downcast only
        // skips the runtime's check, once per block.
        return unsafeDowncast(buffer, to: RowBlock.self)
    }

    /// A block holding `values`.
    static func make<Values: Collection>(values: Values, width: Int) -> RowBlock where Values.Element == StoreValue {
        let block = make(width: width, capacity: values.count)
        block.withCells { cells in
            var position = 0
            for value in values {
                cells.initialize(position, to: value)
                position += 1
            }
            cells.header.pointee.count = position
        }
        return block
    }

    /// The block's cells, kinds and header, for reading and writing in place while the block is held.
    /// Unsafe: the pointers are a ManagedBuffer's header and elements, which stay put for the object's
    /// lifetime; a `Cells` is used only while its block is held (inside `withCells`, or by the builder
    /// that owns the block). Saves a retain/release and an exclusivity check per cell (`fetch-all`,
    /// `load-batch-by-id`).
    struct Cells {
        let header: UnsafeMutablePointer<RowBlockHeader>
        let bits: UnsafeMutablePointer<UInt64>
        let kinds: UnsafeMutablePointer<UInt8>

        init(header: UnsafeMutablePointer<RowBlockHeader>, elements: UnsafeMutablePointer<UInt64>) {
            self.header = header
            bits = elements
            // Bound to `UInt8` once, in `make(width:capacity:)`: no rebinding per access.
            kinds = UnsafeMutableRawPointer(elements + header.pointee.capacity).assumingMemoryBound(to: UInt8.self)
        }

        @inline(__always)
        func value(at index: Int) -> StoreValue {
            switch kinds[index] {
            case RowCellKind.integer.rawValue: return Int64(bitPattern: bits[index]).storeValue
            case RowCellKind.real.rawValue: return Double(bitPattern: bits[index]).storeValue
            case RowCellKind.side.rawValue: return header.pointee.side.unsafelyUnwrapped[Int(truncatingIfNeeded: bits[index])]
            case RowCellKind.external.rawValue:
                // Callers that can report the file's failure read through `loadedValue(at:)` (an object's
                // attribute); here a file that went away since the fetch checked it reads as no value.
                return (try? loadedValue(at: index)) ?? .null
            default: return .null
            }
        }

        /// The value of cell `index`, a deferred `_EXTERNAL_DATA` value read from its file now.
        ///
        /// - Throws: ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)`` naming the row
        ///   when the file cannot be read.
        func loadedValue(at index: Int) throws -> StoreValue {
            guard kinds[index] == RowCellKind.external.rawValue else { return value(at: index) }
            let stored = header.pointee.side.unsafelyUnwrapped[Int(truncatingIfNeeded: bits[index])]
            guard let external = header.pointee.external else { return stored }
            let width = header.pointee.width
            let start = index - index % width
            return try external.loadDeferred(stored, column: index - start,
                                              entityNumber: Int(Int64(bitPattern: bits[start + 1])),
                                              primaryKey: Int64(bitPattern: bits[start]))
        }

        /// The value of a row's column for an attribute of `type`, as `value(forKey:)` returns it: the common
        /// exact types straight from the cell, the rest through ``ValueConversion/swiftValue(_:for:)``.
        /// `column` is checked against the row's width; `start` is the row's first cell.
        @inline(__always)
        func swiftValue(start: Int, column: Int, for type: AttributeType) -> Any? {
            precondition(column >= 0 && column < header.pointee.width, "RowValues index out of range")
            let cell = start &+ column
            switch kinds[cell] {
            case RowCellKind.side.rawValue:
                if type == .string,
                   case .string(let text) = header.pointee.side.unsafelyUnwrapped[Int(truncatingIfNeeded: bits[cell])].storage {
                    return text
                }
            case RowCellKind.integer.rawValue:
                if type == .integer64 { return Int64(bitPattern: bits[cell]) }
                if type == .boolean { return bits[cell] != 0 }
            case RowCellKind.real.rawValue:
                if type == .double { return Double(bitPattern: bits[cell]) }
                if type == .date { return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits[cell])) }
            case RowCellKind.null.rawValue:
                return nil
            default:
                break
            }
            return ValueConversion.swiftValue(value(at: cell), for: type)
        }

        /// Sets a cell that held nothing before (a side value goes to the end of the side list).
        @inline(__always)
        func initialize(_ index: Int, to value: StoreValue) {
            switch value.storage {
            case .null: setNull(index)
            case .int64(let integer): setInteger(index, integer)
            case .double(let real): setReal(index, real)
            case .string, .blob: appendSide(index, value)
            }
        }

        /// Sets a cell, reusing its side slot if it had one.
        func assign(_ index: Int, to value: StoreValue) {
            switch value.storage {
            case .string, .blob:
                if kinds[index] == RowCellKind.side.rawValue || kinds[index] == RowCellKind.external.rawValue {
                    header.pointee.side.unsafelyUnwrapped[Int(truncatingIfNeeded: bits[index])] = value
                    kinds[index] = RowCellKind.side.rawValue
                } else {
                    // More side values than cells means some are no longer referred to: drop them first,
                    // so a row written over and over keeps a bounded list.
                    if header.pointee.sideCount >= header.pointee.count { compactSide() }
                    appendSide(index, value)
                }
            default:
                // A side value the cell referred to stays in the list until the next compaction (only a
                // block of a single row is ever written).
                initialize(index, to: value)
            }
        }

        /// Keeps only the side values some cell refers to, renumbering those cells.
        func compactSide() {
            var kept: [StoreValue] = []
            for index in 0..<header.pointee.count
            where kinds[index] == RowCellKind.side.rawValue || kinds[index] == RowCellKind.external.rawValue {
                kept.append(header.pointee.side.unsafelyUnwrapped[Int(truncatingIfNeeded: bits[index])])
                bits[index] = UInt64(kept.count - 1)
            }
            header.pointee.releaseSide()
            header.pointee.reserveSide(kept.count)
            for value in kept { _ = header.pointee.appendSide(value) }
        }

        @inline(__always)
        func setNull(_ index: Int) {
            bits[index] = 0
            kinds[index] = RowCellKind.null.rawValue
        }

        @inline(__always)
        func setInteger(_ index: Int, _ value: Int64) {
            bits[index] = UInt64(bitPattern: value)
            kinds[index] = RowCellKind.integer.rawValue
        }

        @inline(__always)
        func setReal(_ index: Int, _ value: Double) {
            bits[index] = value.bitPattern
            kinds[index] = RowCellKind.real.rawValue
        }

        @inline(__always)
        func appendSide(_ index: Int, _ value: StoreValue) {
            bits[index] = UInt64(header.pointee.appendSide(value))
            kinds[index] = RowCellKind.side.rawValue
        }
    }

    deinit {
        withUnsafeMutablePointerToHeader { $0.pointee.releaseSide() }
    }

    @inline(__always)
    func withCells<Result>(_ body: (Cells) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { header, elements in try body(Cells(header: header, elements: elements)) }
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
    func value(at index: Int) -> StoreValue {
        withCells { cells in
            precondition(index >= 0 && index < cells.header.pointee.count, "RowBlock index out of range")
            return cells.value(at: index)
        }
    }

    /// The integer at `index`, 0 when the value is not an integer (the row's key, entity and version).
    @inline(__always)
    func integer(at index: Int) -> Int64 {
        withCells { cells in
            precondition(index >= 0 && index < cells.header.pointee.count, "RowBlock index out of range")
            return cells.kinds[index] == RowCellKind.integer.rawValue ? Int64(bitPattern: cells.bits[index]) : 0
        }
    }

    @inline(__always)
    func setValue(_ value: StoreValue, at index: Int) {
        withCells { cells in
            precondition(index >= 0 && index < cells.header.pointee.count, "RowBlock index out of range")
            cells.assign(index, to: value)
        }
        #if DEBUG
        InvariantCheck.verify("RowBlock", after: "setValue", invariantViolations())
        #endif
    }

    /// A new block holding a copy of `count` values from `start` (with only the side values they refer to).
    func copy(start: Int, count: Int) -> RowBlock {
        withCells { cells in
            precondition(start >= 0 && start + count <= cells.header.pointee.count, "RowBlock range out of bounds")
            let copy = RowBlock.make(width: cells.header.pointee.width, capacity: count)
            copy.withCells { target in
                target.header.pointee.external = cells.header.pointee.external
                for offset in 0..<count {
                    let index = start + offset
                    if cells.kinds[index] == RowCellKind.side.rawValue || cells.kinds[index] == RowCellKind.external.rawValue {
                        target.appendSide(offset, cells.header.pointee.side.unsafelyUnwrapped[Int(truncatingIfNeeded: cells.bits[index])])
                        target.kinds[offset] = cells.kinds[index]
                    } else {
                        target.bits[offset] = cells.bits[index]
                        target.kinds[offset] = cells.kinds[index]
                    }
                }
                target.header.pointee.count = count
            }
            return copy
        }
    }

    /// Moves every value into `other` (empty, with room for them), leaving this block empty.
    func moveValues(into other: RowBlock) {
        withCells { cells in
            other.withCells { target in
                let count = cells.header.pointee.count
                precondition(target.header.pointee.count == 0 && target.header.pointee.side == nil
                                 && count <= target.header.pointee.capacity,
                             "RowBlock move into a block without room")
                target.bits.update(from: cells.bits, count: count)
                target.kinds.update(from: cells.kinds, count: count)
                target.header.pointee.side = cells.header.pointee.side
                target.header.pointee.sideCount = cells.header.pointee.sideCount
                target.header.pointee.sideCapacity = cells.header.pointee.sideCapacity
                target.header.pointee.external = cells.header.pointee.external
                cells.header.pointee.side = nil
                cells.header.pointee.sideCount = 0
                cells.header.pointee.sideCapacity = 0
                target.header.pointee.count = count
                cells.header.pointee.count = 0
            }
        }
    }
}
