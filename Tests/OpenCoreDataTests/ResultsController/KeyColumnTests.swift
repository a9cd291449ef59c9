import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Key columns against a plain array of stored values: every value comes back exactly (storage class
/// included) through inserts, removals and splits, and the column keeps the compact form its values allow.
@Suite struct KeyColumnTests {
    private func exact(_ column: KeyColumn) -> [ExactValue] { (0..<column.count).map { ExactValue(column[$0]) } }

    private enum Form { case same, integers, reals, values }
    private func form(_ column: KeyColumn) -> Form {
        switch column {
        case .same: .same
        case .integers: .integers
        case .reals: .reals
        case .values: .values
        }
    }

    /// The form a chunk's column should have for these values.
    private func expectedForm(_ values: [StoreValue]) -> Form {
        guard let first = values.first else { return .values }
        if values.allSatisfy({ ExactValue($0) == ExactValue(first) }) { return .same }
        if values.allSatisfy({ if case .int64 = $0.storage { true } else { false } }) { return .integers }
        if values.allSatisfy({ if case .double = $0.storage { true } else { false } }) { return .reals }
        return .values
    }

    /// Value pools: integers only, reals only, a few repeated values, and every storage class mixed
    /// (including 1 and 1.0, which `StoreValue ==` equates).
    private static let pools: [[StoreValue]] = [
        (0..<40).map { Int64($0).storeValue },
        (0..<40).map { (Double($0) + 0.5).storeValue },
        [7.storeValue, 7.storeValue, 7.storeValue, 8.storeValue],
        [.null, 1.storeValue, 1.0.storeValue, "a".storeValue, "a long string beyond fifteen bytes".storeValue,
         Data([1, 2]).storeValue, 2.5.storeValue],
    ]

    @Test(arguments: 0..<4)
    func keepsEveryValueExactly(pool: Int) {
        var generator = SeededGenerator(seed: UInt64(pool) &+ 41)
        let values = Self.pools[pool]
        var column = KeyColumn.empty
        var reference: [StoreValue] = []
        for step in 0..<2_000 {
            if !reference.isEmpty && (Bool.random(using: &generator) || reference.count > 300) {
                let row = Int.random(in: 0..<reference.count, using: &generator)
                column.remove(at: row)
                reference.remove(at: row)
            } else {
                let value = values.randomElement(using: &generator) ?? .null
                let row = Int.random(in: 0...reference.count, using: &generator)
                column.insert(value, at: row)
                reference.insert(value, at: row)
            }
            if step % 97 == 0 && reference.count > 2 {
                // Split and rejoin, as a chunk split does.
                let at = Int.random(in: 1..<reference.count, using: &generator)
                var head = column
                let tail = head.split(at: at)
                #expect(exact(head) == reference[..<at].map(ExactValue.init))
                #expect(exact(tail) == reference[at...].map(ExactValue.init))
                #expect(form(tail) == expectedForm(Array(reference[at...])))
            }
            #expect(column.count == reference.count)
        }
        #expect(exact(column) == reference.map(ExactValue.init))
        let compacted = column.compacted(0..<column.count)
        #expect(exact(compacted) == reference.map(ExactValue.init))
        #expect(form(compacted) == expectedForm(reference))
    }

    @Test func compactsRunsAndKeepsStorageClassesApart() {
        let column = KeyColumn.integers([3, 3, 3, 4, 4])
        #expect(column.compacted(0..<3) == .same(3.storeValue, count: 3))
        #expect(column.compacted(2..<5) == .integers([3, 4, 4]))
        // 1 and 1.0 are one value to `StoreValue ==`, not to a column.
        let mixed = KeyColumn.values([1.storeValue, 1.0.storeValue])
        #expect(form(mixed.compacted(0..<2)) == .values)
        var same = KeyColumn.same(1.storeValue, count: 2)
        same.insert(1.0.storeValue, at: 1)
        guard case .values(let boxed) = same else {
            Issue.record("1.0 among integers 1 should box the column, got \(same)")
            return
        }
        #expect(boxed.map(\.storage.isReal) == [false, true, false])
        // A long run of one value takes another one in its middle.
        var run = KeyColumn.same("CA".storeValue, count: 200)
        run.insert("NY".storeValue, at: 150)
        #expect(run.count == 201)
        #expect(run[150] == "NY".storeValue)
        #expect(run[149] == "CA".storeValue && run[151] == "CA".storeValue)
        #expect(form(run) == .values)
        var numbers = KeyColumn.same(5.storeValue, count: 200)
        numbers.insert(6.storeValue, at: 0)
        #expect(numbers == .integers([6] + Array(repeating: 5, count: 200)))
        numbers.remove(at: 0)
        #expect(form(numbers.compacted(0..<numbers.count)) == .same)
    }

    @Test func builderWidensOnceAnotherStorageClassArrives() {
        var integers = KeyColumnBuilder()
        for value in [1, 2, 3] as [Int64] { integers.append(value.storeValue) }
        #expect(integers.column == .integers([1, 2, 3]))
        var reals = KeyColumnBuilder()
        for value in [1.5, 2.5] { reals.append(value.storeValue) }
        #expect(reals.column == .reals([1.5, 2.5]))
        var nilFirst = KeyColumnBuilder()
        nilFirst.append(.null)
        nilFirst.append(2.storeValue)
        #expect(nilFirst.column == .values([.null, 2.storeValue]))
        var widened = KeyColumnBuilder()
        for value: StoreValue in [1.storeValue, 2.storeValue, .null, "x".storeValue] { widened.append(value) }
        guard case .values(let values) = widened.column else {
            Issue.record("a null after integers should box the column, got \(widened.column)")
            return
        }
        #expect(values.map(ExactValue.init) == [1.storeValue, 2.storeValue, .null, "x".storeValue].map(ExactValue.init))
    }
}

extension StoreValue.Storage {
    fileprivate var isReal: Bool { if case .double = self { true } else { false } }
}
