import Foundation
import Testing
@testable import OpenCoreData

/// Parses, checks the printed format parses back to an equal predicate, and returns the predicate.
func parsed(_ format: String, _ arguments: Any..., sourceLocation: SourceLocation = #_sourceLocation) throws -> QueryPredicate {
    let predicate = try QueryPredicate(format: format, argumentArray: arguments)
    let printed = predicate.predicateFormat
    let reparsed = try QueryPredicate(format: printed)
    #expect(reparsed == predicate, "'\(format)' printed as '\(printed)' parsed back differently", sourceLocation: sourceLocation)
    return predicate
}

func holds(_ format: String, _ arguments: Any..., on object: Any?, sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
    let predicate = try QueryPredicate(format: format, argumentArray: arguments)
    let printed = predicate.predicateFormat
    #expect(try QueryPredicate(format: printed) == predicate, "'\(format)' printed as '\(printed)'", sourceLocation: sourceLocation)
    return try predicate.evaluate(with: object)
}

var person: [String: Any] { [
    "name": "Émile Zola", "age": 62, "height": 1.78, "score": Int16(7), "flag": true,
    "born": Date(timeIntervalSinceReferenceDate: -4_000_000_000), "nickname": Optional<String>.none as Any,
    "id": UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, "blob": Data([1, 2, 3]),
    "address": ["city": "Paris", "zip": "75001"] as [String: Any],
    "books": [
        ["title": "Nana", "pages": 400, "price": 12.5] as [String: Any],
        ["title": "Germinal", "pages": 592, "price": 15] as [String: Any],
        ["title": "L'Assommoir", "pages": 512] as [String: Any],
    ],
    "tags": Set(["novelist", "french"]),
] }

@Suite struct QueryGrammarTests {
    @Test func comparisonOperatorsInEverySpelling() throws {
        for (format, expected) in [("age == 62", true), ("age = 62", true), ("age != 62", false), ("age <> 61", true),
                                   ("age < 63", true), ("age <= 62", true), ("age =< 61", false), ("age > 61", true),
                                   ("age >= 63", false), ("age => 62", true)] {
            #expect(try holds(format, on: person) == expected, "\(format)")
        }
    }

    @Test func numbersOfDifferentTypesCompareByValue() throws {
        #expect(try holds("score == 7.0", on: person))
        #expect(try holds("score == %@", Decimal(7), on: person))
        #expect(try holds("age == %@", Int64(62), on: person))
        #expect(try holds("flag == 1", on: person))
        #expect(try holds("flag == YES", on: person))
        #expect(try holds("height > %@", Float(1.5), on: person))
    }

    @Test func nilComparesEqualOnlyToNil() throws {
        #expect(try holds("nickname == nil", on: person))
        #expect(try holds("nickname == NULL", on: person))
        #expect(try holds("name != nil", on: person))
        #expect(try !holds("nickname < 5", on: person))
        #expect(try !holds("nickname > 5", on: person))
        #expect(try holds("nickname != 5", on: person))
        #expect(try holds("missing == nil", on: person))
    }

