import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// `MATCHES` and `MATCHES[c]` on PostgreSQL select exactly what memory's ICU matching selects, on generated
/// patterns against Unicode text chosen where the two engines would part (line terminators under `.`, the
/// Kelvin sign and long s under case-insensitive `k` and `s`, `ß` and ligatures against `ss` and `fi`, marks,
/// digits of other scripts); what is not translated is refused by name.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLRegularExpressionTests {
    static let subjects: [String] = [
        "", "a", "A", "k", "K", "\u{212A}", "s", "S", "\u{17F}", "ss", "SS", "ß", "ẞ", "st", "ﬆ", "fi", "ﬁ", "é",
        "e\u{301}", "É", "Émile", "emile", "zoe", "Zoë", "ZOE", "1", "12", "٣", "a\nb", "a\n", "\n", "\r\n",
        "a\u{2028}", "x y", "a-b", "a.b", "İ", "ı", "i", "file10", "kelvin", "\u{212A}elvin", "straße", "STRASSE",
        "sk", "Sk", "a]b", "😀", "a\\b", "k\u{301}",
    ]

    /// Random patterns from the constructs that are translated, and some that are not.
    struct PatternGenerator {
        var random: SeededGenerator

        mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

        mutating func atom(depth: Int) -> String {
            switch random.next() % 16 {
            case 0, 1, 2, 3, 4, 5, 6:
                return pick(["a", "e", "k", "s", "z", "E", "K", "S", "i", "l", "f", "t", "1", " ", "-", "\\.", "\\-", "\\]",
                             "\\\\", "é", "ß", "\u{212A}", "\n", "\\n", "٣", "😀", "\u{301}"])
            case 7, 8: return "."
            case 9, 10, 11:
                return pick(["[a-z]", "[^a-z]", "[0-9]", "[éa]", "[kK]", "[A-Z]", "[^s]", "[-a]", "[a-]", "[\\]a]", "[^\\n]",
                             "[a-zA-Z]", "[^0-9]", "[k-s]", "[\u{212A}s]", "[ -~]"])
            case 12:
                // Refused constructs, so that refusals are exercised too.
                return pick(["\\d", "\\w", "\\s", "\\b", "(?=a)", "\\p{L}", "[[a]]", "\\1", "\\Qa\\E", "\\x{61}"])
            default:
                guard depth < 1 else { return "." }
                let inner = sequence(depth: depth + 1)
                return chance(50) ? "(" + inner + ")" : "(?:" + inner + "|" + sequence(depth: depth + 1) + ")"
            }
        }

        mutating func sequence(depth: Int) -> String {
            var out = ""
            for _ in 0..<(1 + random.next() % 3) {
                out += atom(depth: depth) + pick(["", "", "", "", "", "*", "+", "?", "{1,2}", "*?", "{2}", "{0,}", "+?", "*+"])
            }
            return out
        }

        mutating func pattern() -> String {
            var pattern = sequence(depth: 0)
            if chance(10) { pattern = "^" + pattern }
            if chance(10) { pattern += "$" }
            if chance(10) { pattern = "(?i)" + pattern }
            if chance(5) { pattern = ".*" + pattern + ".*" }
            return pattern
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func generatedPatternsAgree(seed: UInt64) throws {
        let fixture = try AgreementFixture(seed: 2, people: Self.subjects.count + 1)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            let person = try #require(fixture.model.entitiesByName["Person"])
            try Self.setNames(Self.subjects, fixture, store)
            var generator = PatternGenerator(random: SeededGenerator(seed: seed &* 104_729))
            var answered = 0, discriminating = 0, refused = 0, invalid = 0, gaveUp = 0, failures = 0
            defer {
                print("PostgreSQL MATCHES, seed \(seed): \(answered) answered, \(refused) refused, \(invalid) invalid, "
                      + "\(gaveUp) beyond memory's matching budget")
            }
            for _ in 0..<300 {
                let pattern = generator.pattern()
                let format = "name MATCHES\(generator.pick(["", "", "[c]"])) %@"
                let predicate = try QueryPredicate(format: format, argumentArray: [pattern])
                let memory: Set<Int64>
                do {
                    memory = try fixture.memoryKeys(predicate)
                } catch is QueryLanguageError {
                    if (try? QueryStringMatching.anchoredExpression(pattern, caseInsensitive: format.contains("[c]"))) == nil {
                        // An invalid ICU pattern fails on PostgreSQL too, with memory's error.
                        #expect(throws: QueryLanguageError.self, "\(format) \(pattern.debugDescription)") {
                            try store.fetchRows(entity: person, predicate: predicate)
                        }
                        invalid += 1
                    } else {
                        // Memory gave up (its matching budget; nested quantifiers backtrack): no answer to agree with.
                        gaveUp += 1
                    }
                    continue
                }
                let keys: Set<Int64>
                do {
                    keys = Set(try store.fetchRows(entity: person, predicate: predicate).map(\.primaryKey))
                } catch let refusal as QueryDialectRefusal {
                    #expect(refusal.construct == .regularExpression && refusal.detail != nil, "\(refusal)")
                    refused += 1
                    continue
                }
                answered += 1
                if !memory.isEmpty && memory.count < fixture.people.count { discriminating += 1 }
                if keys != memory {
                    failures += 1
                    let name = { (key: Int64) in (fixture.people[key]?.values["name"] as? String)?.debugDescription ?? "nil" }
                    Issue.record("""
                        disagreement for \(format) \(pattern.debugDescription)
                        PostgreSQL only: \(keys.subtracting(memory).sorted().map(name))
                        memory only: \(memory.subtracting(keys).sorted().map(name))
                        """)
                    if failures > 10 { return }
                }
            }
            #expect(answered >= 100, "only \(answered) of 300 patterns were translated")
            #expect(discriminating >= 50, "only \(discriminating) patterns selected some but not all rows")
        }
    }

    @Test func untranslatableConstructsAreRefusedByName() throws {
        let fixture = try AgreementFixture(seed: 1, people: 3)
        try PostgreSQLAgreementData.withCopy(of: fixture) { store in
            let person = try #require(fixture.model.entitiesByName["Person"])
            let cases: [(format: String, pattern: String, detail: String)] = [
                ("name MATCHES %@", "\\d+", "\\d"),
                ("name MATCHES %@", "\\w*", "\\w"),
                ("name MATCHES %@", "a(?=b)b", "(?="),
                ("name MATCHES %@", "a*+", "possessive quantifier '*+'"),
                ("name MATCHES %@", "(a)\\1", "\\1"),
                ("name MATCHES %@", "a$\n", "$ before the end of the pattern"),
                ("name MATCHES %@", "[[a-z]&&[^k]]", "'[' inside a class"),
                ("name MATCHES %@", "\\p{L}", "\\p"),
                ("name MATCHES %@", "a(?i)b", "(?i"),
                ("name MATCHES[c] %@", "é", "'é' (not ASCII) matched case-insensitively"),
                ("name MATCHES[c] %@", "masse", "'ss' matched case-insensitively (ICU also matches it with one scalar that folds to it)"),
                ("name MATCHES %@", "(?i)fi", "'fi' matched case-insensitively (ICU also matches it with one scalar that folds to it)"),
                ("name MATCHES %@", "a{300}", "bound '{300}'"),
            ]
            for (format, pattern, detail) in cases {
                let predicate = try QueryPredicate(format: format, argumentArray: [pattern])
                let refusal = try PostgreSQLAgreementData.refusal(fixture, person, predicate: predicate)
                // Refused by the compiler, answered in the app as memory answers.
                #expect(Set(try store.fetchRows(entity: person, predicate: predicate).map(\.primaryKey))
                        == (try fixture.memoryKeys(predicate)), "\(pattern)")
                #expect(refusal?.construct == .regularExpression, "\(pattern)")
                #expect(refusal?.detail == detail, "\(pattern): \(String(describing: refusal))")
                #expect(refusal?.description.contains(detail) == true)
                #expect(refusal?.expression.contains("MATCHES") == true)
            }
            // A pattern read from the row is not translated; [d] folds as no PostgreSQL function does.
            let computed = try QueryPredicate(format: "name MATCHES nickname")
            #expect(try PostgreSQLAgreementData.refusal(fixture, person, predicate: computed) != nil)
            #expect(Set(try store.fetchRows(entity: person, predicate: computed).map(\.primaryKey)) == (try fixture.memoryKeys(computed)))
            let folded = try QueryPredicate(format: "name MATCHES[cd] 'e.*'")
            let refusal = try PostgreSQLAgreementData.refusal(fixture, person, predicate: folded)
            #expect(refusal?.construct == .foldingOptions)
            #expect(Set(try store.fetchRows(entity: person, predicate: folded).map(\.primaryKey)) == (try fixture.memoryKeys(folded)))
            // A pattern ICU refuses fails as in memory.
            let invalid = try QueryPredicate(format: "name MATCHES '('")
            #expect(throws: QueryLanguageError.self) { try store.fetchRows(entity: person, predicate: invalid) }
        }
    }

    /// Puts `names` into the rows' `name` (one per row, the last row nil), in memory and on the server.
    static func setNames(_ names: [String], _ fixture: AgreementFixture, _ store: PostgreSQLStore) throws {
        let person = try #require(fixture.model.entitiesByName["Person"])
        for key in fixture.people.keys.sorted() {
            let index = Int(key) - 1
            let name: String? = index < names.count ? names[index] : nil
            fixture.people[key]?.values["name"] = name
            try store.pool.withSession {
                try $0.execute("UPDATE \(person.tableName) SET ZNAME = ? WHERE Z_PK = ?",
                               [name?.storeValue ?? .null, key.storeValue])
            }
        }
    }
}
