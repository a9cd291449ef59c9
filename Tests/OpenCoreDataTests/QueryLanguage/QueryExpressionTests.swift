import Foundation
import Testing
@testable import OpenCoreData

@Suite struct QueryExpressionTests {
    func value(_ format: String, _ arguments: Any..., on object: Any? = person, variables: [String: Any] = [:]) throws -> Any? {
        let expression = try QueryExpression(format: format, argumentArray: arguments)
        #expect(try QueryExpression(format: expression.expressionFormat) == expression, "\(format) → \(expression.expressionFormat)")
        return try expression.evaluate(with: object, context: variables)
    }

    @Test func arithmetic() throws {
        #expect(try value("1 + 2 * 3") as? Int == 7)
        #expect(try value("(1 + 2) * 3") as? Int == 9)
        #expect(try value("10 - 4 - 3") as? Int == 3)
        #expect(try value("7 / 2") as? Double == 3.5)
        #expect(try value("2 ** 10") as? Double == 1024)
        #expect(try value("age + 1") as? Int == 63)
        #expect(try value("-age") as? Int == -62)
        #expect(try value("1 / 0") == nil)
        #expect(try value("nickname + 1") == nil)
        #expect(try value("%@ + 1", Int64.max) as? Double == Double(Int64.max) + 1)
    }

    @Test func functions() throws {
        #expect(try value("sum:(books.pages)") as? Int == 1504)
        #expect(try value("count:(books)") as? Int == 3)
        #expect(try value("min:(books.pages)") as? Int == 400)
        #expect(try value("max:({1, 5, 3})") as? Int == 5)
        #expect(try value("average:({1, 2})") as? Double == 1.5)
        #expect(try value("median:({1, 9, 2})") as? Double == 2)
        #expect(try value("abs:(-4)") as? Int == 4)
        let now = try value("now()") as? Date
        #expect(now.map { abs($0.timeIntervalSinceNow) < 60 } == true)
    }

    @Test func constantsVariablesAndSelf() throws {
        #expect(try value("$x * 2", variables: ["x": 21]) as? Int == 42)
        #expect(try value("SELF", on: "me") as? String == "me")
        #expect(try value("{1, 'a'}") as? [Any] != nil)
        #expect(throws: QueryLanguageError.self) { try value("$missing") }
        #expect(try value("books.@count") as? Int == 3)
    }

    @Test func sortDescriptors() throws {
        let names = ["file10", "File2", "émile", "Emile", "zed", "file2"].map { ["name": $0] as [String: Any] } + [["name": NSNull()]]
        func sorted(_ comparator: StringComparison, ascending: Bool = true) throws -> [String] {
            let descriptor = QuerySortDescriptor(key: "name", ascending: ascending, comparator: comparator)
            return try names.sorted { try descriptor.compare($0, $1) == .orderedAscending }
                .map { ($0["name"] as? String) ?? "nil" }
        }
        #expect(try sorted(.compare) == ["nil", "Emile", "File2", "file10", "file2", "zed", "émile"])
        // Foundation's orders ("File2" and "file2" are equal to caseInsensitiveCompare: and ordered by scalars).
        #expect(try sorted(.caseInsensitiveCompare) == ["nil", "Emile", "émile", "file10", "File2", "file2", "zed"])
        #expect(try sorted(.localizedCompare) == ["nil", "Emile", "émile", "file10", "file2", "File2", "zed"])
        #expect(try sorted(.localizedStandardCompare) == ["nil", "Emile", "émile", "file2", "File2", "file10", "zed"])
        #expect(try sorted(.compare, ascending: false).first == "émile")
        #expect(try sorted(.compare, ascending: false).last == "nil")
        let descriptor = QuerySortDescriptor(key: "age")
        #expect(descriptor.reversed.ascending == false)
        #expect(try descriptor.compare(["age": 2], ["age": 10.5]) == .orderedAscending)
        #expect(try descriptor.compare(["age": Int16(3)], ["age": Decimal(3)]) == .orderedSame)
    }
}
