import Foundation
import Testing
@testable import OpenCoreData

/// Plain classes for `#Predicate`, readable by key for in-memory evaluation.
final class TypedBook: KeyValueCoding {
    var title: String?
    var pages: Int
    init(title: String?, pages: Int) { self.title = title; self.pages = pages }
    func value(forKey key: String) throws -> Any? {
        switch key {
        case "title": return title
        case "pages": return pages
        default: throw QueryLanguageError.semantic("no key \(key)")
        }
    }
}

final class TypedPerson: KeyValueCoding {
    var name: String
    var age: Int
    var height: Double
    var flag: Bool
    var address: TypedPerson?
    var books: [TypedBook]
    init(name: String, age: Int, height: Double = 1.5, flag: Bool = false, address: TypedPerson? = nil, books: [TypedBook] = []) {
        self.name = name; self.age = age; self.height = height; self.flag = flag; self.address = address; self.books = books
    }
    func value(forKey key: String) throws -> Any? {
        switch key {
        case "name": return name
        case "age": return age
        case "height": return height
        case "flag": return flag
        case "address": return address
        case "books": return books
        default: throw QueryLanguageError.semantic("no key \(key)")
        }
    }
}

@Suite struct TypedPredicateTests {
    let people: [TypedPerson] = [
        TypedPerson(name: "Émile", age: 62, flag: true, books: [TypedBook(title: "Nana", pages: 400), TypedBook(title: nil, pages: 600)]),
        TypedPerson(name: "Anne", age: 17, height: 1.8, address: TypedPerson(name: "Paris", age: 0)),
        TypedPerson(name: "Ed", age: 30, books: [TypedBook(title: "Germinal", pages: 592)]),
    ]

    func check(_ typed: Predicate<TypedPerson>, _ expectedFormat: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let converted = try QueryPredicate(typed)
        #expect(converted.predicateFormat == expectedFormat, sourceLocation: sourceLocation)
        #expect(try QueryPredicate(format: converted.predicateFormat) == converted, sourceLocation: sourceLocation)
        for person in people {
            #expect(try converted.evaluate(with: person) == typed.evaluate(person), "\(person.name)", sourceLocation: sourceLocation)
        }
    }

    @Test func comparisonsAndLogic() throws {
        try check(#Predicate<TypedPerson> { $0.age > 18 && $0.name != "Ed" }, #"age > 18 AND name != "Ed""#)
        try check(#Predicate<TypedPerson> { $0.age <= 17 || !($0.height >= 1.5) }, "age <= 17 OR NOT height >= 1.5")
        try check(#Predicate<TypedPerson> { $0.flag }, "flag == YES")
        try check(#Predicate<TypedPerson> { $0.age * 2 + 1 < 100 }, "age * 2 + 1 < 100")
        try check(#Predicate<TypedPerson> { $0.height / 2.0 > 0.8 }, "height / 2.0 > 0.8")
    }

    @Test func keyPathsStringsAndCollections() throws {
        try check(#Predicate<TypedPerson> { $0.address?.name == "Paris" }, #"address.name == "Paris""#)
        try check(#Predicate<TypedPerson> { $0.name.starts(with: "É") }, #"name BEGINSWITH "É""#)
        try check(#Predicate<TypedPerson> { $0.name.contains("nn") }, #"name CONTAINS "nn""#)
        try check(#Predicate<TypedPerson> { ["Ed", "Anne"].contains($0.name) }, #"name IN {"Ed", "Anne"}"#)
        try check(#Predicate<TypedPerson> { $0.books.count >= 1 }, "books.@count >= 1")
        try check(#Predicate<TypedPerson> { $0.books.contains { $0.pages > 500 } },
                  "SUBQUERY(books, $v1, $v1.pages > 500).@count > 0")
        try check(#Predicate<TypedPerson> { $0.books.allSatisfy { $0.pages > 500 } },
                  "SUBQUERY(books, $v1, NOT $v1.pages > 500).@count == 0")
        try check(#Predicate<TypedPerson> { $0.books.filter { $0.pages > $0.pages - 1 }.count == 2 },
                  "SUBQUERY(books, $v1, $v1.pages > $v1.pages - 1).@count == 2")
    }

    @Test func nilCoalescingConditionalsRemaindersAndIntegerDivision() throws {
        try check(#Predicate<TypedPerson> { ($0.address?.age ?? 5) > 1 },
                  "TERNARY(address.age != nil, address.age, 5) > 1")
        try check(#Predicate<TypedPerson> { ($0.address?.name ?? "none") == "none" },
                  #"TERNARY(address.name != nil, address.name, "none") == "none""#)
        try check(#Predicate<TypedPerson> { ($0.age > 20 ? $0.age : 0) >= 30 }, "TERNARY(age > 20, age, 0) >= 30")
        try check(#Predicate<TypedPerson> { $0.flag ? $0.age > 60 : $0.height > 1.6 },
                  "flag == YES AND age > 60 OR NOT flag == YES AND height > 1.6")
        try check(#Predicate<TypedPerson> { $0.age % 2 == 0 }, "modulus:by:(age, 2) == 0")
        try check(#Predicate<TypedPerson> { $0.age % -7 == 3 }, "modulus:by:(age, -7) == 3")
        try check(#Predicate<TypedPerson> { $0.age / 4 == 15 }, "trunc:(age / 4) == 15")
        try check(#Predicate<TypedPerson> { -$0.age / 4 == -4 }, "trunc:(-age / 4) == -4")
    }

    @Test func arrayIndexesFirstAndLast() throws {
        try check(#Predicate<TypedPerson> { $0.books.first?.pages == 400 }, "books[FIRST].pages == 400")
        try check(#Predicate<TypedPerson> { $0.books.last?.title == "Germinal" }, #"books[LAST].title == "Germinal""#)
        try check(#Predicate<TypedPerson> { $0.books.count > 1 && $0.books[1].pages > 500 },
                  "books.@count > 1 AND books[1].pages > 500")
    }

    @Test func unsupportedConstructsThrow() {
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(#Predicate<TypedPerson> { $0.books.isEmpty }) }
        #expect(throws: QueryLanguageError.self) { try QueryPredicate(#Predicate<TypedPerson> { $0.name.isEmpty }) }
    }

    @Test func typedPredicatesCompileToSQL() throws {
        let fixture = try AgreementFixture(seed: 21)
        // The fixture's Person has `age`, `name` and `books.pages`, as TypedPerson does.
        let typed = try QueryPredicate(#Predicate<TypedPerson> { $0.age > 17 && $0.books.contains { $0.pages > 400 } })
        #expect(Set(try fixture.sqlKeys(typed)) == (try fixture.memoryKeys(typed)))
    }
}
