import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// The case mapping tables are what `[c]`, `uppercase:` and `lowercase:` mean on a store that cannot call
/// Swift: each must map every string exactly as Swift and Foundation do, scalar by scalar.
struct CaseMappingTableTests {
    static func mapByTable(_ table: CaseMappingTable, _ text: String) -> String {
        var single: [Unicode.Scalar: Unicode.Scalar] = [:]
        for (from, to) in table.singles { single[from] = to }
        var expanded: [Unicode.Scalar: String] = [:]
        for (from, to) in table.expansions { expanded[from] = to }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let to = single[scalar] { result.append(to) }
            else if let to = expanded[scalar] { result.append(contentsOf: to.unicodeScalars) }
            else { result.append(scalar) }
        }
        return String(result)
    }

    static let kinds = CaseMappingTable.Kind.allCases

    static func table(_ kind: CaseMappingTable.Kind) -> CaseMappingTable {
        switch kind {
        case .caseFolding: CaseMappingTable.caseFolding
        case .uppercase: CaseMappingTable.uppercase
        case .lowercase: CaseMappingTable.lowercase
        case .sortFolding: CaseMappingTable.sortFolding
        }
    }

    @Test func knownMappings() {
        let fold = CaseMappingTable.caseFolding, upper = CaseMappingTable.uppercase, lower = CaseMappingTable.lowercase
        #expect(Self.mapByTable(fold, "straße") == "strasse")
        #expect(Self.mapByTable(fold, "ǰ").unicodeScalars.map(\.value) == [0x6A, 0x30C])
        #expect(Self.mapByTable(fold, "Émile") == "émile")
        #expect(Self.mapByTable(upper, "straße") == "STRASSE")
        #expect(Self.mapByTable(upper, "ﬁle") == "FILE")
        #expect(Self.mapByTable(lower, "İ").unicodeScalars.map(\.value) == [0x69, 0x307])
        #expect(Self.mapByTable(lower, "ΣΑΣ") == "σασ")
        for table in CaseMappingTable.all {
            #expect(table.functionName.hasPrefix(table.kind.rawValue) && table.functionName.hasSuffix(table.digest))
            #expect(table.digest.count == 16)
            #expect(table.composesSafely || table.composesReplacingFirst, "\(table.kind)")
        }
        #expect(Set(CaseMappingTable.all.map(\.functionName)).count == CaseMappingTable.Kind.allCases.count)
    }

    /// Every scalar of the blocks that hold cased letters in the Basic Multilingual Plane (Latin, Greek,
    /// Cyrillic, Armenian, Georgian, Cherokee, letterlike and enclosed forms, Glagolitic, Coptic, ligatures,
    /// full-width forms) maps alone as the table says. A table is built only from scalars Unicode marks as
    /// changing under case mapping or folding; this checks that filter where it matters, in a few seconds.
    @Test(arguments: kinds)
    func casedBlocksMapAsSwift(kind: CaseMappingTable.Kind) {
        let table = Self.table(kind)
        let blocks: [ClosedRange<UInt32>] = [0...0x24FF, 0x2C00...0x2DFF, 0xA640...0xA7FF, 0xAB30...0xABBF,
                                             0xFB00...0xFB4F, 0xFF00...0xFFEF]
        var wrong: [String] = []
        for value in blocks.joined() {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(scalar)
            if kind.map(text) != Self.mapByTable(table, text), wrong.count < 10 { wrong.append(String(value, radix: 16)) }
        }
        #expect(wrong.isEmpty, "scalars mapped differently: \(wrong)")
    }

    /// Strings mixing a table's scalars with combining marks, sigmas and plain letters map as Swift maps
    /// them: the mapping is per scalar, which is what lets SQL do it.
    @Test(arguments: kinds)
    func mixedStringsMapAsSwift(kind: CaseMappingTable.Kind) {
        let table = Self.table(kind)
        var random = SeededGenerator(seed: 7)
        var pool: [Unicode.Scalar] = table.singles.map(\.from) + table.expansions.map(\.from)
        pool += Array("aZ09 ß\u{301}\u{308}\u{345}İıſΣσς".unicodeScalars)
        var wrong: [String] = []
        for _ in 0..<5_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...8, using: &random) { scalars.append(pool[Int.random(in: 0..<pool.count, using: &random)]) }
            let text = String(scalars)
            if kind.map(text) != Self.mapByTable(table, text), wrong.count < 5 {
                wrong.append(text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
            }
        }
        #expect(wrong.isEmpty, "strings mapped differently: \(wrong)")
    }
}
