import Foundation
import Testing
@testable import OpenCoreData

/// The DEFLATE decoder against data zlib compressed (fixed and dynamic Huffman blocks, raw and wrapped),
/// and against damage and expansion past the bound.
@Suite struct InflateTests {
    /// The text the fixtures below hold, compressed by zlib 1.x at level 9.
    static let text = Data((String(repeating: "Core Data keeps the compiled model in Z_MODELCACHE. ", count: 20)
        + String((0..<300).map { Character(UnicodeScalar(UInt8(65 + ($0 * 7) % 26))) })).utf8)
    static let dynamic = "c84vSlVwSSxJVMhOTS0oVijJSFVIzs8tyMxJTVHIzU9JzVHIzFOIivf1d3H1cXZ09nDVU3Ae1TOqZ1TPsNTj6OEf5uwVGOHqExzl7hfq5BkQ7uIdFOnmGzIqgy4DAA=="
    static let wrapped = "eJxzzi9KVXBJLElUyE5NLShWKMlIVUjOzy3IzElNUcjNT0nNUcjMU4iK9/V3cfVxdnT2cNVTcB7VM6pnVM+w1OPo4R/m7BUY4eoTHOXuF+rkGRDu4h0U6eYbMiqDLgMAlzizoA=="
    /// "hello hello hello" in one fixed-Huffman block.
    static let fixed = "y0jNyclXyECQAA=="

    @Test func decodesWhatZlibWrites() throws {
        #expect(try Inflate.decompress(Data(base64Encoded: Self.dynamic)!, maximumOutput: 1 << 20) == Self.text)
        #expect(try Inflate.decompress(Data(base64Encoded: Self.wrapped)!, maximumOutput: 1 << 20) == Self.text)
        #expect(try Inflate.decompress(Data(base64Encoded: Self.fixed)!, maximumOutput: 1 << 20) == Data("hello hello hello".utf8))
        let stored = StoredDeflate.compress(Self.text)
        #expect(try Inflate.decompress(stored, maximumOutput: 1 << 20) == Self.text)
    }

    @Test func refusesOutputPastTheBound() throws {
        let failure = try #require(throws: Inflate.Failure.self) {
            try Inflate.decompress(Data(base64Encoded: Self.dynamic)!, maximumOutput: 1000)
        }
        #expect(failure.reason.contains("expands past 1000"))
    }

    @Test func damagedDataNeverCrashes() throws {
        let original = Data(base64Encoded: Self.dynamic)!
        var generator = InteropFixtures.SeededGenerator(seed: 1951)
        var refused = 0
        for round in 0..<3000 {
            let damaged = InteropFixtures.damaged(original, round: round, using: &generator)
            do {
                let output = try Inflate.decompress(damaged, maximumOutput: 4096)
                #expect(output.count <= 4096)
            } catch is Inflate.Failure {
                refused += 1
            }
        }
        #expect(refused > 0)
    }
}

/// DEFLATE in stored (uncompressed) blocks: valid input for any decoder, for fixtures made in tests.
enum StoredDeflate {
    static func compress(_ data: Data) -> Data {
        var output: [UInt8] = []
        let bytes = [UInt8](data)
        var start = 0
        repeat {
            let end = min(start + 65_535, bytes.count)
            let length = end - start
            output.append(end == bytes.count ? 1 : 0)
            output += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            output += bytes[start..<end]
            start = end
        } while start < bytes.count
        return Data(output)
    }
}
