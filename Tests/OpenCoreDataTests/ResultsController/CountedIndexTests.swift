import Testing
@testable import OpenCoreData

/// The counted index against a linear walk over its counts.
@Suite struct CountedIndexTests {
    /// Slot counts around powers of two (where the search's first step changes), empty slots mixed in.
    @Test(arguments: [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100])
    func locateAndPrefixAgreeWithALinearWalk(slotCount: Int) {
        var generator = SeededGenerator(seed: UInt64(slotCount) + 11)
        let counts = (0..<slotCount).map { _ in Int.random(in: 0...3, using: &generator) }
        let index = CountedIndex(counts)
        var expected: [(slot: Int, offset: Int)] = []
        for (slot, count) in counts.enumerated() {
            for offset in 0..<count { expected.append((slot, offset)) }
        }
        for position in -2...(expected.count + 2) {
            let found = index.locate(position)
            if expected.indices.contains(position) {
                #expect(found?.slot == expected[position].slot && found?.offset == expected[position].offset)
            } else {
                #expect(found == nil)
            }
        }
        for slot in 0...slotCount {
            #expect(index.prefix(slot) == counts.prefix(slot).reduce(0, +))
        }
    }
}
