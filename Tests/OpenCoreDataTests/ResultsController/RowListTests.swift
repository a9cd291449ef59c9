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

    private static func less<Left: RandomAccessCollection<DatabaseValue>, Right: RandomAccessCollection<DatabaseValue>>(
        _ lhs: Left, _ lhsHandle: Int64, _ rhs: Right, _ rhsHandle: Int64) -> Bool {
        let a = Int64.fromDatabaseValue(lhs[lhs.startIndex]) ?? 0, b = Int64.fromDatabaseValue(rhs[rhs.startIndex]) ?? 0
        return a != b ? a < b : lhsHandle < rhsHandle
    }

    private func contents(_ list: RowList) -> [Entry] {
        var entries: [Entry] = []
        list.forEach { handle, entity, keys in
            entries.append(Entry(key: Int64.fromDatabaseValue(keys[keys.startIndex]) ?? 0, handle: handle, entity: entity))
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
                let position = try list.insert(handle: handle, entity: entity, keys: [entry.key.databaseValue], less: Self.less)
                let expected = reference.firstIndex { !Self.less([$0.key.databaseValue], $0.handle, [entry.key.databaseValue], handle) }
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
}
