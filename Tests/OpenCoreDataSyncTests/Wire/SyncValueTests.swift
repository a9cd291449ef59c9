import Foundation
import Testing
import OpenCoreDataSync

@Suite("Sync wire: values keep their kind through JSON")
struct SyncValueTests {
    static let samples: [SyncValue] = [
        .null, .bool(true), .integer(-9_223_372_036_854_775_808), .double(0.1), .decimal("12.345"),
        .string("é\u{0}\n"), .date(-1.5), .data(Data([0, 255, 7])), .uuid(UUID()), .uri("https://example.com/a?b"),
        .reference(UUID()), .references([UUID(), UUID()]),
    ]

    @Test(arguments: samples)
    func eachValueReadsBackAsItself(_ value: SyncValue) throws {
        let text = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(SyncValue.self, from: text) == value)
    }

    @Test(arguments: [#"{}"#, #"{"int": 1, "string": "a"}"#, #"{"float": 1}"#, #"{"int": "1"}"#, #"{"ref": "not-a-uuid"}"#])
    func malformedValuesAreRefused(_ text: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SyncValue.self, from: Data(text.utf8)) }
    }
}
