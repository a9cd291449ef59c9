/// A Fenwick (binary indexed) tree over counts: prefix sums and "which slot holds position p" in
/// O(log n), single-count updates in O(log n). The results controller keeps one over its row chunks and
/// one over its sections, so index paths are found without walking every row.
///
/// While every slot but the last holds the same count (and the last no more), as a fetch leaves the row
/// chunks until the first change, `locate` divides instead of searching.
struct CountedIndex {
    private var tree: [Int]
    private(set) var counts: [Int]
    /// The count of every slot but the last while they are uniform (see above); 0 otherwise.
    private var uniformCount = 0

    init(_ counts: [Int] = []) {
        self.counts = counts
        tree = []
        rebuild()
    }

    var slotCount: Int { counts.count }

    /// Rebuilds the tree from `counts` in O(n) (after slots are inserted or removed).
    mutating func rebuild() {
        tree = [0] + counts
        var index = 1
        while index < tree.count {
            let parent = index + (index & -index)
            if parent < tree.count { tree[parent] += tree[index] }
            index += 1
        }
        uniformCount = Self.uniformCount(of: counts)
    }

    private static func uniformCount(of counts: [Int]) -> Int {
        guard let first = counts.first, first > 0, let last = counts.last, last <= first else { return 0 }
        return counts.dropLast().allSatisfy { $0 == first } ? first : 0
    }

    /// Replaces the counts wholesale.
    mutating func reset(_ newCounts: [Int]) {
        counts = newCounts
        rebuild()
    }

    /// Inserts a slot (O(n): rebuilds).
    mutating func insertSlot(_ count: Int, at slot: Int) {
        counts.insert(count, at: slot)
        rebuild()
    }

    /// Removes slots (O(n): rebuilds once).
    mutating func removeSlots(_ slots: [Int]) {
        for slot in slots.sorted(by: >) { counts.remove(at: slot) }
        rebuild()
    }

    /// Adds `delta` to one slot's count.
    mutating func add(_ delta: Int, at slot: Int) {
        counts[slot] += delta
        uniformCount = 0
        var index = slot + 1
        while index < tree.count {
            tree[index] += delta
            index += index & -index
        }
    }

    /// The sum of the counts of slots `0..<slot`.
    func prefix(_ slot: Int) -> Int {
        var sum = 0
        var index = slot
        while index > 0 {
            sum += tree[index]
            index -= index & -index
        }
        return sum
    }

    /// The slot holding position `position` (0-based over the concatenated counts) and the offset in it;
    /// nil when past the end.
    func locate(_ position: Int) -> (slot: Int, offset: Int)? {
        guard position >= 0 else { return nil }
        if uniformCount > 0 {
            let (slot, offset) = position.quotientAndRemainder(dividingBy: uniformCount)
            return slot < counts.count && offset < counts[slot] ? (slot, offset) : nil
        }
        var index = 0
        var remaining = position
        // The largest power of two below tree.count (at least 1), without a loop.
        var step = 1 << (Int.bitWidth - 1 - ((tree.count - 1) | 1).leadingZeroBitCount)
        while step > 0 {
            let next = index + step
            if next < tree.count && tree[next] <= remaining {
                index = next
                remaining -= tree[next]
            }
            step /= 2
        }
        // `index` slots are wholly before the position; skip empty slots to the one holding it.
        var slot = index
        while slot < counts.count && counts[slot] == 0 { slot += 1 }
        guard slot < counts.count, remaining < counts[slot] else { return nil }
        return (slot, remaining)
    }
}
