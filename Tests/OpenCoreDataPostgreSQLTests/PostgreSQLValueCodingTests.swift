import Foundation
import GRDB
import Testing
@testable import OpenCoreData
@testable import OpenCoreDataPostgreSQL

/// NUMERIC cells read from the server's binary format without Foundation's `Decimal` must give what SQLite's
/// NUMERIC affinity gives: an integer for a whole value that fits 64 bits, the nearest double otherwise.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipReason))
struct PostgreSQLValueCodingTests {
    /// The naive reference: the text parsed as an Int64 when the value is whole and fits, else as a Double.
    static func expected(_ text: String) -> StoreValue {
        if let decimal = Decimal(string: text), decimal.isFinite {
            var rounded = Decimal(), copy = decimal
            NSDecimalRound(&rounded, &copy, 0, .plain)
            if rounded == decimal, let whole = Int64(wholeDigits(text)) { return whole.storeValue }
        }
        return (Double(text) ?? .nan).storeValue
    }

    /// A whole value's text without its fraction of zeros and exponent spelled out (`-12.000` → `-12`).
    static func wholeDigits(_ text: String) -> String {
        guard let decimal = Decimal(string: text) else { return text }
        return NSDecimalNumber(decimal: decimal).stringValue
    }

    static func numerics(_ texts: [String]) throws -> [StoreValue] {
        var admin = try PostgreSQLStoreConfiguration(url: PostgreSQLTestServer.url!)
        admin.schema = nil
        let pool = PostgreSQLConnectionPool(configuration: admin)
        defer { pool.close() }
        return try pool.withSession { session in
            try texts.map { text in
                let rows = try session.rows("SELECT CAST(CAST(? AS TEXT) AS NUMERIC)", [text.storeValue])
                return rows[0][0]
            }
        }
    }

    @Test func edgesReadAsSQLiteReadsThem() throws {
        let texts = ["0", "-0", "1", "-1", "9999", "10000", "10001", "123456789", "100000000", "-100000000",
                     "42.000", "-12.5", "0.5", "0.0001", "0.00001", "1e-30", "-1e30", "1e22", "1e23",
                     "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
                     "18446744073709551616", "123456789012345.678", "3.14159265358979323846", "715000000.25"]
        let values = try Self.numerics(texts)
        for (text, value) in zip(texts, values) {
            #expect(value.storage == Self.expected(text).storage, "\(text): \(value)")
        }
        #expect(try Self.numerics(["9223372036854775807"])[0].storage == .int64(.max))
        #expect(try Self.numerics(["-9223372036854775808"])[0].storage == .int64(.min))
        #expect(try Self.numerics(["0.5"])[0].storage == .double(0.5))
    }

    @Test func specialValuesAreDoubles() throws {
        let values = try Self.numerics(["NaN", "Infinity", "-Infinity"])
        guard case .double(let nan) = values[0].storage else { Issue.record("NaN: \(values[0])"); return }
        #expect(nan.isNaN)
        #expect(values[1].storage == Double.infinity.storeValue.storage)
        #expect(values[2].storage == (-Double.infinity).storeValue.storage)
    }

    /// Random values of every size and scale, against the reference.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomValuesReadAsTheReference(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var texts: [String] = []
        for _ in 0..<300 {
            let sign = Bool.random(using: &generator) ? "-" : ""
            let integerDigits = Int.random(in: 0...22, using: &generator)
            let fractionDigits = Int.random(in: 0...12, using: &generator)
            let digits = { (count: Int) in String((0..<count).map { _ in "0123456789".randomElement(using: &generator)! }) }
            var text = sign + (integerDigits == 0 ? "0" : digits(integerDigits))
            if fractionDigits > 0 { text += "." + digits(fractionDigits) }
            if Int.random(in: 0..<5, using: &generator) == 0 { text += "e\(Int.random(in: -40...40, using: &generator))" }
            texts.append(text)
        }
        for (text, value) in zip(texts, try Self.numerics(texts)) {
            #expect(value.storage == Self.expected(text).storage, "\(text): \(value)")
        }
    }
}
