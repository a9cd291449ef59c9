import Foundation
import Testing
@testable import OpenCoreData

/// The binary plist reader against Foundation's writer, and against damaged input.
@Suite struct BinaryPropertyListTests {
    private func binary(_ object: Any) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
    }

    @Test func readsWhatFoundationWrites() throws {
        let long = String(repeating: "x", count: 300)
        let object: [String: Any] = [
            "ascii": "SQLite", "unicode": "Zürich 東京 🚀", "long": long,
            "data": Data([0, 1, 2, 255]), "bigData": Data(repeating: 9, count: 70_000),
            "small": 3, "negative": -42, "large": Int64(1) << 40,
            "real": 2.5, "yes": true, "no": false,
            "array": ["", "a"], "nested": ["Book": Data(repeating: 7, count: 32)],
        ]
        let value = try BinaryPropertyListReader.read(binary(object))
        let dictionary = try #require(value.dictionary)
        #expect(dictionary["ascii"] == .string("SQLite"))
        #expect(dictionary["unicode"] == .string("Zürich 東京 🚀"))
        #expect(dictionary["long"] == .string(long))
        #expect(dictionary["data"] == .data(Data([0, 1, 2, 255])))
        #expect(dictionary["bigData"]?.data?.count == 70_000)
        #expect(dictionary["small"]?.integer == 3)
        #expect(dictionary["negative"]?.integer == -42)
        #expect(dictionary["large"]?.integer == 1 << 40)
        #expect(dictionary["real"] == .real(2.5))
        #expect(dictionary["yes"] == .boolean(true) && dictionary["no"] == .boolean(false))
        #expect(dictionary["array"] == .array([.string(""), .string("a")]))
        #expect(dictionary["nested"] == .dictionary(["Book": .data(Data(repeating: 7, count: 32))]))
    }

    @Test func refusesAContainerThatContainsItself() {
        // bplist00, object 0 = array of one reference to object 0; offset table at 10; trailer.
        var bytes = Array("bplist00".utf8) + [0xA1, 0x00] + [0x08]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0, 0, 0, 0, 0, 10]
        #expect(throws: BinaryPropertyListReader.Failure.self) { try BinaryPropertyListReader.read(Data(bytes)) }
    }

    /// An array naming one object 12,000 times (CoreFoundation writes equal values once) is read: each
    /// mention is a reference written in the file.
    @Test func readsOneObjectNamedManyTimes() throws {
        let count = 12_000
        // Object 0: an array of `count` one-byte references to object 1, the integer 0.
        var bytes = Array("bplist00".utf8) + [0xAF, 0x11, UInt8(count >> 8), UInt8(count & 0xFF)]
        bytes += Array(repeating: 1, count: count)
        let integerOffset = bytes.count
        bytes += [0x10, 0x00]
        let tableStart = bytes.count
        bytes += [0x00, 0x08, UInt8(integerOffset >> 8), UInt8(integerOffset & 0xFF)]
        bytes += [0, 0, 0, 0, 0, 0, 2, 1] + [0, 0, 0, 0, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0, 0, 0, 0, UInt8(tableStart >> 8), UInt8(tableStart & 0xFF)]
        let value = try BinaryPropertyListReader.read(Data(bytes))
        #expect(value == .array(Array(repeating: .integer(0), count: count)))
    }

    /// Damaged metadata blobs (which crash Foundation's reader on Linux) are refused, never a crash.
    @Test func damagedMetadataNeverCrashes() throws {
        let model = try ManagedObjectModel(contentsOf: InteropFixtures.url("Library.xcdatamodeld"))
        let original = try StoreMetadata(model: model, uuid: UUID()).plistData()
        var generator = InteropFixtures.SeededGenerator(seed: 7)
        for round in 0..<2000 {
            var damaged = original
            if round % 3 == 0 { damaged = damaged.prefix(Int.random(in: 0..<damaged.count, using: &generator)) }
            for _ in 0..<Int.random(in: 1...3, using: &generator) where !damaged.isEmpty {
                let index = damaged.startIndex + Int.random(in: 0..<damaged.count, using: &generator)
                damaged[index] = UInt8.random(in: 0...255, using: &generator)
            }
            do {
                _ = try StoreMetadata(plistData: damaged)
            } catch is StoreError {
                // Expected for most samples.
            }
        }
    }
}
