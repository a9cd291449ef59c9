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
    private func expectedForm(_ values: [DatabaseValue]) -> Form {
        guard let first = values.first else { return .values }
        if values.allSatisfy({ ExactValue($0) == ExactValue(first) }) { return .same }
        if values.allSatisfy({ if case .int64 = $0.storage { true } else { false } }) { return .integers }
        if values.allSatisfy({ if case .double = $0.storage { true } else { false } }) { return .reals }
        return .values
    }

    /// Value pools: integers only, reals only, a few repeated values, and every storage class mixed
    /// (including 1 and 1.0, which `DatabaseValue ==` equates).
    private static let pools: [[DatabaseValue]] = [
        (0..<40).map { Int64($0).databaseValue },
        (0..<40).map { (Double($0) + 0.5).databaseValue },
        [7.databaseValue, 7.databaseValue, 7.databaseValue, 8.databaseValue],
        [.null, 1.databaseValue, 1.0.databaseValue, "a".databaseValue, "a long string beyond fifteen bytes".databaseValue,
         Data([1, 2]).databaseValue, 2.5.databaseValue],
    ]

    @Test(arguments: 0..<4)
    func keepsEveryValueExactly(pool: Int) {
        var generator = SeededGenerator(seed: UInt64(pool) &+ 41)
        let values = Self.pools[pool]
        var column = KeyColumn.empty
        var reference: [DatabaseValue] = []
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
        #expect(column.compacted(0..<3) == .same(3.databaseValue, count: 3))
        #expect(column.compacted(2..<5) == .integers([3, 4, 4]))
        // 1 and 1.0 are one value to `DatabaseValue ==`, not to a column.
        let mixed = KeyColumn.values([1.databaseValue, 1.0.databaseValue])
        #expect(form(mixed.compacted(0..<2)) == .values)
        var same = KeyColumn.same(1.databaseValue, count: 2)
        same.insert(1.0.databaseValue, at: 1)
        guard case .values(let boxed) = same else {
            Issue.record("1.0 among integers 1 should box the column, got \(same)")
            return
        }
        #expect(boxed.map(\.storage.isReal) == [false, true, false])
        // A long run of one value takes another one in its middle.
        var run = KeyColumn.same("CA".databaseValue, count: 200)
        run.insert("NY".databaseValue, at: 150)
        #expect(run.count == 201)
        #expect(run[150] == "NY".databaseValue)
        #expect(run[149] == "CA".databaseValue && run[151] == "CA".databaseValue)
        #expect(form(run) == .values)
        var numbers = KeyColumn.same(5.databaseValue, count: 200)
        numbers.insert(6.databaseValue, at: 0)
        #expect(numbers == .integers([6] + Array(repeating: 5, count: 200)))
        numbers.remove(at: 0)
        #expect(form(numbers.compacted(0..<numbers.count)) == .same)
    }

    @Test func builderWidensOnceAnotherStorageClassArrives() {
        var integers = KeyColumnBuilder()
        for value in [1, 2, 3] as [Int64] { integers.append(value.databaseValue) }
        #expect(integers.column == .integers([1, 2, 3]))
        var reals = KeyColumnBuilder()
        for value in [1.5, 2.5] { reals.append(value.databaseValue) }
        #expect(reals.column == .reals([1.5, 2.5]))
        var nilFirst = KeyColumnBuilder()
        nilFirst.append(.null)
        nilFirst.append(2.databaseValue)
        #expect(nilFirst.column == .values([.null, 2.databaseValue]))
        var widened = KeyColumnBuilder()
        for value: DatabaseValue in [1.databaseValue, 2.databaseValue, .null, "x".databaseValue] { widened.append(value) }
        guard case .values(let values) = widened.column else {
            Issue.record("a null after integers should box the column, got \(widened.column)")
            return
        }
        #expect(values.map(ExactValue.init) == [1.databaseValue, 2.databaseValue, .null, "x".databaseValue].map(ExactValue.init))
    }
}

extension DatabaseValue.Storage {
    fileprivate var isReal: Bool { if case .double = self { true } else { false } }
}
