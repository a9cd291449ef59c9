import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// `median:` as a fetched value of a dictionary fetch, over all rows and per group, on PostgreSQL: the middle
/// number or the mean of the middle two, as a naive median of the saved values and as SQLite give it.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLMedianTests {
    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Reading") {
                Attribute("group", .string)
                Attribute("label", .string)
                Attribute("whole", .integer64)
                Attribute("fraction", .double)
                Attribute("amount", .decimal)
                Attribute("taken", .date)
                Attribute("flag", .boolean)
            }
        }
    }

    /// The numeric attributes and each one's value as the median sees it (a number of seconds for a date).
    static let numericKeys = ["whole", "fraction", "amount", "taken", "flag"]

    /// One saved row: its group, label and each numeric attribute's value as a double (nil when unset).
    struct Row {
        var group: String
        var label: String
        var numbers: [String: Double]
    }

    /// Random rows: groups of 0 to 9 rows (odd and even counts), repeated values, negative values, nils.
    static func randomRows(_ generator: inout SeededGenerator) -> [Row] {
        var rows: [Row] = []
        for group in ["a", "b", "c", "d"] {
            for _ in 0..<Int.random(in: 0...9, using: &generator) {
                var numbers: [String: Double] = [:]
                for key in numericKeys where Int.random(in: 0..<5, using: &generator) > 0 {
                    // Values a double holds exactly in every store's form, so the reference is exact.
                    numbers[key] = switch key {
                    case "whole": Double(Int.random(in: -6...6, using: &generator) * 1_000_003)
                    case "fraction": Double(Int.random(in: -40...40, using: &generator)) / 8
                    case "amount": Double(Int.random(in: -400...400, using: &generator)) / 4
                    case "taken": Double(Int.random(in: 0...20, using: &generator) * 86_400)
                    default: Double(Int.random(in: 0...1, using: &generator))
                    }
                }
                rows.append(Row(group: group, label: ["x", "Y", "z"].randomElement(using: &generator)!, numbers: numbers))
            }
        }
        return rows
    }

    static func save(_ rows: [Row], in context: ManagedObjectContext) throws {
        for row in rows {
            let reading = try context.insertNewObject(forEntityName: "Reading")
            try reading.setValue(row.group, forKey: "group")
            try reading.setValue(row.label, forKey: "label")
            if let whole = row.numbers["whole"] { try reading.setValue(Int64(whole), forKey: "whole") }
            if let fraction = row.numbers["fraction"] { try reading.setValue(fraction, forKey: "fraction") }
            if let amount = row.numbers["amount"] { try reading.setValue(Decimal(amount), forKey: "amount") }
            if let taken = row.numbers["taken"] { try reading.setValue(Date(timeIntervalSinceReferenceDate: taken), forKey: "taken") }
            if let flag = row.numbers["flag"] { try reading.setValue(flag == 1, forKey: "flag") }
        }
        try context.save()
    }

    /// The median written the obvious way: sorted, the middle one or the mean of the middle two.
    static func naiveMedian(_ values: [Double]) -> Double? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The request: each numeric attribute's median (and the label's, which has no numbers), grouped by
    /// group or over all rows, with a predicate the server says or one it leaves to the app.
    static func request(grouped: Bool, predicate: String?) throws -> FetchRequest<[String: Any]> {
        let request = FetchRequest<[String: Any]>(entityName: "Reading")
        request.resultType = .dictionary
        var properties: [Any] = try (numericKeys + ["label"]).map { key in
            ExpressionDescription(name: key, expression: try QueryExpression(format: "median:(\(key))"), resultType: .double)
        }
        if grouped {
            properties.insert("group", at: 0)
            request.propertiesToGroupBy = ["group"]
            request.sortDescriptors = [QuerySortDescriptor(key: "group")]
        }
        request.propertiesToFetch = properties
        request.predicate = try predicate.map { try QueryPredicate(format: $0) }
        return request
    }

    /// The rows a predicate keeps, as memory reads it.
    static func kept(_ rows: [Row], by predicate: String?) -> [Row] {
        switch predicate {
        case "label ==[c] 'y'", "label ==[cd] 'y'": rows.filter { $0.label.lowercased() == "y" }
        case "whole > 0": rows.filter { ($0.numbers["whole"] ?? -1) > 0 }
        default: rows
        }
    }

    /// `rows` as the fetch should answer: one dictionary per group (or one over all), each median a double or
    /// absent, described as comparable text.
    static func expected(_ rows: [Row], grouped: Bool) -> [String] {
        let groups: [(String?, [Row])] = grouped
            ? Dictionary(grouping: rows, by: \.group).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            : [(nil, rows)]
        return groups.map { group, members in
            var line = group.map { "group=\($0)" } ?? ""
            for key in numericKeys {
                line += " \(key)=" + (naiveMedian(members.compactMap { $0.numbers[key] }).map { "\($0)" } ?? "nil")
            }
            return line + " label=nil"
        }
    }

    static func described(_ results: [[String: Any]], grouped: Bool) -> [String] {
        results.map { row in
            var line = grouped ? "group=\(row["group"] ?? "nil")" : ""
            for key in numericKeys + ["label"] {
                line += " \(key)=" + ((row[key] as? Double).map { "\($0)" } ?? (row[key] == nil ? "nil" : "\(row[key]!)!"))
            }
            return line
        }
    }

    @Test func randomMediansAgreeWithANaiveMedianAndWithSQLite() throws {
        let model = try Self.makeModel()
        var generator = SeededGenerator(seed: 0x3ED1A4)
        for round in 0..<6 {
            let rows = Self.randomRows(&generator)
            let sqlite = try SharedStoreLocation(.sqlite, model: model)
            let postgreSQL = try SharedStoreLocation(.postgreSQL, model: model)
            try Self.save(rows, in: sqlite.context())
            try Self.save(rows, in: postgreSQL.context())
            let reference = try sqlite.context(), context = try postgreSQL.context()
            for grouped in [false, true] {
                // No predicate, one the server says, one it cannot say alike ([cd], answered in the app).
                for predicate in [nil, "whole > 0", "label ==[cd] 'y'"] {
                    let label = "round \(round) grouped \(grouped) predicate \(predicate ?? "none")"
                    let expected = Self.expected(Self.kept(rows, by: predicate), grouped: grouped)
                    let answer = Self.described(try context.fetch(Self.request(grouped: grouped, predicate: predicate)), grouped: grouped)
                    #expect(answer == expected, "\(label)")
                    let onSQLite = Self.described(try reference.fetch(Self.request(grouped: grouped, predicate: predicate)), grouped: grouped)
                    #expect(answer == onSQLite, "\(label)")
                }
            }
        }
    }

    /// A middle value the largest doubles reach is returned as it is, not summed with itself.
    @Test func oddCountOfHugeValuesKeepsTheMiddleOne() throws {
        let location = try SharedStoreLocation(.postgreSQL, model: Self.makeModel())
        let context = try location.context()
        for value in [1.5e308, 1.7e308, -1.0e308] {
            let reading = try context.insertNewObject(forEntityName: "Reading")
            try reading.setValue(value, forKey: "fraction")
        }
        try context.save()
        let request = FetchRequest<[String: Any]>(entityName: "Reading")
        request.resultType = .dictionary
        request.propertiesToFetch = [ExpressionDescription(name: "middle", expression: try QueryExpression(format: "median:(fraction)"),
                                                          resultType: .double)]
        #expect(try context.fetch(request).first?["middle"] as? Double == 1.5e308)
    }
}
