import GRDB
import GRDBSQLite

/// Collects stepped rows into shared ``RowBlock``s: one allocation per block of rows instead of one per
/// row. A block is handed out only once it is complete, so a block that rows refer to is never written.
struct RowBlockBuilder {
    /// Values a full block holds (about 48 KB; 256 rows of eight columns). A block lives as long as any of
    /// its rows is referenced, so a larger one could pin a lot of memory after most of its objects are
    /// gone; this is large enough that the per-block allocation is noise beside the rows' decoding, and
    /// small enough to stay under malloc's mmap threshold (128 KB), which would make each block a syscall.
    static let valuesPerBlock = 2048

    /// Values per row.
    let width: Int
    /// Rows a full block holds.
    let rowsPerBlock: Int
    private var values = ContiguousArray<DatabaseValue>()
    private var rowCount = 0

    /// `expectedRows`, when known (a read by keys), sizes the first block exactly; otherwise it starts
    /// small and grows by doubling, so a short fetch does not reserve a full block.
    init(width: Int, expectedRows: Int? = nil) {
        self.width = width
        rowsPerBlock = max(1, Self.valuesPerBlock / max(1, width))
        values.reserveCapacity(width * min(rowsPerBlock, expectedRows ?? 16))
    }

    var isFull: Bool { rowCount == rowsPerBlock }

    /// Appends the current row of a stepped statement.
    @inline(__always)
    mutating func appendRow(of statement: SQLiteStatement) {
        values.appendRow(of: statement, columnCount: width)
        rowCount += 1
    }

    /// Hands the collected rows to `body` in order, as rows of one new block, and starts the next block.
    mutating func sealBlock(_ body: (RowValues) throws -> Void) rethrows {
        guard rowCount > 0 else { return }
        let block = RowBlock(values: values, width: width)
        let count = rowCount
        values = ContiguousArray()
        // After a full block more rows likely follow: room for a whole block at once, never regrown.
        if count == rowsPerBlock { values.reserveCapacity(width * rowsPerBlock) }
        rowCount = 0
        var start = 0
        for _ in 0..<count {
            try body(RowValues(block: block, start: start))
            start += width
        }
    }

    /// Appends the current row and, when that fills the block, hands the block's rows to `body`.
    @inline(__always)
    mutating func appendRow(of statement: SQLiteStatement, sealingFullBlockInto body: (RowValues) throws -> Void) rethrows {
        appendRow(of: statement)
        if isFull { try sealBlock(body) }
    }
}
