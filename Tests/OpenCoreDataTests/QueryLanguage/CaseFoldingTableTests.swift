import Foundation
import Testing
@testable import OpenCoreData

/// The case folding table is what `[c]` means on a store that cannot call Swift: it must fold every string
/// exactly as Foundation's `folding(options: .caseInsensitive)` does, scalar by scalar.
struct CaseFoldingTableTests {
    static let table = CaseFoldingTable.current

    static func foldByTable(_ text: String) -> String {
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

    @Test func knownFoldings() {
        #expect(Self.foldByTable("STRASSE") == "strasse")
        #expect(Self.foldByTable("straße") == "strasse")
        #expect(Self.foldByTable("ǰ").unicodeScalars.map(\.value) == [0x6A, 0x30C])
        #expect(Self.foldByTable("Ǆ") == "ǆ")
        #expect(Self.foldByTable("Émile") == "émile")
        #expect(Self.table.singles.contains { $0.from == "A" && $0.to == "a" })
        #expect(Self.table.expansions.contains { $0.from == "ß" && $0.to == "ss" })
        #expect(Self.table.functionName.hasPrefix("ocd_fold_case_") && Self.table.functionName.count == 30)
    }

    /// Every scalar of the blocks that hold cased letters in the Basic Multilingual Plane (Latin, Greek,
    /// Cyrillic, Armenian, Georgian, Cherokee, letterlike and enclosed forms, Glagolitic, Coptic, ligatures,
    /// full-width forms) folds alone as the table says. The table is built only from scalars Unicode marks
    /// as changing under case mapping or folding; this checks that filter where it matters, in a few seconds.
    @Test func casedBlocksFoldAsFoundation() {
        let blocks: [ClosedRange<UInt32>] = [0...0x24FF, 0x2C00...0x2DFF, 0xA640...0xA7FF, 0xAB30...0xABBF,
                                             0xFB00...0xFB4F, 0xFF00...0xFFEF]
        var wrong: [String] = []
        for value in blocks.joined() {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(scalar)
            if text.folding(options: .caseInsensitive, locale: nil) != Self.foldByTable(text), wrong.count < 10 {
                wrong.append(String(value, radix: 16))
            }
        }
        #expect(wrong.isEmpty, "scalars folded differently: \(wrong)")
    }

    /// Strings mixing the table's scalars with combining marks and plain letters fold as Foundation folds
    /// them: folding is per scalar, which is what lets SQL do it.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func mixedStringsFoldAsFoundation(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var pool: [Unicode.Scalar] = Self.table.singles.map(\.from) + Self.table.expansions.map(\.from)
        pool += Array("aZ09 ß\u{301}\u{308}\u{345}İıſ".unicodeScalars)
        var wrong: [String] = []
        for _ in 0..<5_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...8, using: &random) { scalars.append(pool[Int.random(in: 0..<pool.count, using: &random)]) }
            let text = String(scalars)
            if text.folding(options: .caseInsensitive, locale: nil) != Self.foldByTable(text), wrong.count < 5 {
                wrong.append(text.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))
            }
        }
        #expect(wrong.isEmpty, "strings folded differently: \(wrong)")
    }
}
