import Foundation
import GRDB
@testable import OpenCoreData
import Testing

/// The library's value against GRDB's, the type it replaced between the layers: equality, hashing, the
/// conversions and the text of a value agree for random values of every kind, and a value survives the
/// SQLite session's edge both ways and a round trip through a real SQLite column (text with a NUL inside whole).
@Suite struct StoreValueTests {
    /// A small random generator so that a failure names a seed that reproduces it.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    /// Values chosen to meet the edges: whole doubles equal to integers, ±0, NaN, infinities, Int64's ends,
    /// text with NUL and combining marks, empty and non-UTF-8 bytes.
    static func randomValue(_ random: inout Generator) -> StoreValue {
        switch random.next() % 9 {
        case 0: return .null
        case 1: return Int64(Int(random.next() % 7) - 3).storeValue
        case 2: return [Int64.min, Int64.max, 0, 1 << 53, (1 << 53) + 1].randomElement(using: &random)!.storeValue
        case 3: return Double(Int(random.next() % 7) - 3).storeValue
        case 4: return [0.5, -0.0, .nan, .infinity, -.infinity, 9.223372036854775807e18, 1e300]
            .randomElement(using: &random)!.storeValue
        case 5: return ["", "a", "A", "e\u{301}", "é", "nul\0inside", "3"].randomElement(using: &random)!.storeValue
        case 6: return [Data(), Data([0xFF, 0xFE]), Data("a".utf8), Data("3".utf8)].randomElement(using: &random)!.storeValue
        case 7: return Float(Int(random.next() % 5) - 2).storeValue
        default: return Bool.random(using: &random).storeValue
        }
    }

    /// The same kind and payload, NaN being the same as NaN.
    static func same(_ left: StoreValue, _ right: StoreValue) -> Bool {
        if case .double(let a) = left.storage, case .double(let b) = right.storage, a.isNaN, b.isNaN { return true }
        return left.storage == right.storage
    }

    @Test(arguments: 1...20)
    func equalityHashingAndTextAgreeWithGRDB(seed: UInt64) {
        var random = Generator(state: seed)
        for _ in 0..<200 {
            let left = Self.randomValue(&random), right = Self.randomValue(&random)
            #expect((left == right) == (left.databaseValue == right.databaseValue), "seed \(seed): \(left) vs \(right)")
            if left == right { #expect(left.hashValue == right.hashValue, "seed \(seed): \(left) and \(right) hash apart") }
            #expect(left.description == left.databaseValue.description, "seed \(seed)")
            #expect(Self.same(StoreValue(left.databaseValue), left), "seed \(seed): \(left) changed at the edge")
        }
    }

    @Test(arguments: 1...20)
    func conversionsReadAsGRDBReads(seed: UInt64) {
        var random = Generator(state: seed)
        for _ in 0..<200 {
            let value = Self.randomValue(&random), reference = value.databaseValue
            #expect(Int64.fromStoreValue(value) == Int64.fromDatabaseValue(reference), "seed \(seed): Int64 of \(value)")
            #expect(Int.fromStoreValue(value) == Int.fromDatabaseValue(reference), "seed \(seed): Int of \(value)")
            #expect(Int32.fromStoreValue(value) == Int32.fromDatabaseValue(reference), "seed \(seed): Int32 of \(value)")
            #expect(Bool.fromStoreValue(value) == Bool.fromDatabaseValue(reference), "seed \(seed): Bool of \(value)")
            let double = Double.fromStoreValue(value), referenceDouble = Double.fromDatabaseValue(reference)
            #expect(double == referenceDouble || (double?.isNaN == true && referenceDouble?.isNaN == true),
                    "seed \(seed): Double of \(value)")
            #expect(String.fromStoreValue(value) == String.fromDatabaseValue(reference), "seed \(seed): String of \(value)")
            #expect(Data.fromStoreValue(value) == Data.fromDatabaseValue(reference), "seed \(seed): Data of \(value)")
            #expect(Int64?.fromStoreValue(value).map { $0 } == Int64?.fromDatabaseValue(reference).map { $0 },
                    "seed \(seed): Int64? of \(value)")
        }
    }

    @Test func everyKindSurvivesARealSQLiteColumn() throws {
        let queue = try DatabaseQueue()
        var random = Generator(state: 7)
        let values = (0..<300).map { _ in Self.randomValue(&random) }
        let read: [StoreValue] = try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v)")
            for value in values { try db.executeFully(sql: "INSERT INTO t VALUES (?)", arguments: [value]) }
            let statement = try db.makeStatement(sql: "SELECT v FROM t ORDER BY rowid")
            let cursor = try Row.fetchCursor(statement)
            var read: [StoreValue] = []
            while try cursor.next() != nil { read.append(StoreValue(sqliteStatement: statement.sqliteStatement, index: 0)) }
            return read
        }
        #expect(read.count == values.count)
        for (written, back) in zip(values, read) {
            if case .double(let number) = written.storage, number.isNaN {
                #expect(back.isNull, "SQLite stores NaN as NULL")
            } else {
                #expect(back.storage == written.storage, "\(written) came back as \(back)")
            }
        }
    }
}
