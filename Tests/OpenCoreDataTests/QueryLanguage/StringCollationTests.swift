import Foundation
import Testing
@testable import OpenCoreData

/// The comparison selectors order strings as Foundation's string comparisons do, and the same in SQL
/// (the store's collations) as in memory.
@Suite struct StringCollationTests {
    /// Cased, accented, Greek and Cyrillic letters, "ß", digits, spaces and punctuation.
    static let alphabet = Array("abezABEZéÉëäßωΩжЖ0129 -.")
    /// Without the precomposed accented letters.
    static let plainAndNonLatin = Array("abezABEZßωΩжЖ0129 -.")
    /// Without the Greek and Cyrillic ones.
    static let accentedLatin = Array("abezABEZéÉëä0129 -.")
    /// Accented "e"s without the plain one.
    static let accentedWithoutPlain = Array("abzABZéÉëßωΩжЖ0129 -.")

    /// The alphabets each comparison is checked on. The corners left out are in the DocC article PortingFromCoreData.md:
    /// `compare:` is SQLite's scalar order (Foundation's decomposes), Foundation's non-localized
    /// `caseInsensitiveCompare:` has an order of its own for a letter against the same letter accented,
    /// and its case-insensitive localized ones for an accented letter followed by a Greek or Cyrillic one.
    static func alphabets(_ comparison: StringComparison) -> [[Character]] {
        switch comparison {
        case .compare: return [plainAndNonLatin]
        case .caseInsensitiveCompare: return [plainAndNonLatin, accentedWithoutPlain]
        case .localizedCompare: return [alphabet]
        case .localizedCaseInsensitiveCompare, .localizedStandardCompare: return [accentedLatin, plainAndNonLatin]
        }
    }

    static func foundationOrder(_ a: String, _ b: String, _ comparison: StringComparison) -> ComparisonResult {
        switch comparison {
        case .compare: return a.compare(b)
        case .caseInsensitiveCompare: return a.caseInsensitiveCompare(b)
        case .localizedCompare: return a.localizedCompare(b)
        case .localizedCaseInsensitiveCompare: return a.localizedCaseInsensitiveCompare(b)
        case .localizedStandardCompare: return a.localizedStandardCompare(b)
        }
    }

    static func randomString(_ alphabet: [Character], _ random: inout SeededGenerator) -> String {
        String((0..<Int.random(in: 0...5, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
    }

    @Test func foundationsExamplesHold() {
        func order(_ a: String, _ b: String, _ comparison: StringComparison) -> ComparisonResult {
            QuerySortOrder.compareStrings(a, b, comparison)
        }
        #expect(order("Émile", "Zebra", .caseInsensitiveCompare) == .orderedAscending)
        #expect(StringCollation.caseInsensitive("straße", "STRASSE") == .orderedSame)
        #expect(order("Zoë", "zoe", .caseInsensitiveCompare) == .orderedDescending)
        #expect(order("Ωmega", "Zeta", .caseInsensitiveCompare) == .orderedDescending)
        for comparison in [StringComparison.localizedCompare, .localizedCaseInsensitiveCompare, .localizedStandardCompare] {
            #expect(order("Émile", "Zebra", comparison) == .orderedAscending, "\(comparison)")
            #expect(order("Émile", "Emilf", comparison) == .orderedAscending, "\(comparison)")
            #expect(order("Zoë", "zoe", comparison) == .orderedDescending, "\(comparison)")
            #expect(order("Ωmega", "Zeta", comparison) == .orderedDescending, "\(comparison)")
        }
        #expect(order("file2", "file10", .localizedStandardCompare) == .orderedAscending)
        #expect(order("file2", "file10", .localizedCompare) == .orderedDescending)
        #expect(order("a", "A", .localizedCompare) == .orderedAscending)
    }

    /// Ours agrees with Foundation on the sign wherever Foundation says ascending or descending.
    @Test(arguments: StringComparison.allCases)
    func agreesWithFoundationOnRandomStrings(comparison: StringComparison) {
        var random = SeededGenerator(seed: 0xC011A7E + UInt64(comparison.rawValue.count))
        for alphabet in Self.alphabets(comparison) {
            var decided = 0, disagreements = 0
            for _ in 0..<4000 {
                let a = Self.randomString(alphabet, &random), b = Self.randomString(alphabet, &random)
                let expected = Self.foundationOrder(a, b, comparison)
                guard expected != .orderedSame else { continue }
                decided += 1
                let ours = QuerySortOrder.compareStrings(a, b, comparison)
                if ours != expected {
                    disagreements += 1
                    if disagreements <= 10 { Issue.record("\(comparison.selector) \"\(a)\" vs \"\(b)\": Foundation \(expected.rawValue), ours \(ours.rawValue)") }
                }
            }
            #expect(disagreements == 0, "\(comparison.selector) on \(String(alphabet))")
            #expect(decided > 3000, "only \(decided) pairs were ordered by Foundation")
        }
    }

    /// A fetch sorted in SQL (the store's collation) returns the order the in-memory comparison gives.
    @Test(arguments: StringComparison.allCases)
    func sqlAndMemoryOrderAgree(comparison: StringComparison) throws {
        let stack = try TestStack(model: TestModels.banks())
        let context = stack.context()
        var random = SeededGenerator(seed: 77)
        var names: [String] = []
        for index in 0..<400 {
            let bank = try context.insertNewObject(forEntityName: "FailedBankInfo")
            let name = Self.randomString(Self.alphabet, &random)
            names.append(name)
            try bank.setValue(name, forKey: "name")
            try bank.setValue("\(index)", forKey: "city")
        }
        try context.save()

        let descriptor = QuerySortDescriptor(key: "name", comparator: comparison)
        let request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo")
        request.sortDescriptors = [descriptor]
        let sql = try stack.context().fetch(request).map { try $0.value(forKey: "name") as? String ?? "" }
        let memory = names.sorted { QuerySortOrder.compareStrings($0, $1, comparison) == .orderedAscending }
        #expect(sql == memory)
        // The order is a real one: the values are not all alike and not already sorted.
        #expect(Set(names).count > 250)
        #expect(memory != names)
    }

    @Test func selectorsNameTheComparisons() throws {
        for comparison in StringComparison.allCases {
            let descriptor = try QuerySortDescriptor(key: "name", ascending: false, selector: comparison.selector)
            #expect(descriptor.comparator == comparison)
            #expect(descriptor.ascending == false)
        }
        #expect(StringComparison.localizedCaseInsensitiveCompare.selector == "localizedCaseInsensitiveCompare:")
        do {
            _ = try QuerySortDescriptor(key: "name", selector: "compareByMood:")
            Issue.record("an unknown selector was accepted")
        } catch let error as QueryLanguageError {
            #expect(error.message.contains("compareByMood:"))
            #expect(error.message.contains("name"))
        }
        #expect(throws: QueryLanguageError.self) { try QuerySortDescriptor(key: "name", selector: "localizedCompare") }
    }
}
