import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Sorting text by `caseInsensitiveCompare:` on PostgreSQL gives exactly memory's order, ties broken by
/// scalars as memory breaks them, on Unicode text: precomposed and decomposed accents, marks out of canonical
/// order, `ß` and `ẞ`, Turkish and dotless i, final sigma, ligatures, the Kelvin sign, scripts beyond Latin.
/// The localized selectors are sorted in the app.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLStringSortTests {
    static let names: [String] = [
        "Émile", "émile", "E\u{301}mile", "Emile", "EMILE", "emile", "Zoë", "zoe", "ZOE", "Zoe\u{308}", "straße",
        "STRASSE", "strasse", "GROẞ", "groß", "gross", "İstanbul", "istanbul", "ıstanbul", "Istanbul", "ΣΑΣ", "σας",
        "σασ", "ﬁle", "file", "FILE", "file2", "file10", "\u{212A}elvin", "kelvin", "Kelvin", "a\u{301}\u{323}",
        "a\u{323}\u{301}", "ạ́", "á", "a", "A", "", " ", "-", "1", "١", "Ǆemal", "ǅemal", "ǆemal", "ŉ", "ǰ", "j\u{30C}",
        "\u{C5}ngstr\u{F6}m", "A\u{30A}ngstro\u{308}m", "Ωmega", "ωmega", "Zürich", "zurich", "ᏣᎳᎩ", "ꮳꮃꭹ", "😀", "x\u{10FFFF}",
    ]

    @Test func caseInsensitiveCompareOrdersAsMemory() throws {
        let fixture = try AgreementFixture(seed: 2, people: Self.names.count + 1)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            let person = try #require(fixture.model.entitiesByName["Person"])
            try PostgreSQLRegularExpressionTests.setNames(Self.names, fixture, store)
            for ascending in [true, false] {
                let descriptor = QuerySortDescriptor(key: "name", ascending: ascending, comparator: .caseInsensitiveCompare)
                // Scalars, not Strings: Swift calls canonically equivalent strings equal, and their order matters.
                func scalars(_ key: Int64) -> [UInt32] {
                    ((fixture.people[key]?.values["name"] as? String) ?? "<nil>").unicodeScalars.map(\.value)
                }
                let fetched = try store.fetchRows(entity: person, predicate: nil, sortDescriptors: [descriptor])
                    .map { scalars($0.primaryKey) }
                let expected = try fixture.people.sorted { try descriptor.compare($0.value, $1.value) == .orderedAscending }
                    .map { scalars($0.key) }
                // Memory's order is total on these names (no two have the same scalars), so the whole sequence must match.
                #expect(fetched == expected, "ascending \(ascending)")
            }
            // A page is the same slice of that order.
            let descriptor = QuerySortDescriptor(key: "name", comparator: .caseInsensitiveCompare)
            let all = try store.fetchRows(entity: person, predicate: nil, sortDescriptors: [descriptor]).map(\.primaryKey)
            let page = try store.fetchRows(entity: person, predicate: nil, sortDescriptors: [descriptor], limit: 7, offset: 11)
            #expect(page.map(\.primaryKey) == Array(all.dropFirst(11).prefix(7)))
        }
    }

    /// The localized selectors are refused by the compiler and sorted in the app, in memory's order.
    @Test func localizedSelectorsSortAsMemory() throws {
        let fixture = try AgreementFixture(seed: 2, people: Self.names.count + 1)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            let person = try #require(fixture.model.entitiesByName["Person"])
            try PostgreSQLRegularExpressionTests.setNames(Self.names, fixture, store)
            for comparator in [StringComparison.localizedCompare, .localizedCaseInsensitiveCompare, .localizedStandardCompare] {
                let descriptor = QuerySortDescriptor(key: "name", comparator: comparator)
                let refusal = try PostgreSQLAgreementData.refusal(fixture, person, sort: [descriptor])
                #expect(refusal?.construct == .sortComparator)
                let keys = try store.fetchRows(entity: person, predicate: nil, sortDescriptors: [descriptor]).map(\.primaryKey)
                #expect(keys.count == fixture.people.count)
                for (a, b) in zip(keys, keys.dropFirst()) {
                    #expect(try descriptor.compare(fixture.people[a], fixture.people[b]) != .orderedDescending, "\(comparator): \(a) before \(b)")
                }
                let page = try store.fetchRows(entity: person, predicate: nil, sortDescriptors: [descriptor], limit: 7, offset: 11)
                #expect(page.map(\.primaryKey) == Array(keys.dropFirst(11).prefix(7)))
            }
        }
    }
}
