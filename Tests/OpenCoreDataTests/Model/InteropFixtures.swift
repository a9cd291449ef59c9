import Foundation
import Testing

/// Helpers shared by the interop tests (namespaced so they cannot clash with other suites' helpers).
enum InteropFixtures {
    /// `original` with one to three random bytes overwritten, and every fourth round cut short first: the
    /// damage the hostile-file tests feed each reader.
    static func damaged(_ original: Data, round: Int, using generator: inout SeededGenerator) -> Data {
        var damaged = original
        if round % 4 == 0 { damaged = damaged.prefix(Int.random(in: 0..<damaged.count, using: &generator)) }
        for _ in 0..<Int.random(in: 1...3, using: &generator) where !damaged.isEmpty {
            let index = damaged.startIndex + Int.random(in: 0..<damaged.count, using: &generator)
            damaged[index] = UInt8.random(in: 0...255, using: &generator)
        }
        return damaged
    }

    /// A file or folder in the fixtures folder the test target copies as a resource.
    static func url(_ name: String) throws -> URL {
        let folder = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return folder.appendingPathComponent(name)
    }

    /// Wraps entity XML in the `<model>` element Xcode writes.
    static func modelXML(_ entities: String, modelAttributes: String = "") -> Data {
        Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" \(modelAttributes)>
        \(entities)
        </model>
        """.utf8)
    }

    /// A small seeded generator (SplitMix64) so the damaged-input tests are the same on every run.
    struct SeededGenerator: RandomNumberGenerator {
        private var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
