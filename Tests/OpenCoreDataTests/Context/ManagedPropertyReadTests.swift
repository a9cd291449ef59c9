import Foundation
import GRDB
import Testing
@testable import OpenCoreData

final class Sample: ManagedObject {
    @Managed("text") var text: String?
    @Managed("small") var small: Int16?
    @Managed("medium") var medium: Int32?
    @Managed("large") var large: Int64?
    @Managed("smallAsInt") var smallAsInt: Int?
    @Managed("flag") var flag: Bool?
    @Managed("ratio") var ratio: Double?
    @Managed("when") var when: Date?
    @Managed("count") var count: Int
}

/// Typed reads of `@Managed` properties take the stored value straight from the row when they can; they
/// must always answer what `value(forKey:)` and `fromManagedValue` answer.
@Suite struct ManagedPropertyReadTests {
    /// Every stored kind of value against every attribute type and every typed conversion: the direct
    /// conversion either declines (nil) or agrees with the conversion through `Any`, and it does not decline
    /// the common case of a value stored as its attribute's type.
    @Test func storedConversionAgreesWithTheConversionThroughAny() {
        var generator = SeededGenerator(seed: 5)
        let values: [StoreValue] = [.null, 0.storeValue, 1.storeValue, 2.storeValue, (-1).storeValue,
                                       70_000.storeValue, Int64.max.storeValue, Int64.min.storeValue,
                                       0.5.storeValue, (-2.75).storeValue, 3.0.storeValue, 1e300.storeValue,
                                       "".storeValue, "hello".storeValue, "42".storeValue, "2.5".storeValue,
                                       "2020-01-02T03:04:05Z".storeValue, Data([1, 2]).storeValue]
            + (0..<50).map { _ in Int64.random(in: .min ... .max, using: &generator).storeValue }
            + (0..<50).map { _ in Double.random(in: -1e9...1e9, using: &generator).storeValue }

        func check<T: ManagedPropertyValue & Equatable>(_: T.Type, expectDirect: (StoreValue, AttributeType) -> Bool) {
            for type in AttributeType.allCases {
                for value in values {
                    let stored = StoredAttributeValue(value: value, type: type)
                    let slow = T.fromManagedValue(ValueConversion.swiftValue(value, for: type))
                    if let fast = T.fromStoredAttribute(stored) {
                        #expect(fast == slow, "\(T.self) from \(value) as \(type)")
                    } else if expectDirect(value, type) {
                        Issue.record("\(T.self) from \(value) as \(type) declined the direct read")
                    }
                }
            }
        }
        func isInteger(_ value: StoreValue) -> Bool { if case .int64 = value.storage { return true } else { return false } }
        func isReal(_ value: StoreValue) -> Bool { if case .double = value.storage { return true } else { return false } }
        func isText(_ value: StoreValue) -> Bool { if case .string = value.storage { return true } else { return false } }

        check(String.self) { value, type in type == .string && isText(value) }
        check(String?.self) { value, type in value.isNull || type == .string && isText(value) }
        check(Int64.self) { value, type in type == .integer64 && isInteger(value) }
        check(Int64?.self) { value, type in value.isNull || type == .integer64 && isInteger(value) }
        check(Int32?.self) { value, type in value.isNull || type == .integer32 && isInteger(value) }
        check(Int16?.self) { value, type in value.isNull || type == .integer16 && isInteger(value) }
        check(Int.self) { value, type in [.integer16, .integer32, .integer64].contains(type) && isInteger(value) }
        check(Bool?.self) { value, type in value.isNull || type == .boolean && isInteger(value) }
        check(Double?.self) { value, type in value.isNull || type == .double && (isReal(value) || isInteger(value)) }
        check(Date?.self) { value, type in value.isNull || type == .date && (isReal(value) || isInteger(value)) }
        check(Float?.self) { _, _ in false }
        check(Decimal?.self) { _, _ in false }
    }