    @Test func between() throws {
        #expect(try holds("age BETWEEN {60, 70}", on: person))
        #expect(try !holds("age BETWEEN %@", [63, 70], on: person))
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: "age BETWEEN {1}") }
    }

    @Test func inWithLiteralsArgumentsAndStrings() throws {
        #expect(try holds("age IN {1, 62, 3}", on: person))
        #expect(try holds("age IN %@", [61, 62], on: person))
        #expect(try holds("age IN %@", Set([62]), on: person))
        #expect(try !holds("age IN {}", on: person))
        #expect(try holds("'Zola' IN name", on: person))
        #expect(try holds("'novelist' IN tags", on: person))
    }

    @Test func stringOperatorsAndModifiers() throws {
        #expect(try holds("name CONTAINS 'Zola'", on: person))
        #expect(try !holds("name CONTAINS 'zola'", on: person))
        #expect(try holds("name CONTAINS[c] 'zola'", on: person))
        #expect(try holds("name BEGINSWITH 'Ém'", on: person))
        #expect(try !holds("name BEGINSWITH[c] 'em'", on: person))
        #expect(try holds("name BEGINSWITH[d] 'Em'", on: person))
        #expect(try holds("name BEGINSWITH[cd] 'em'", on: person))
        #expect(try holds("name ==[cd] 'EMILE ZOLA'", on: person))
        #expect(try holds("name ENDSWITH 'ola'", on: person))
        #expect(try holds("name LIKE '*Zol?'", on: person))
        #expect(try !holds("name LIKE 'Zol*'", on: person))
        #expect(try holds("name LIKE[cd] 'emile*'", on: person))
        #expect(try holds("name MATCHES '.mile [A-Z][a-z]+'", on: person))
        #expect(try !holds("name MATCHES 'mile'", on: person))  // whole string only
        #expect(try holds("name MATCHES[c] '.MILE ZOLA'", on: person))
        #expect(try holds("tags CONTAINS 'french'", on: person))
    }

    /// ICU tells `K` from the Kelvin sign (U+212A), which Swift's `String` equality does not: a pattern must
    /// never be answered by another pattern's compiled expression that is merely canonically equivalent.
    @Test func canonicallyEquivalentPatternsStayDistinct() throws {
        let kelvin = "\u{212A}"
        for pattern in [kelvin, "K", kelvin] {
            for subject in ["K", kelvin] {
                let predicate = try QueryPredicate(format: "SELF MATCHES %@", argumentArray: [pattern])
                #expect(try predicate.evaluate(with: subject) == (subject.unicodeScalars.elementsEqual(pattern.unicodeScalars)),
                        "\(pattern.unicodeScalars.map(\.value)) against \(subject.unicodeScalars.map(\.value))")
            }
        }
    }

    @Test func logicalOperatorsAndParentheses() throws {
        #expect(try holds("age > 1 AND age < 100", on: person))
        #expect(try holds("age > 1 && age < 100", on: person))
        #expect(try holds("age < 1 OR age == 62", on: person))
        #expect(try holds("age < 1 || age == 62", on: person))
        #expect(try holds("NOT age < 1", on: person))
        #expect(try holds("! (age < 1)", on: person))
        #expect(try holds("(age < 1 OR age > 2) AND (name != nil)", on: person))
        #expect(try holds("TRUEPREDICATE", on: person))
        #expect(try !holds("FALSEPREDICATE", on: person))
        #expect(try holds("(age + 1) * 2 == 126", on: person))
        let precedence = try parsed("a == 1 OR b == 2 AND c == 3")
        guard case .or(let parts) = precedence else { Issue.record("expected OR at the top"); return }
        #expect(parts.count == 2)
        #expect(try parsed("(a == 1 AND b == 2) AND c == 3") != parsed("a == 1 AND b == 2 AND c == 3"))
    }

    @Test func literals() throws {
        #expect(try holds("age == 0x3E", on: person))
        #expect(try holds("age == 0o76", on: person))
        #expect(try holds("age == 0b111110", on: person))
        #expect(try holds("height == 1.78", on: person))
        #expect(try holds("height < 1.8e0", on: person))
        #expect(try holds("-age == -62", on: person))
        #expect(try holds(#"address.city == "Paris""#, on: person))
        #expect(try holds("address.city == 'Paris'", on: person))
        #expect(try parsed(#"name == "say \"hi\"\n\t\\ \u00e9""#) == .comparison(QueryComparison(.key("name"), .equal, .constant(.string("say \"hi\"\n\t\\ é")))))
        #expect(try holds("flag == TRUE AND flag != FALSE AND flag == yes AND flag != no", on: person))
        #expect(try holds("{1, 2, 3} CONTAINS 2", on: person))
        #expect(try holds("born == CAST(-4000000000, 'NSDate')", on: person))
        #expect(try holds("CAST('62', 'NSNumber') == age", on: person))
        #expect(try holds("CAST(age, 'NSString') == '62'", on: person))
        #expect(try holds("id == CAST('E621E1F8-C36C-495A-93FC-0C247A3E6E5F', 'NSUUID')", on: person))
    }

    @Test func keyPathsQuantifiersAndCollectionOperators() throws {
        #expect(try holds("address.zip BEGINSWITH '75'", on: person))
        #expect(try holds("ANY books.pages > 500", on: person))
        #expect(try holds("SOME books.pages > 500", on: person))
        #expect(try !holds("ALL books.pages > 500", on: person))
        #expect(try holds("ALL books.pages > 300", on: person))
        #expect(try holds("NONE books.pages > 600", on: person))
        #expect(try holds("books.title CONTAINS 'Nana'", on: person))
        #expect(try holds("books.@count == 3", on: person))
        #expect(try holds("books.@sum.pages == 1504", on: person))
        #expect(try holds("books.@avg.price == 13.75", on: person))
        #expect(try holds("books.@min.pages == 400 AND books.@max.pages == 592", on: person))
        #expect(try holds("SUBQUERY(books, $b, $b.pages > 450 AND $b.title BEGINSWITH 'G').@count == 1", on: person))
        #expect(try holds("SELF.age == 62", on: person))
        #expect(try holds("SELF == 5", on: 5))
        #expect(try holds("SELF BEGINSWITH 'ab'", on: "abc"))
        #expect(try holds("ANY books.price == nil", on: person))  // nil members count
    }

    @Test func arguments() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        #expect(try holds("%K == %@", "name", "Émile Zola", on: person))
        #expect(try holds("%K.%K == %@", "address", "city", "Paris", on: person))
        #expect(try holds("born < %@", date, on: person))
        #expect(try holds("id == %@", UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, on: person))
        #expect(try holds("blob == %@", Data([1, 2, 3]), on: person))
        #expect(try holds("age == %d AND age == %i AND age == %ld AND age == %lld AND age == %u", 62, 62, 62, 62, 62, on: person))
        #expect(try holds("height > %f AND height < %lf", 1.7, 1.8, on: person))
        #expect(try holds("name LIKE %@", "*Zola", on: person))
        #expect(try parsed("age == $AGE") == .comparison(QueryComparison(.key("age"), .equal, .variable("AGE"))))
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: "age == $AGE").evaluate(with: person) }
        #expect(try QueryPredicate(format: "age == $AGE").evaluate(with: person, substitutionVariables: ["AGE": 62]))
        let substituted = try QueryPredicate(format: "age == $AGE AND SUBQUERY(books, $b, $b.pages > $MIN).@count > 0")
            .withSubstitutionVariables(["AGE": 62, "MIN": 10, "b": 1])
        #expect(substituted == (try QueryPredicate(format: "age == 62 AND SUBQUERY(books, $b, $b.pages > 10).@count > 0")))
        #expect(try parsed("name == %%") == .comparison(QueryComparison(.key("name"), .equal, .constant(.string("%")))))
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: "name == %@") }
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: "%K == 1", 5) }
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: "%K == 1", "a b") }
    }

    @Test func managedObjectsAndIDsAsArguments() throws {
        let model = try ManagedObjectModel { EntityDescription("Item") { Attribute("name", .string) } }
        guard let entity = model.entitiesByName["Item"] else { Issue.record("no entity"); return }
        let id = ManagedObjectID(entity: entity, primaryKey: 7, store: nil)
        let object = ManagedObject(entity: entity, id: id)
        let byObject = try QueryPredicate(format: "SELF == %@", object)
        #expect(byObject == (try QueryPredicate(format: "SELF == %@", id)))
        #expect(try byObject.evaluate(with: object))
        #expect(try QueryPredicate(format: "SELF IN %@", [object]).evaluate(with: object))
        #expect(try !QueryPredicate(format: "SELF == %@", ManagedObjectID(entity: entity, primaryKey: 8, store: nil)).evaluate(with: object))
    }

    @Test func keywordsAreCaseInsensitiveAndHashEscapes() throws {
        #expect(try holds("age > 1 and age < 100 Or FALSEPREDICATE", on: person))
        #expect(try holds("any books.pages between {500, 600}", on: person))
        #expect(try holds("#size == 3", on: ["size": 3]))
        #expect(try holds("box.#first == 'x'", on: ["box": ["first": "x"]]))
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(format: "size == 3") }
        // A reserved word as a key prints escaped and parses back.
        let escaped = QueryPredicate.comparison(QueryComparison(.key("in"), .equal, .constant(.int(1))))
        #expect(escaped.predicateFormat == "#in == 1")
        #expect(try QueryPredicate(format: escaped.predicateFormat) == escaped)
    }

    @Test func compoundConstructorsAndConstants() throws {
        let a = try QueryPredicate(format: "age > 1"), b = try QueryPredicate(format: "name != nil")
        #expect(try QueryPredicate.and([a, b]).evaluate(with: person))
        #expect(try QueryPredicate.or([.falsePredicate, b]).evaluate(with: person))
        #expect(try !QueryPredicate.not(a).evaluate(with: person))
        #expect(try QueryPredicate.truePredicate.evaluate(with: nil))
        #expect(QueryPredicate.and([a, b]).predicateFormat == "age > 1 AND name != nil")
        #expect(QueryPredicate.not(.or([a, b])).predicateFormat == "NOT (age > 1 OR name != nil)")
    }

    @Test func errorsCarryPositions() throws {
        func position(_ format: String) -> Int? {
            do { _ = try QueryPredicate(format: format); return nil } catch let error as QueryLanguageError { return error.position } catch { return nil }
        }
        #expect(position("name ==") == 7)
        #expect(position("name == 'abc") == 8)
        #expect(position("name ~ 3") == 5)
        #expect(position("(a == 1") == 7)
        #expect(position("a == 1 b") == 7)
        let error = QueryLanguageError(position: 3, message: "expected x")
        #expect(error.description == "at character 3: expected x")
    }
}

