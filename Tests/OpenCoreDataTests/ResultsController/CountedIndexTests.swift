import Testing
@testable import OpenCoreData

/// The counted index against a linear walk over its counts.
@Suite struct CountedIndexTests {
    /// Slot counts around powers of two (where the search's first step changes), empty slots mixed in.
    @Test(arguments: [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100])
    func locateAndPrefixAgreeWithALinearWalk(slotCount: Int) {
        var generator = SeededGenerator(seed: UInt64(slotCount) + 11)
        let counts = (0..<slotCount).map { _ in Int.random(in: 0...3, using: &generator) }
        expectAgreesWithALinearWalk(CountedIndex(counts))
    }

    /// Equal counts with a shorter (or empty) last slot, as a fetch builds row chunks; then edits.
    @Test(arguments: [[5], [5, 5, 5], [5, 5, 2], [5, 5, 0], [1, 1, 1, 1], [3, 3, 3, 3, 3, 3, 3, 3, 1]])
    func uniformCountsThroughEdits(counts: [Int]) {
        var index = CountedIndex(counts)
        expectAgreesWithALinearWalk(index)
        var generator = SeededGenerator(seed: UInt64(counts.count))
        for step in 0..<12 {
            let slot = Int.random(in: 0..<index.slotCount, using: &generator)
            switch step % 4 {
            case 0: index.add(1, at: slot)
            case 1: if index.counts[slot] > 0 { index.add(-1, at: slot) }
            case 2: index.insertSlot(index.counts[0], at: slot)
            default: index.reset(Array(repeating: 2, count: index.slotCount) + [1])
            }
            expectAgreesWithALinearWalk(index)
        }
    }

    private func expectAgreesWithALinearWalk(_ index: CountedIndex, sourceLocation: SourceLocation = #_sourceLocation) {
        let counts = index.counts
        var expected: [(slot: Int, offset: Int)] = []
        for (slot, count) in counts.enumerated() {
            for offset in 0..<count { expected.append((slot, offset)) }
        }
        for position in -2...(expected.count + 2) {
            let found = index.locate(position)
            if expected.indices.contains(position) {
                #expect(found?.slot == expected[position].slot && found?.offset == expected[position].offset,
                        "position \(position) in \(counts)", sourceLocation: sourceLocation)
            } else {
                #expect(found == nil, "position \(position) in \(counts)", sourceLocation: sourceLocation)
            }
        }
        for slot in 0...counts.count {
            #expect(index.prefix(slot) == counts.prefix(slot).reduce(0, +), sourceLocation: sourceLocation)
        }
    }
}
