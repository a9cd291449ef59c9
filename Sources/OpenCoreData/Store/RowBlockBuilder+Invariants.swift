#if DEBUG
/// What tests (and debug builds after each appended row) check about a builder; not built in release.
extension RowBlockBuilder {
    /// What breaks the builder's invariants, in words: empty when it is sound. The block being filled is
    /// checked from cell `start` on (all of it by default; the appended row after each append).
    ///
    /// - The block and its cells are there together, or neither (then no row is held).
    /// - No more rows than the block has room for, nor more room than a full block.
    /// - The block holds exactly the rows counted, and has room for exactly `blockRows`; its own invariants hold.
    func invariantViolations(fromCell start: Int = 0) -> [String] {
        var problems: [String] = []
        guard let block else {
            if cells != nil { problems.append("cells without a block") }
            if rowCount != 0 || blockRows != 0 { problems.append("\(rowCount) rows of \(blockRows) without a block") }
            return problems
        }
        if cells == nil { problems.append("a block without its cells") }
        if rowCount > blockRows || blockRows > rowsPerBlock {
            problems.append("\(rowCount) rows in room for \(blockRows), of \(rowsPerBlock) a full block")
        }
        if block.count != rowCount * width { problems.append("the block holds \(block.count) values for \(rowCount) rows of \(width)") }
        let capacity = block.withCells { $0.header.pointee.capacity }
        if capacity != blockRows * width { problems.append("the block has room for \(capacity) values, not \(blockRows) rows of \(width)") }
        return problems + block.invariantViolations(fromCell: start)
    }
}
#endif
