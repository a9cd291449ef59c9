import Foundation
import Testing
@testable import OpenCoreData

/// A number compared with a string (`count > "40"`, `name == 42`) gives the same answer for a saved object
/// (compiled to SQL) as for an unsaved one (evaluated in memory): a string that spells a number compares as
/// that number, any other string compares with no number.
@Suite struct NumberStringComparisonTests {
    /// Items saved to a store file, the same values again unsaved, and a fetch of each predicate: the saved
    /// and the unsaved copy of a value are either both in the result or both out of it.
    func fetchedNames(_ format: String, _ arguments: Any...) throws -> (saved: Set<String>, unsaved: Set<String>) {
        let stack = try TestStack(model: TestModels.todo())
        let context = stack.context()
        let values: [(name: String, count: Int32?)] = [
            ("42", 42), ("7.0", 7), ("abc", 40), (" 41 ", 41), ("1e2", 100), ("", nil), ("-3", -3),
        ]
        func insert() throws {
            for value in values {
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue(value.name, forKey: "name")
                try item.setValue(value.count, forKey: "count")
            }
        }
        try insert()
        try context.save()
        try insert()
        let request = FetchRequest<ManagedObject>(entityName: "Item")
        request.predicate = try QueryPredicate(format: format, argumentArray: arguments)
        let found = try context.fetch(request)
        var saved = Set<String>(), unsaved = Set<String>()
        for object in found {
            let name = try #require(try object.value(forKey: "name") as? String)
            if object.isInserted { unsaved.insert(name) } else { saved.insert(name) }
            // The fetch agrees with evaluating the predicate on the object itself.
            #expect(try request.predicate!.evaluate(with: object), "\(format) fetched \(name)")
        }
        return (saved, unsaved)
    }

    @Test(arguments: [
        ("count > '40'", ["42", " 41 ", "1e2"]),
        ("count == '42'", ["42"]),
        ("count == '42.0'", ["42"]),
        ("count >= ' 41 '", ["42", " 41 ", "1e2"]),
        ("count < '1e1'", ["7.0", "-3"]),
        ("'41' < count", ["42", "1e2"]),
        ("count IN {'7', 100}", ["7.0", "1e2"]),
        ("count BETWEEN {'0', '41'}", ["7.0", "abc", " 41 "]),
        ("count + 1 > '42'", ["42", "1e2"]),
        ("count < 'abc'", []),
        ("count > 'abc'", []),
        ("count == 'abc'", []),
        ("count != 'abc'", ["42", "7.0", "abc", " 41 ", "1e2", "", "-3"]),
        ("name == 42", ["42"]),
        ("name == 7", ["7.0"]),
        ("name > 40", ["42", " 41 ", "1e2"]),
        ("name < 0", ["-3"]),
        ("name IN {100, -3}", ["1e2", "-3"]),
        ("count == name", ["42", "7.0", " 41 ", "1e2", "-3"]),
        ("count != name", ["abc", ""]),
    ] as [(String, [String])])
    func savedAndUnsavedAgree(format: String, expected: [String]) throws {
        let (saved, unsaved) = try fetchedNames(format)
        #expect(saved == unsaved, "\(format): saved \(saved.sorted()) unsaved \(unsaved.sorted())")
        #expect(saved == Set(expected), "\(format): saved \(saved.sorted())")
        #expect(unsaved == Set(expected), "\(format): unsaved \(unsaved.sorted())")
    }

    @Test func argumentsFollowTheSameRule() throws {
        var (saved, unsaved) = try fetchedNames("count > %@", "40")
        #expect(saved == ["42", " 41 ", "1e2"] && unsaved == saved)
        (saved, unsaved) = try fetchedNames("name == %@", 7)
        #expect(saved == ["7.0"] && unsaved == saved)
    }

    @Test func spelledNumbers() {
        #expect(QueryValueSemantics.spelledNumber("42") == .int(42))
        #expect(QueryValueSemantics.spelledNumber(" -42 ") == .int(-42))
        #expect(QueryValueSemantics.spelledNumber("+1.5e2") == .double(150))
        #expect(QueryValueSemantics.spelledNumber(".5") == .double(0.5))
        #expect(QueryValueSemantics.spelledNumber("5.") == .double(5))
        #expect(QueryValueSemantics.spelledNumber("9223372036854775808") == .double(9223372036854775808))
        for text in ["", " ", "abc", "0x10", "1e", "--1", "1 2", "inf", "nan", ".", "e5", "4\u{0}2", "١٢"] {
            #expect(QueryValueSemantics.spelledNumber(text) == nil, "\(text.debugDescription)")
        }
    }
}
