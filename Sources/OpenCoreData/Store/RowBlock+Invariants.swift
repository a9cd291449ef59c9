#if DEBUG
/// What tests (and debug builds after each write) check about a row block; not built in release.
extension RowBlock {
    /// What breaks the block's invariants, in words: empty when it is sound. Cells are checked from `start`
    /// on (all of them by default: O(values in the block)).
    ///
    /// - `count` is within `capacity`; `sideCount` within `sideCapacity`; the side list is allocated exactly
    ///   when it has room.
    /// - Every initialized cell has a known kind; a side cell refers to a side value that exists, and no other
    ///   checked cell refers to the same one (a cell's side value is written in place).
    func invariantViolations(fromCell start: Int = 0) -> [String] {
        withCells { cells in
            let header = cells.header.pointee
            var problems: [String] = []
            if header.count < 0 || header.count > header.capacity {
                problems.append("count \(header.count) is outside capacity \(header.capacity)")
            }
            if header.sideCount < 0 || header.sideCount > header.sideCapacity {
                problems.append("sideCount \(header.sideCount) is outside sideCapacity \(header.sideCapacity)")
            }
            if (header.side == nil) != (header.sideCapacity == 0) {
                problems.append("side list \(header.side == nil ? "missing" : "allocated") with sideCapacity \(header.sideCapacity)")
            }
            var referredBy: [Int: Int] = [:]
            for index in max(0, start)..<max(max(0, start), min(header.count, header.capacity)) {
                switch cells.kinds[index] {
                case RowCellKind.null.rawValue, RowCellKind.integer.rawValue, RowCellKind.real.rawValue:
                    continue
                case RowCellKind.side.rawValue, RowCellKind.external.rawValue:
                    if cells.kinds[index] == RowCellKind.external.rawValue, header.external == nil {
                        problems.append("cell \(index) defers an external value in a block with no external columns")
                    }
                    let side = Int(truncatingIfNeeded: cells.bits[index])
                    if side < 0 || side >= header.sideCount {
                        problems.append("cell \(index) refers to side value \(side) of \(header.sideCount)")
                    } else if let other = referredBy.updateValue(index, forKey: side) {
                        problems.append("cells \(other) and \(index) share side value \(side)")
                    }
                default:
                    problems.append("cell \(index) has unknown kind \(cells.kinds[index])")
                }
            }
            return problems
        }
    }

    /// Makes cell `index` refer to a side value past the end of the list: only for tests that show a broken
    /// block is reported.
    func breakSideReferenceForTesting(at index: Int) {
        withCells { cells in
            cells.bits[index] = UInt64(cells.header.pointee.sideCount + 1)
            cells.kinds[index] = RowCellKind.side.rawValue
        }
    }
}
#endif