/// The index operators, TERNARY, FUNCTION and the function names, and the union collection operators.
@Suite struct QueryGrammarExtensionTests {
    func value(_ format: String, _ arguments: Any..., on object: Any? = person,
               sourceLocation: SourceLocation = #_sourceLocation) throws -> Any? {
        let expression = try QueryExpression(format: format, argumentArray: arguments)
        let printed = expression.expressionFormat
        #expect(try QueryExpression(format: printed) == expression, "'\(format)' printed as '\(printed)'",
                sourceLocation: sourceLocation)
        return try expression.evaluate(with: object)
    }

    func position(_ format: String, _ arguments: Any...) -> Int? {
        do { _ = try QueryPredicate(format: format, argumentArray: arguments); return nil }
        catch let error as QueryLanguageError { return error.position } catch { return nil }
    }

    func message(_ format: String, _ arguments: Any...) -> String {
        do { _ = try QueryPredicate(format: format, argumentArray: arguments); return "" }
        catch { return "\(error)" }
    }

    @Test func indexOperatorsOnArraysAndKeyPaths() throws {
        #expect(try value("{1, 2, 3}[1]") as? Int == 2)
        #expect(try value("{1, 2, 3}[FIRST]") as? Int == 1)
        #expect(try value("{1, 2, 3}[last]") as? Int == 3)
        #expect(try value("{1, 2, 3}[SIZE]") as? Int == 3)
        #expect(try value("{}[SIZE]") as? Int == 0)
        #expect(try value("{}[FIRST]") == nil)
        #expect(try value("{1, 2, 3}[3]") == nil)       // past the end: nil, not an exception
        #expect(try value("{1, 2, 3}[-1]") == nil)
        #expect(try value("{1, 2, 3}[0.5]") == nil)
        #expect(try value("{1, 2, 3}[1.0]") as? Int == 2)
        #expect(try value("%@[LAST]", ["a", "b"]) as? String == "b")
        #expect(try value("%@[%d]", [10, 20, 30], 2) as? Int == 30)
        #expect(try value("{age, score}[1]") as? Int16 == 7)
        #expect(try value("books[SIZE]") as? Int == 3)
        #expect(try value("books[FIRST].title") as? String == "Nana")
        #expect(try value("books[LAST].pages") as? Int == 512)
        #expect(try value("books.title[1]") as? String == "Germinal")
        #expect(try value("books[2].price") == nil)
        #expect(try value("books[1 + 1].title") as? String == "L'Assommoir")
        #expect(try value("books[score - 6].title") as? String == "Germinal")
        #expect(try value("tags[SIZE]") as? Int == 2)
        #expect(try value("missing[SIZE]") as? Int == 0)
        #expect(try value("missing[FIRST]") == nil)
        #expect(try value("address['city']") as? String == "Paris")
        #expect(try value("SUBQUERY(books, $b, $b.pages > 450)[SIZE]") as? Int == 2)
        #expect(try value("{{1, 2}, {3}}[0][1]") as? Int == 2)
        #expect(try holds("books[FIRST].title == 'Nana' AND books[SIZE] == books.@count", on: person))
        #expect(try holds("ANY books[0].title BEGINSWITH[c] 'n'", on: person))
        // A set has no first member; a string is not a collection.
        #expect(throws: QueryLanguageError.self) { try value("tags[FIRST]") }
        #expect(throws: QueryLanguageError.self) { try value("name[SIZE]") }
    }

    @Test func indexOperatorsPrintAndParseBack() throws {
        #expect(try parsed("books[FIRST].title == 'x'").predicateFormat == #"books[FIRST].title == "x""#)
        #expect(try parsed("a[last][size] == 1").predicateFormat == "a[LAST][SIZE] == 1")
        #expect(try parsed("(a + 1)[0] == 1").predicateFormat == "(a + 1)[0] == 1")
        #expect(try parsed("a[#first] == 1").predicateFormat == "a[#first] == 1")
        #expect(try parsed("a[$i].b[%@] == 1", "k").predicateFormat == #"a[$i].b["k"] == 1"#)
        #expect(try parsed("SUBQUERY(a, $x, $x.b == 1)[SIZE] > 0").predicateFormat == "SUBQUERY(a, $x, $x.b == 1)[SIZE] > 0")
        let index = QueryPredicate.comparison(QueryComparison(
            .index(.constant(.int(-1)), .at(.constant(.int(0)))), .equal, .constant(.null)))
        #expect(index.predicateFormat == "(-1)[0] == nil")
        #expect(try QueryPredicate(format: index.predicateFormat) == index)
    }

    @Test func malformedIndexesReportTheirPosition() {
        #expect(position("a[] == 1") == 2)
        #expect(position("a[FIRST == 1") == 8)
        #expect(position("a[1 == 1") == 4)
        #expect(position("a[FIRST + 1] == 1") == 8)
        #expect(position("FIRST == 1") == 0)
    }

    @Test func ternary() throws {
        #expect(try value("TERNARY(age > 18, 'adult', 'minor')") as? String == "adult")
        #expect(try value("TERNARY(nickname == nil, name, nickname)") as? String == "Émile Zola")
        #expect(try value("TERNARY(missing > 1, 1, 2)") as? Int == 2)   // unknown is false
        #expect(try value("TERNARY(TRUEPREDICATE, nil, 2)") == nil)
        #expect(try holds("TERNARY(age > 60 AND flag == YES, score, 0) == 7", on: person))
        #expect(try parsed("TERNARY(a == 1 OR b == 2, c + 1, -d) > 0").predicateFormat == "TERNARY(a == 1 OR b == 2, c + 1, -d) > 0")
        _ = try parsed("TERNARY(a == 1, 1, 2)[0] == 1")
        #expect(position("TERNARY(a == 1, 2) == 1") == 17)
        #expect(position("TERNARY(a, 1, 2) == 1") == 9)
        #expect(position("ternary == 1") == 8)
        #expect(try holds("#ternary == 1", on: ["ternary": 1]))
    }

    @Test func functionNamesAndTheirValues() throws {
        #expect(try value("add:to:(age, 1)") as? Int == 63)
        #expect(try value("from:subtract:(age, 2)") as? Int == 60)
        #expect(try value("multiply:by:(score, 2)") as? Int == 14)
        #expect(try value("divide:by:(age, 4)") as? Double == 15.5)
        #expect(try value("divide:by:(age, 0)") == nil)
        #expect(try value("modulus:by:(age, 5)") as? Int == 2)
        #expect(try value("modulus:by:(-7, 3)") as? Int == -1)
        #expect(try value("modulus:by:(7.5, 2)") as? Double == 1.5)
        #expect(try value("modulus:by:(age, 0)") == nil)
        #expect(try value("modulus:by:(%@, -1)", Int64.min) as? Int == 0)
        #expect(try value("raise:toPower:(2, 10)") as? Double == 1024)
        #expect(try value("sqrt:(16)") as? Double == 4)
        #expect(try value("sqrt:(-1)") == nil)
        #expect(try value("log:(1000)") as? Double == 3)
        #expect(try value("ln:(1)") as? Double == 0)
        #expect(try value("exp:(0)") as? Double == 1)
        #expect(try value("ceiling:(1.2)") as? Double == 2)
        #expect(try value("floor:(-1.2)") as? Double == -2)
        #expect(try value("trunc:(-1.7)") as? Double == -1)
        #expect(try value("trunc:(age)") as? Int == 62)
        #expect(try value("uppercase:('straße')") as? String == "STRASSE")
        #expect(try value("lowercase:(name)") as? String == "émile zola")
        #expect(try value("length:(name)") as? Int == 10)
        #expect(try value("length:(age)") == nil)
        #expect(try value("noindex:(age)") as? Int == 62)
        #expect(try value("sqrt:(nickname)") == nil)
        #expect(try value("count:(missing)") as? Int == 0)
        #expect(try value("median:({1, 9, 2, 4})") as? Double == 3)
        let random = try value("random()") as? Double
        #expect(random.map { $0 >= 0 && $0 < 1 } == true)
        #expect(try parsed("add:to:(a, multiply:by:(b, 2)) == random()").predicateFormat == "add:to:(a, multiply:by:(b, 2)) == random()")
    }

    @Test func functionCallSyntax() throws {
        #expect(try value("FUNCTION(16, 'sqrt:')") as? Double == 4)
        #expect(try value("FUNCTION(age, 'add:to:', 1)") as? Int == 63)
        #expect(try value("FUNCTION(name, 'uppercaseString')") as? String == "ÉMILE ZOLA")
        #expect(try value("FUNCTION(name, 'length')") as? Int == 10)
        #expect(try value("FUNCTION(books.pages, 'sum:')") as? Int == 1504)
        #expect(try value("FUNCTION(%@, %@)", 9, "sqrt:") as? Double == 3)
        // FUNCTION prints as the function-call form, which parses back to the same tree.
        #expect(try QueryExpression(format: "FUNCTION(a, 'modulus:by:', 3)").expressionFormat == "modulus:by:(a, 3)")
        #expect(try QueryExpression(format: "FUNCTION(a, 'modulus:by:', 3)") == QueryExpression(format: "modulus:by:(a, 3)"))
    }

    @Test func unknownFunctionsAndWrongArityAreNamed() {
        #expect(position("FUNCTION(SELF, 'reverse', 1) == 1") == 15)
        #expect(message("FUNCTION(SELF, 'reverse', 1) == 1").contains("'reverse'"))
        #expect(position("FUNCTION(SELF, 'now') == 1") == 15)
        #expect(position("FUNCTION(a, 'add:to:') == 1") == 0)
        #expect(position("FUNCTION(a 'sqrt:') == 1") == 11)
        #expect(position("frobnicate:(a) == 1") == 0)
        #expect(message("frobnicate:(a) == 1").contains("frobnicate:"))
        #expect(message("add:to:(a) == 1").contains("takes 2 arguments"))
        #expect(position("sqrt:(a, b) == 1") == 0)
        #expect(position("add:to(a, b) == 1") == 0)
        #expect(message("add:to(a, b) == 1").contains("'add:'"))
        #expect(throws: QueryLanguageError.self) {
            try QueryExpression.function(.sqrt, [.constant(.int(1)), .constant(.int(2))]).evaluate(with: nil)
        }
    }

    @Test func utiOperatorsAreRefusedWithTheirPosition() {
        #expect(position("type UTI-CONFORMS-TO 'public.image'") == 5)
        #expect(message("type UTI-EQUALS 'public.jpeg'").contains("not supported"))
    }

    @Test func unionOperators() throws {
        let object: [String: Any] = ["books": [
            ["title": "Nana", "pages": 400, "tags": ["a", "b"]] as [String: Any],
            ["title": "Nana", "pages": 592, "tags": ["b"]] as [String: Any],
            ["pages": 400, "tags": [String]()] as [String: Any],
        ]]
        #expect(try value("books.@unionOfObjects.title", on: object) as? [String] == ["Nana", "Nana"])
        #expect(try value("books.@distinctUnionOfObjects.title", on: object) as? [String] == ["Nana"])
        #expect(try value("books.@distinctUnionOfObjects.pages.@count", on: object) as? Int == 2)
        #expect(try value("books.@unionOfObjects.pages.@sum", on: object) as? Int == 1392)
        #expect(try value("books.@distinctUnionOfObjects.pages.@sum", on: object) as? Int == 992)
        #expect(try value("books.@unionOfArrays.tags", on: object) as? [String] == ["a", "b", "b"])
        #expect(try value("books.@distinctUnionOfArrays.tags", on: object) as? [String] == ["a", "b"])
        #expect(try value("books.@distinctUnionOfSets.tags[SIZE]", on: object) as? Int == 2)
        #expect(try value("count:(books.@distinctUnionOfObjects.title)", on: object) as? Int == 1)
        #expect(try holds("'Nana' IN books.@distinctUnionOfObjects.title", on: object))
        #expect(try !holds("nil IN books.@unionOfObjects.title", on: object))
        #expect(try holds("ALL books.@unionOfObjects.title == 'Nana'", on: object))
        #expect(try parsed("books.@distinctUnionOfObjects.title.@count > 1").predicateFormat == "books.@distinctUnionOfObjects.title.@count > 1")
        #expect(throws: QueryLanguageError.self) { try value("books.@unionOfObjects", on: object) }
    }
}
