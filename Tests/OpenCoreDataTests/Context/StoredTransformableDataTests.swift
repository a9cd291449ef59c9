import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A Transformable attribute naming a transformer this process lacks (an app's own class, as real stores
/// name them): the object's other values read, that attribute is a typed error naming the transformer, its
/// stored bytes stay reachable, and `ocd fetch --json` prints them as base64 and says once what was missing.
@Suite struct StoredTransformableDataTests {
    static let xml = InteropFixtures.modelXML(#"""
        <entity name="Book">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="cover" optional="YES" attributeType="Transformable" valueTransformerName="AppCoverTransformer"/>
        </entity>
        """#)
    static let covers = [Data([0x62, 0x70, 0x00, 0xFF]), Data("a cover".utf8)]

    /// A store of two books whose covers hold bytes only the app's transformer reads.
    static func store() throws -> TestStack {
        let stack = try TestStack(model: ManagedObjectModel(xmlData: xml, source: "test"))
        let context = stack.context()
        for title in ["A", "B"] { try context.insertNewObject(forEntityName: "Book").setValue(title, forKey: "title") }
        try context.save()
        try DatabaseQueue(path: stack.url.path).write { db in
            for (title, cover) in zip(["A", "B"], covers) {
                try db.execute(sql: "UPDATE ZBOOK SET ZCOVER = ? WHERE ZTITLE = ?", arguments: [cover, title])
            }
        }
        return stack
    }

    @Test func otherValuesReadAndTheAttributeNamesItsTransformer() throws {
        let stack = try Self.store()
        let request = FetchRequest<ManagedObject>(entityName: "Book")
        request.sortDescriptors = [QuerySortDescriptor(key: "title")]
        let books = try stack.freshContext().fetch(request)
        #expect(try books.map { try $0.value(forKey: "title") as? String } == ["A", "B"])
        for (book, cover) in zip(books, Self.covers) {
            let error = try #require(throws: ObjectGraphError.self) { try book.value(forKey: "cover") }
            guard case .unknownValueTransformer(let entity, let key, let name) = error else {
                Issue.record("not a missing transformer: \(error)")
                continue
            }
            #expect(entity == "Book" && key == "cover" && name == "AppCoverTransformer")
            #expect(try book.storedTransformableData(forKey: "cover") == cover)
        }
        let first = try #require(books.first)
        expectObjectGraphError(.notATransformableAttribute(entity: "Book", key: "title")) {
            try first.storedTransformableData(forKey: "title")
        }
        expectObjectGraphError(.unknownKey(entity: "Book", key: "missing")) { try first.storedTransformableData(forKey: "missing") }
    }

    @Test(.enabled(if: OcdBinary.url != nil, "ocd is not built"))
    func ocdPrintsTheStoredBytesAndNamesTheTransformerOnce() throws {
        let binary = try #require(OcdBinary.url)
        let stack = try Self.store()
        let folder = stack.directory.file("Books.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.xml.write(to: folder.appendingPathComponent("contents"))
        let output = try OcdBinary.run(["fetch", stack.url.path, "--model", folder.path, "--entity", "Book",
                                        "--keys", "title,cover", "--sort", "title", "--json"], binary: binary)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == Self.covers.enumerated().map { position, cover in
            #"{"title":"\#(["A", "B"][position])","cover":"\#(cover.base64EncodedString())"}"# + "\n"
        }.joined())
        #expect(output.stderr.components(separatedBy: "AppCoverTransformer").count == 2, "\(output.stderr)")
    }
}
