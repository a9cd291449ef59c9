import Foundation
import Testing
@testable import OpenCoreData

/// Whatever the parser is given, it returns a predicate or throws; it never traps or exhausts the stack.
@Suite struct HostileInputTests {
    func survives(_ format: String, _ arguments: [Any] = []) {
        do {
            let predicate = try QueryPredicate(format: format, argumentArray: arguments)
            // Whatever parsed must print and parse back.
            #expect((try? QueryPredicate(format: predicate.predicateFormat)) == predicate, "\(format.prefix(80))")
        } catch is QueryLanguageError {
        } catch {
            Issue.record("unexpected error type \(type(of: error)) for \(format.prefix(80))")
        }
        _ = try? QueryExpression(format: format, argumentArray: arguments)
    }

    @Test func quotesCommentsAndSeparators() {
        for format in ["name == 'a''b'", "name == \"a\\\"", "name == 'abc", "name == '--'; DROP TABLE ZPERSON; --",
                       "name == 1; DELETE", "-- comment", "/* x */ a == 1", "a == 1 --", "'", "\"", "\\", "%", "%@",
                       "%K", "%z", "%l", "$", "@", "#", "#1", "a.", ".a == 1", "a..b == 1", "a == ", "== 1", "()", "(", ")",
                       "{", "}", "{1,", "a IN {", "a BETWEEN", "a BETWEEN {1,2,3}", "SUBQUERY(", "SUBQUERY(a, b, c)",
                       "CAST(1, 'NSNope')", "CAST('x', 'NSDate')", "CAST('x', 'NSManagedObjectID')", "a[1] == 2", "a ==[x] 1",
                       "a ==[] 1", "0x == 1", "0b102 == 1", "99999999999999999999999 == a", "1e400 == a", "1.2.3 == a",
                       "a == \u{0}", "a == '\u{0}'", "\u{FEFF}a == 1", "a == 'é\u{301}'", "ANY", "ALL ALL a == 1", "NOT",
                       "NOT NOT", "a == 1 AND", "a == 1 OR OR b", "sum:(", "sum:()", "nope:(1) == 1", "now( == 1",
                       "FUNCTION(a, 'b') == 1", "a.#first == 1", "\"\\u12\" == a", "\"\\uD800\" == a"] {
            survives(format)
        }
        survives("%@ == %@", [1])
        survives("%d == 1", ["x"])
        survives("%@ == 1", [{ () in }])
    }

    @Test func combiningMarksNextToQuotesRoundTrip() throws {
        for text in ["\u{301}abc", "abc\u{301}", "\u{301}", "e\u{301}\"\u{301}", "\u{200D}", "🇫🇷", "\r\n"] {
            let predicate = try QueryPredicate(format: "name == %@", text)
            #expect(try QueryPredicate(format: predicate.predicateFormat) == predicate, "\(text.unicodeScalars.map { $0.value })")
            #expect(try predicate.evaluate(with: ["name": text]))
        }
        #expect(try QueryPredicate(format: "cafe\u{301} == 1").evaluate(with: ["cafe\u{301}": 1]))
    }

    @Test func veryLongStrings() {
        let long = String(repeating: "x", count: 200_000)
        survives("name == '\(long)'")
        survives("name == %@", [long])
        survives(String(repeating: "a == 1 AND ", count: 5_000) + "b == 2")
        let predicate = try? QueryPredicate(format: "name LIKE %@", String(repeating: "*a", count: 2_000) + "b")
        #expect((try? predicate?.evaluate(with: ["name": String(repeating: "a", count: 5_000)])) == false)
    }

    @Test func deepNestingThrowsInsteadOfCrashing() throws {
        for opener in ["(", "NOT ", "!", "-", "{", "SUBQUERY(a, $x, ", "abs:(", "CAST(", "TERNARY(", "TERNARY(a == 1, ",
                       "FUNCTION(", "add:to:(", "a["] {
            let format = String(repeating: opener, count: 10_000) + "a == 1"
            #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: format) }
        }
        let parenthesised = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: parenthesised) }
        let arithmetic = "a == " + String(repeating: "(1 + ", count: 10_000) + "1" + String(repeating: ")", count: 10_000)
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: arithmetic) }
        // Postfix indexes nest too: a long chain hits the cap instead of recursing without end later.
        #expect(throws: QueryLanguageError.self) {
            try QueryPredicate(format: "a" + String(repeating: "[0]", count: 10_000) + " == 1")
        }
        #expect(throws: QueryLanguageError.self) {
            try QueryPredicate(format: "a" + String(repeating: "[FIRST].b", count: 10_000) + " == 1")
        }
        let deepIndex = try QueryPredicate(format: "a" + String(repeating: "[0]", count: 400) + " == 1")
        #expect(try QueryPredicate(format: deepIndex.predicateFormat) == deepIndex)
        #expect(try !deepIndex.evaluate(with: ["b": 1]))
        // Nesting just under the cap works end to end: parse, print, hash, evaluate, compile.
        let deepNot = try QueryPredicate(format: String(repeating: "NOT ", count: 450) + "a == 1")
        #expect(try QueryPredicate(format: deepNot.predicateFormat) == deepNot)
        #expect(Set([deepNot]).count == 1)
        #expect(try deepNot.evaluate(with: ["a": 1]))
        let model = try ManagedObjectModel { EntityDescription("Thing") { Attribute("a", .integer64) } }
        if let thing = model.entitiesByName["Thing"] {
            #expect(try PredicateSQLCompiler(model: model, entity: thing).compile(predicate: deepNot).whereClause != nil)
        }
        let deepArithmetic = try QueryExpression(format: String(repeating: "-(", count: 120) + "1" + String(repeating: ")", count: 120))
        #expect(try deepArithmetic.evaluate(with: nil) as? Int == 1)
        // Moderate nesting is fine.
        let fine = String(repeating: "(", count: 100) + "a == 1" + String(repeating: ")", count: 100)
        #expect(try QueryPredicate(format: fine) == QueryPredicate(format: "a == 1"))
    }

    @Test func randomBytesAndTokenSoup() {
        var random = SeededGenerator(seed: 99)
        for _ in 0..<3_000 {
            let length = Int(random.next() % 40)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            survives(String(decoding: bytes, as: UTF8.self))
        }
        let soup = ["a", "b.c", "==", "!=", "<", ">=", "AND", "OR", "NOT", "(", ")", "{", "}", ",", "'x'", "\"y\"", "1", "2.5",
                    "ANY", "ALL", "IN", "CONTAINS[cd]", "LIKE", "MATCHES", "BETWEEN", "nil", "YES", "SELF", "$v", "@count",
                    "+", "-", "*", "/", "**", "SUBQUERY", "CAST", "%@", "%K", "TRUEPREDICATE", "[c]", ".", "#a", "sum:", "now()"]
        for _ in 0..<3_000 {
            let count = 1 + Int(random.next() % 12)
            let format = (0..<count).map { _ in soup[Int(random.next() % UInt64(soup.count))] }.joined(separator: " ")
            survives(format, ["k", 1, "x", 2])
        }
    }
}
