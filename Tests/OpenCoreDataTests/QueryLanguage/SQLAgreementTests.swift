import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// SQL compilation and in-memory evaluation must select exactly the same objects.
@Suite struct SQLAgreementTests {
    @Test(arguments: Array(1...4) as [UInt64])
    func randomPredicatesAgree(seed: UInt64) throws {
        try agree(seed: seed, extendedOnly: false)
    }

    /// The same, with only index operators (on the ordered `notes` too, past the end, on empty collections),
    /// TERNARY, functions and union operators at the leaves.
    @Test(arguments: Array(5...8) as [UInt64])
    func indexesTernariesFunctionsAndUnionsAgree(seed: UInt64) throws {
        try agree(seed: seed, extendedOnly: true)
    }

    /// Numbers compared with strings (mostly), so that both sides read a string that spells a number the same way.
    @Test(arguments: Array(9...12) as [UInt64])
    func numbersComparedWithStringsAgree(seed: UInt64) throws {
        try agree(seed: seed, extendedOnly: false, mixedKindsOnly: true)
    }

    func agree(seed: UInt64, extendedOnly: Bool, mixedKindsOnly: Bool = false) throws {
        let fixture = try AgreementFixture(seed: seed)
        var generator = PredicateGenerator(random: SeededGenerator(seed: seed &* 7919))
        var failures = 0
        var discriminating = 0
        defer {
            // Most predicates should split the rows, or agreement on "nothing" and "everything" proves little.
            #expect(discriminating > 150, "only \(discriminating) of 400 predicates selected some but not all rows")
        }
        for _ in 0..<400 {
            let (format, arguments) = generator.predicate(extendedOnly: extendedOnly, mixedKindsOnly: mixedKindsOnly)
            let predicate = try QueryPredicate(format: format, argumentArray: arguments)
            #expect(try QueryPredicate(format: predicate.predicateFormat) == predicate, "round trip of \(format)")
            let memory = try fixture.memoryKeys(predicate)
            let sql: [Int64]
            do {
                sql = try fixture.sqlKeys(predicate)
            } catch {
                Issue.record("SQL failed for \(format): \(error)")
                failures += 1
                if failures > 10 { return }
                continue
            }
            #expect(sql.count == Set(sql).count, "duplicate rows for \(format)")
            if !memory.isEmpty && memory.count < fixture.people.count { discriminating += 1 }
            if Set(sql) != memory {
                failures += 1
                Issue.record("""
                    disagreement for \(format) \(arguments)
                    SQL only: \(Set(sql).subtracting(memory).sorted().prefix(3).map { "\($0): \(fixture.people[$0]?.description ?? "")" })
                    memory only: \(memory.subtracting(sql).sorted().prefix(3).map { "\($0): \(fixture.people[$0]?.description ?? "")" })
                    """)
                if failures > 10 { return }
            }
        }
    }

    @Test(arguments: [4, 5] as [UInt64])
    func sortOrdersAgree(seed: UInt64) throws {
        let fixture = try AgreementFixture(seed: seed)
        for key in ["name", "nickname", "age", "height", "born", "address.city", "flag", "balance", "id", "books.@count", "address.zip", "books.@sum.pages"] {
            for comparator in StringComparison.allCases {
                for ascending in [true, false] {
                    let descriptor = QuerySortDescriptor(key: key, ascending: ascending, comparator: comparator)
                    let keys = try fixture.sqlKeys(.truePredicate, sort: [descriptor])
                    #expect(keys.count == fixture.people.count)
                    for (a, b) in zip(keys, keys.dropFirst()) {
                        let order = try descriptor.compare(fixture.people[a], fixture.people[b])
                        #expect(order != .orderedDescending,
                                "\(key) \(comparator) \(ascending): \(String(describing: try? fixture.people[a]?.value(forKeyPath: key))) before \(String(describing: try? fixture.people[b]?.value(forKeyPath: key)))")
                    }
                }
            }
        }
    }
}