    /// Through the property wrapper on objects read from a real store: values stored as their attribute's
    /// type, values SQLite holds in another storage class (written behind the library's back), unsaved
    /// changes, faults and nulls all read as `value(forKey:)` reads them.
    @Test func typedPropertiesReadWhatValueForKeyReads() throws {
        let model = try ManagedObjectModel {
            EntityDescription("Sample", class: Sample.self) {
                Attribute("text", .string)
                Attribute("small", .integer16)
                Attribute("medium", .integer32)
                Attribute("large", .integer64)
                Attribute("smallAsInt", .integer16)
                Attribute("flag", .boolean)
                Attribute("ratio", .double)
                Attribute("when", .date)
                Attribute("count", .integer64, default: Int64(0))
            }
        }
        let stack = try TestStack(model: model)
        let writer = stack.context()
        var generator = SeededGenerator(seed: 9)
        for index in 0..<60 {
            let sample = try writer.insertNew(Sample.self)
            let isNull = index % 5 == 0
            sample.text = isNull ? nil : "sample \(index)"
            sample.small = isNull ? nil : Int16.random(in: .min ... .max, using: &generator)
            sample.medium = isNull ? nil : Int32.random(in: .min ... .max, using: &generator)
            sample.large = isNull ? nil : Int64.random(in: .min ... .max, using: &generator)
            sample.smallAsInt = isNull ? nil : Int(Int16.random(in: .min ... .max, using: &generator))
            sample.flag = isNull ? nil : Bool.random(using: &generator)
            sample.ratio = isNull ? nil : Double.random(in: -1e6...1e6, using: &generator)
            sample.when = isNull ? nil : Date(timeIntervalSinceReferenceDate: Double.random(in: 0...1e9, using: &generator))
            sample.count = index
        }
        try writer.save()
        // Other storage classes than the attributes' own, as another program may leave them.
        let queue = try DatabaseQueue(path: stack.url.path)
        try queue.write { db in
            try db.execute(sql: "UPDATE ZSAMPLE SET ZTEXT = 42, ZWHEN = 1000, ZRATIO = 7, ZSMALL = 70000, ZFLAG = 2 WHERE Z_PK % 7 = 3")
        }
        try queue.close()

        let reader = stack.context()
        let request = FetchRequest<Sample>()
        request.sortDescriptors = [QuerySortDescriptor(key: "count")]
        let samples = try reader.fetch(request)
        #expect(samples.count == 60)
        func expectAgreement(_ sample: Sample, _ note: String) throws {
            #expect(try sample.text == String?.fromManagedValue(sample.value(forKey: "text")), "\(note)")
            #expect(try sample.small == Int16?.fromManagedValue(sample.value(forKey: "small")), "\(note)")
            #expect(try sample.medium == Int32?.fromManagedValue(sample.value(forKey: "medium")), "\(note)")
            #expect(try sample.large == Int64?.fromManagedValue(sample.value(forKey: "large")), "\(note)")
            #expect(try sample.smallAsInt == Int?.fromManagedValue(sample.value(forKey: "smallAsInt")), "\(note)")
            #expect(try sample.flag == Bool?.fromManagedValue(sample.value(forKey: "flag")), "\(note)")
            #expect(try sample.ratio == Double?.fromManagedValue(sample.value(forKey: "ratio")), "\(note)")
            #expect(try sample.when == Date?.fromManagedValue(sample.value(forKey: "when")), "\(note)")
            #expect(try sample.count == Int.fromManagedValue(sample.value(forKey: "count")), "\(note)")
        }
        for sample in samples { try expectAgreement(sample, "fetched \(sample.count)") }
        let mismatched = try #require(samples.first { $0.objectID.primaryKey % 7 == 3 })
        #expect(mismatched.text == "42" && mismatched.small == Int16(truncatingIfNeeded: 70_000) && mismatched.flag == true)
        #expect(mismatched.when == Date(timeIntervalSinceReferenceDate: 1000) && mismatched.ratio == 7)

        // Unsaved changes, then faults read again.
        for sample in samples where sample.count % 3 == 0 {
            sample.text = "changed \(sample.count)"
            sample.small = nil
        }
        for sample in samples { try expectAgreement(sample, "changed \(sample.count)") }
        #expect(samples[3].text == "changed 3" && samples[3].small == nil)
        reader.rollback()
        reader.refreshAllObjects()
        #expect(samples.allSatisfy { $0.isFault })
        for sample in samples { try expectAgreement(sample, "refreshed \(sample.count)") }
        #expect(samples[1].text == "sample 1")
    }
}
