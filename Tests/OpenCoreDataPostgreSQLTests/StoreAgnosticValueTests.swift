import Foundation
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// Every attribute type's values come back exactly as they were saved, on either store, however they were
/// written (a context's save, a batch insert, a batch update), and a fetch comparing with them finds them:
/// a date keeps every bit of its seconds, a decimal every digit the store keeps.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct StoreAgnosticValueTests {
    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            EntityDescription("Sample") {
                Attribute("key", .integer64)
                Attribute("taken", .date)
                Attribute("amount", .decimal)
                Attribute("ratio", .double)
                Attribute("count", .integer32)
                Attribute("flag", .boolean)
                Attribute("name", .string)
                Attribute("blob", .binaryData)
                Attribute("identifier", .uuid)
                Attribute("link", .uri)
            }
        }
    }

    /// A random value for each attribute: dates with sub-microsecond seconds, decimals up to the 15
    /// significant digits the store keeps (whole ones up to Int64's range), extreme doubles.
    static func randomValues(_ generator: inout SeededGenerator) -> [String: Any] {
        var values: [String: Any] = [:]
        values["taken"] = Date(timeIntervalSinceReferenceDate: Double.random(in: -3e9...3e9, using: &generator))
        let digits = Int64.random(in: -999_999_999_999_999...999_999_999_999_999, using: &generator)
        values["amount"] = switch Int.random(in: 0..<3, using: &generator) {
        case 0: Decimal(sign: digits < 0 ? .minus : .plus, exponent: -Int.random(in: 0...14, using: &generator),
                        significand: Decimal(digits.magnitude))
        case 1: Decimal(Int64.random(in: Int64.min...Int64.max, using: &generator))
        default: Decimal(string: ["0.1", "-12.25", "1e-10", "3.14159265358979"].randomElement(using: &generator)!)!
        }
        values["ratio"] = [Double.random(in: -1...1, using: &generator), 1e300, -Double.leastNonzeroMagnitude, 0.1]
            .randomElement(using: &generator)!
        values["count"] = Int32.random(in: Int32.min...Int32.max, using: &generator)
        values["flag"] = Bool.random(using: &generator)
        values["name"] = ["naïve café", "", "日本語", "emoji 👩‍💻"].randomElement(using: &generator)!
        values["blob"] = Data((0..<Int.random(in: 0..<20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        values["identifier"] = UUID()
        values["link"] = URL(string: "https://example.com/\(Int.random(in: 0..<1000, using: &generator))")!
        return values
    }

    /// The values as comparable text, each kind by what identifies it exactly (a date's seconds' bits).
    static func described(_ object: ManagedObject) throws -> String {
        func value(_ key: String) throws -> Any? { try object.value(forKey: key) }
        let taken = try (value("taken") as? Date).map { String($0.timeIntervalSinceReferenceDate.bitPattern, radix: 16) } ?? "nil"
        let ratio = try (value("ratio") as? Double).map { String($0.bitPattern, radix: 16) } ?? "nil"
        let rest = try ["amount", "count", "flag", "name", "blob", "identifier", "link"].map { "\($0)=\(try value($0) ?? "nil")" }
        return (["taken=\(taken)", "ratio=\(ratio)"] + rest).joined(separator: " ")
    }

    static func described(_ values: [String: Any]) throws -> String {
        let taken = String((values["taken"] as! Date).timeIntervalSinceReferenceDate.bitPattern, radix: 16)
        let ratio = String((values["ratio"] as! Double).bitPattern, radix: 16)
        let rest = ["amount", "count", "flag", "name", "blob", "identifier", "link"].map { "\($0)=\(values[$0] ?? "nil")" }
        return (["taken=\(taken)", "ratio=\(ratio)"] + rest).joined(separator: " ")
    }

    static func samples(in context: ManagedObjectContext) throws -> [Int64: ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: "Sample")
        return try Dictionary(uniqueKeysWithValues: context.fetch(request).map { (try $0.value(forKey: "key") as! Int64, $0) })
    }

    @Test(arguments: agnosticKinds)
    func savedValuesComeBackExactlyAndAreFoundByEquality(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: Self.makeModel())
        var generator = SeededGenerator(seed: 0x5A1E)
        let saved = (0..<40).map { _ in Self.randomValues(&generator) }
        let writer = try location.context()
        for (key, values) in saved.enumerated() {
            let sample = try writer.insertNewObject(forEntityName: "Sample")
            try sample.setValue(Int64(key), forKey: "key")
            for (name, value) in values { try sample.setValue(value, forKey: name) }
        }
        try writer.save()
        let reader = try location.context()
        let read = try Self.samples(in: reader)
        for (key, values) in saved.enumerated() {
            let object = try #require(read[Int64(key)])
            #expect(try Self.described(object) == Self.described(values), "row \(key)")
            // A fetch comparing with the saved date, decimal or double finds the row.
            for name in ["taken", "amount", "ratio"] {
                let request = FetchRequest<ManagedObject>(entityName: "Sample")
                request.predicate = try QueryPredicate(format: "key == %@ AND %K == %@", argumentArray: [Int64(key), name, values[name]!])
                #expect(try reader.fetch(request).count == 1, "row \(key) \(name) == \(values[name]!)")
            }
        }
    }

    @Test(arguments: agnosticKinds)
    func batchWrittenValuesComeBackExactly(kind: StoreKind) throws {
        let location = try SharedStoreLocation(kind, model: Self.makeModel())
        var generator = SeededGenerator(seed: 0xBA7C4)
        let inserted = (0..<20).map { _ in Self.randomValues(&generator) }
        let context = try location.context()
        let insert = BatchInsertRequest(entityName: "Sample", objects: inserted.enumerated().map { key, values in
            values.merging(["key": Int64(key)]) { first, _ in first }
        })
        _ = try context.execute(insert)
        var read = try Self.samples(in: location.context())
        for (key, values) in inserted.enumerated() {
            #expect(try Self.described(#require(read[Int64(key)])) == Self.described(values), "inserted row \(key)")
        }
        // A batch update writes one new value of each kind into every row.
        var updated = Self.randomValues(&generator)
        updated["identifier"] = UUID()
        let update = BatchUpdateRequest(entityName: "Sample")
        update.propertiesToUpdate = updated
        _ = try context.execute(update)
        read = try Self.samples(in: location.context())
        for key in inserted.indices {
            #expect(try Self.described(#require(read[Int64(key)])) == Self.described(updated), "updated row \(key)")
        }
    }
}
