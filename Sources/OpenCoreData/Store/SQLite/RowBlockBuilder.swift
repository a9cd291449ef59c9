import Foundation
import GRDB
import GRDBSQLite

/// Collects stepped rows into shared ``RowBlock``s: one allocation per block of rows instead of one per
/// row. A block is handed out only once it is complete, so a block that rows refer to is never written.
struct RowBlockBuilder {
    /// Values a full block holds (about 18 KB of cells and kinds, plus its text: 256 rows of eight columns).
    /// A block lives as long as any of its rows is referenced, so a larger one could pin a lot of memory after
    /// most of its objects are gone; this is large enough that the per-block allocation is noise beside the
    /// rows' decoding, and small enough to stay under malloc's mmap threshold (128 KB), which would make each
    /// block a syscall.
    static let valuesPerBlock = 2048

    /// Values per row.
    let width: Int
    /// Rows a full block holds.
    let rowsPerBlock: Int
    /// Rows the first block makes room for.
    private let firstBlockRows: Int
    /// The block being filled; made at the first row.
    private(set) var block: RowBlock?
    /// The block's header and cells, written through while the builder holds the block: appending a row
    /// then touches no reference count.
    private(set) var cells: RowBlock.Cells?
    /// Text and blob values in the first row of the last block: room for as many per row is made at once.
    private var sideValuesPerRow = 0
    /// Rows the block has room for.
    private(set) var blockRows = 0
    private(set) var rowCount = 0
    /// Whether a full block was handed out: more rows likely follow, so the next block starts full size.
    private var sealedFullBlock = false
    /// The table's columns kept in Core Data's external binary storage form, readied as each row arrives
    /// (values in the row decoded, files left to be read when asked for).
    private let external: ExternalBinaryStorage.TableColumns?

    /// `expectedRows`, when known (a read by keys), sizes the first block exactly; otherwise it starts
    /// small and grows by doubling, so a short fetch does not reserve a full block.
    init(width: Int, expectedRows: Int? = nil, external: ExternalBinaryStorage.TableColumns? = nil) {
        self.width = width
        self.external = external
        rowsPerBlock = max(1, Self.valuesPerBlock / max(1, width))
        firstBlockRows = max(1, min(rowsPerBlock, expectedRows ?? 16))
    }

    var isFull: Bool { rowCount == rowsPerBlock }

    /// Appends the current row of a stepped statement, decoded in place.
    @inline(__always)
    mutating func appendRow(of statement: SQLiteStatement) {
        if rowCount == blockRows { makeRoom() }
        let cells = self.cells.unsafelyUnwrapped
        let start = rowCount * width
        for column in 0..<width {
            cells.decode(column: Int32(column), of: statement, into: start + column)
        }
        cells.header.pointee.count = start + width
        rowCount += 1
        if rowCount == 1 {
            sideValuesPerRow = cells.header.pointee.sideCount
            reserveSideValues(rows: blockRows)
        }
        #if DEBUG
        InvariantCheck.verify("RowBlockBuilder", after: "appendRow", invariantViolations(fromCell: start))
        #endif
    }

    /// Makes room for the text and blob values of `rows` rows like the first, so the side list grows once.
    private func reserveSideValues(rows: Int) {
        guard sideValuesPerRow > 0, let cells else { return }
        cells.header.pointee.reserveSide(sideValuesPerRow * rows)
    }

    /// Room for one more row: the first block, or the current one moved into one twice its size.
    private mutating func makeRoom() {
        let rows = block == nil ? (sealedFullBlock ? rowsPerBlock : firstBlockRows) : min(rowsPerBlock, max(1, rowCount * 2))
        let grown = RowBlock.make(width: width, capacity: rows * width)
        block?.moveValues(into: grown)
        // A ManagedBuffer's header and elements stay where they are for the object's lifetime, and the
        // builder holds the block until it hands it out.
        cells = grown.withCells { $0 }
        block = grown
        blockRows = rows
        if rowCount > 0 { reserveSideValues(rows: rows) }
    }

    /// Hands the collected rows to `body` in order, as rows of one new block, and starts the next block.
    mutating func sealBlock(_ body: (consuming RowValues) throws -> Void) rethrows {
        guard rowCount > 0, let sealed = block else { return }
        #if DEBUG
        InvariantCheck.verify("RowBlockBuilder", after: "sealBlock", invariantViolations())
        #endif
        let count = rowCount
        // After a full block more rows likely follow: the next block gets room for a whole block at once.
        sealedFullBlock = count == rowsPerBlock
        block = nil
        cells = nil
        blockRows = 0
        rowCount = 0
        // Each row holds the block: the references are added at once (one atomic increment, not one a row).
        var references = SharedReferences(to: sealed)
        defer { references.finish() }
        var start = 0
        for row in 0..<count {
            try body(RowValues(block: references.take(expecting: count - row), start: start))
            start += width
        }
    }

    /// Appends the current row and, when that fills the block, hands the block's rows to `body`.
    ///
    /// - Throws: what `body` throws; ``StoreError/unreadableExternalData(path:entity:key:primaryKey:reason:)``
    ///   when a column kept in external binary storage form cannot be read.
    @inline(__always)
    mutating func appendRow(of statement: SQLiteStatement, sealingFullBlockInto body: (consuming RowValues) throws -> Void) throws {
        appendRow(of: statement)
        if let external {
            try external.deferRow(cells.unsafelyUnwrapped, start: (rowCount - 1) * width)
        }
        if isFull { try sealBlock(body) }
    }
}

extension RowBlock.Cells {
    /// Decodes a column of the current row into an empty cell. Through `sqlite3_column_value` the type and
    /// the value are read from the value itself, one locked call per column instead of two; text is decoded
    /// from its known length (no `strlen`).
    @inline(__always)
    func decode(column: Int32, of statement: SQLiteStatement, into index: Int) {
        guard let value = sqlite3_column_value(statement, column) else { return setNull(index) }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: setInteger(index, sqlite3_value_int64(value))
        case SQLITE_FLOAT: setReal(index, sqlite3_value_double(value))
        case SQLITE_TEXT:
            // The pointer first, then its length, as SQLite asks.
            // The buffer is SQLite's, valid until the statement steps again; the String copies it at once.
            let text = sqlite3_value_text(value).map {
                String(decoding: UnsafeBufferPointer(start: $0, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
            } ?? ""
            appendSide(index, text.storeValue)
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(value).map { Data(bytes: $0, count: Int(sqlite3_value_bytes(value))) } ?? Data()
            appendSide(index, bytes.storeValue)
        default: setNull(index)
        }
    }
}
