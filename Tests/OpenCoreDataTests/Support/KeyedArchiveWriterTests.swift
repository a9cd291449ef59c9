import Foundation
import Testing
@testable import OpenCoreData

/// The keyed-archive writer and the binary property list writer under it, read back by the package's own
/// readers and by Foundation's.
@Suite struct KeyedArchiveWriterTests {
    @Test func binaryListsReadBackHereAndInFoundation() throws {
        let long = String(repeating: "long text ", count: 40)
        let value: PropertyListValue = .dictionary([
            "ascii": .string("plain"), "unicode": .string("Zürich 東京 🙂"), "long": .string(long),
            "small": .integer(7), "wide": .integer(1 << 40), "negative": .integer(-3), "real": .real(-0.25),
            "yes": .boolean(true), "no": .boolean(false), "when": .date(Date(timeIntervalSinceReferenceDate: 99.5)),
            "bytes": .data(Data((0..<300).map { UInt8($0 % 256) })),
            "list": .array((0..<20).map { .integer(Int64($0)) }), "empty": .array([]),
        ])
        let bytes = BinaryPropertyListWriter.write(value)
        #expect(try BinaryPropertyListReader.read(bytes) == value)
        let foundation = try #require(try PropertyListSerialization.propertyList(from: bytes, format: nil) as? [String: Any])
        #expect(foundation["unicode"] as? String == "Zürich 東京 🙂")
        #expect(foundation["long"] as? String == long)
        #expect((foundation["wide"] as? NSNumber)?.int64Value == 1 << 40)
        #expect((foundation["negative"] as? NSNumber)?.int64Value == -3)
        #expect((foundation["list"] as? [Any])?.count == 20)
        // UIDs (which Foundation's property list API cannot write) of every width.
        for uid: UInt64 in [0, 255, 256, 70_000, 5_000_000_000] {
            #expect(try BinaryPropertyListReader.read(BinaryPropertyListWriter.write(.array([.uid(uid)]))) == .array([.uid(uid)]))
        }
    }

    @Test func archivesReadBackToTheSameValues() throws {
        let values: [Any] = [
            "text", 0, Int64.min, UInt8(200), 1.0e300, Float(0.5), false, Data(), Date(timeIntervalSinceReferenceDate: 0),
            URL(fileURLWithPath: "/tmp/a b"), UUID(), [[[1]]], ["k": ["v": Set([1, 2])]], [Any](), NSNull(),
        ]
        for value in values {
            let read = try KeyedArchive(data: KeyedArchiveWriter.archive(value)).foundationValue()
            #expect(FoundationValueCanon.text(read) == FoundationValueCanon.text(value), "\(value)")
        }
    }

    @Test func valuesNoArchiveHoldsAreRefusedByPath() throws {
        struct Opaque {}
        let nested = try #require(throws: KeyedArchiveWriter.Failure.self) {
            try KeyedArchiveWriter.archive(["list": [1, Opaque()]])
        }
        #expect(nested.reason.contains("root[\"list\"][1]") && nested.reason.contains("Opaque"))
        #expect(throws: KeyedArchiveWriter.Failure.self) { try KeyedArchiveWriter.archive([1: "a"]) }
        #expect(throws: KeyedArchiveWriter.Failure.self) { try KeyedArchiveWriter.archive(UInt64.max) }
        var deep: Any = "leaf"
        for _ in 0...KeyedArchiveWriter.maximumDepth { deep = [deep] }
        #expect(throws: KeyedArchiveWriter.Failure.self) { try KeyedArchiveWriter.archive(deep) }
    }
}
