import Foundation
import Testing
@testable import OpenCoreData

/// The in-memory comparison's own shortcuts give Foundation's answers.
@Suite struct QueryValueSemanticsTests {
    static let optionSets: [QueryComparison.Options] = [[], [.caseInsensitive], [.diacriticInsensitive],
                                                        [.caseInsensitive, .diacriticInsensitive]]

    /// Folding ASCII text without Foundation gives what `String.folding(options:locale:)` gives, for every ASCII
    /// character and for random ASCII strings.
    @Test func asciiFoldingMatchesFoundation() {
        var generator = SeededGenerator(seed: 0xF01D)
        let every = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        let samples = [every, "", "Item 12", "ÎTEM 1"] + (0..<500).map { _ in
            String(decoding: (0..<Int.random(in: 0..<16, using: &generator)).map { _ in UInt8.random(in: 0..<128, using: &generator) },
                   as: UTF8.self)
        }
        for options in Self.optionSets {
            var folding: String.CompareOptions = []
            if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
            if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
            for text in samples {
                let expected = folding.isEmpty ? text : text.folding(options: folding, locale: nil)
                #expect(Array(QueryValueSemantics.fold(text, options).unicodeScalars) == Array(expected.unicodeScalars),
                        "\(text.debugDescription) \(options)")
            }
        }
    }

    /// The pattern side's kept fold answers as folding afresh does, whichever patterns and options follow each
    /// other, from several threads at once.
    @Test func keptPatternFoldsMatchFoldingAfresh() async {
        let patterns = ["ÎTEM 1", "Straße", "naïve", "item", "ÉCOLE", "ﬁn", "日本"]
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(task) + 1)
                    for _ in 0..<2_000 {
                        let pattern = patterns.randomElement(using: &generator)!
                        let options = Self.optionSets.randomElement(using: &generator)!
                        #expect(QueryValueSemantics.foldPattern(pattern, options) == QueryValueSemantics.fold(pattern, options))
                    }
                }
            }
        }
    }

    /// Values of every kind convert as before the text shortcut: text (and optional text) to `.string`, the rest
    /// to their own kinds.
    @Test func valuesConvertToTheirKinds() {
        let optionalText: String? = "a"
        let missing: String? = nil
        #expect(QueryValue.convert("text") == .string("text"))
        #expect(QueryValue.convert(optionalText as Any) == .string("a"))
        #expect(QueryValue.convert(missing as Any) == .null)
        #expect(QueryValue.convert(NSString(string: "bridged")) == .string("bridged"))
        #expect(QueryValue.convert(Substring("sub")) == .string("sub"))
        #expect(QueryValue.convert(Character("c")) == .string("c"))
        #expect(QueryValue.convert(true) == .bool(true))
        #expect(QueryValue.convert(Int64(5)) == .int(5))
        #expect(QueryValue.convert(NSNumber(value: 2.5)) == .double(2.5))
    }
}
