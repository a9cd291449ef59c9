import GRDB
import Testing
@testable import OpenCoreData

/// The row list against a sorted array of (key, handle, entity), through random inserts and removals
/// that start with one entity for every row and bring in a second one part way.
@Suite struct RowListTests {
    private struct Entry: Equatable {
        var key: Int64
        var handle: Int64
        var entity: Int32
    }

    private static func less<Left: RandomAccessCollection<StoreValue>, Right: RandomAccessCollection<StoreValue>>(
        _ lhs: Left, _ lhsHandle: Int64, _ rhs: Right, _ rhsHandle: Int64) -> Bool {
        let a = Int64.fromStoreValue(lhs[lhs.startIndex]) ?? 0, b = Int64.fromStoreValue(rhs[rhs.startIndex]) ?? 0
        return a != b ? a < b : lhsHandle < rhsHandle
    }

    private func contents(_ list: RowList) -> [Entry] {
        var entries: [Entry] = []
        list.forEach { handle, entity, keys in
            entries.append(Entry(key: Int64.fromStoreValue(keys[keys.startIndex]) ?? 0, handle: handle, entity: entity))
        }
        return entries
    }

    @Test func agreesWithASortedArray() throws {
        var generator = SeededGenerator(seed: 5)
        var reference = (1...1_500).map { Entry(key: Int64.random(in: 0..<300, using: &generator), handle: Int64($0), entity: 7) }
        reference.sort { $0.key != $1.key ? $0.key < $1.key : $0.handle < $1.handle }
        var list = RowList(keyCount: 1, sortedHandles: reference.map(\.handle), entities: reference.map(\.entity),
                           keys: [.integers(reference.map(\.key))])
        var nextHandle: Int64 = 1_501
        for step in 0..<3_000 {
            if Bool.random(using: &generator), let victim = reference.randomElement(using: &generator) {
                let removed = list.remove(victim.handle)
                #expect(removed)
                reference.removeAll { $0.handle == victim.handle }
            } else {
                // Past the middle, some rows are of another entity; some handles are unsaved objects'.
                let entity: Int32 = step > 1_500 && step % 3 == 0 ? 9 : 7
                let handle = step % 5 == 0 ? -nextHandle : nextHandle
                nextHandle += 1
                let entry = Entry(key: Int64.random(in: 0..<300, using: &generator), handle: handle, entity: entity)
                let position = try list.insert(handle: handle, entity: entity, keys: [entry.key.storeValue], less: Self.less)
                let expected = reference.firstIndex { !Self.less([$0.key.storeValue], $0.handle, [entry.key.storeValue], handle) }
                    ?? reference.count
                #expect(position == expected)
                reference.insert(entry, at: expected)
            }
            if step % 250 == 0 { #expect(contents(list) == reference) }
        }
        #expect(contents(list) == reference)
        #expect(list.count == reference.count)
        for entry in reference.shuffled(using: &generator).prefix(100) {
            let found = try #require(list.find(entry.handle))
            #expect(found.entity == entry.entity)
            #expect(reference[found.position] == entry)
        }
    }

    /// Rows by position and by range, over chunks made uneven by splits and removals, against the array.
    @Test func rowsByPositionAndRange() throws {
        var generator = SeededGenerator(seed: 21)
        var reference = (1...1_000).map { Entry(key: Int64($0), handle: Int64($0), entity: 7) }
        var list = RowList(keyCount: 1, sortedHandles: reference.map(\.handle), entities: reference.map(\.entity),
                           keys: [.integers(reference.map(\.key))])
        var nextHandle: Int64 = 1_001
        for step in 0..<1_500 {
            if step % 3 == 0, let victim = reference.randomElement(using: &generator) {
                list.remove(victim.handle)
                reference.removeAll { $0.handle == victim.handle }
            } else {
                let entry = Entry(key: Int64.random(in: 0..<300, using: &generator), handle: nextHandle, entity: step % 4 == 0 ? 9 : 7)
                nextHandle += 1
                try list.insert(handle: entry.handle, entity: entry.entity, keys: [entry.key.storeValue], less: Self.less)
                let at = reference.firstIndex { !Self.less([$0.key.storeValue], $0.handle, [entry.key.storeValue], entry.handle) }
                    ?? reference.count
                reference.insert(entry, at: at)
            }
        }
        let rows = reference.map { Row(handle: $0.handle, entity: $0.entity) }
        for position in rows.indices {
            let row = try #require(list.row(at: position))
            #expect(Row(handle: row.handle, entity: row.entity) == rows[position])
        }
        #expect(list.row(at: -1) == nil)
        #expect(list.row(at: rows.count) == nil)
        // Ranges at, across and beyond chunk boundaries and the list's ends.
        var boundaries = [0]
        for chunk in list.chunks { boundaries.append((boundaries.last ?? 0) + chunk.count) }
        var ranges: [Range<Int>] = [0..<0, 0..<1, 0..<rows.count, -5..<3, -5..<(-1), rows.count - 2..<rows.count + 5,
                                    rows.count..<rows.count + 3, rows.count + 10..<rows.count + 20]
        for boundary in boundaries {
            ranges += [boundary - 1..<boundary + 1, boundary..<boundary + 20, max(0, boundary - 20)..<boundary]
        }
        ranges.append(boundaries[1] - 3..<boundaries[3] + 3)
        for range in ranges {
            var visited: [Row] = []
            list.forEachRow(in: range) { visited.append(Row(handle: $0, entity: $1)) }
            #expect(visited == Array(rows[range.clamped(to: rows.indices)]), "range \(range)")
        }
    }

    private struct Row: Equatable {
        var handle: Int64
        var entity: Int32
    }
}
