import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Batch updates, deletes and upserting inserts let go of values kept in `_EXTERNAL_DATA` files: the files
/// go once the batch has committed, the files of rows it did not touch stay, and a batch that fails removes
/// nothing.
@Suite struct ExternalBinaryStorageBatchTests {
    typealias Fixture = ExternalBinaryStorageTests

    /// Photos "a", "b" (large values: a file each) and "c" (a small value, inline).
    static func stack() throws -> (TestStack, files: [String: String]) {
        let stack = try Fixture.stack(names: [])
        let context = stack.context()
        for (name, size) in [("a", 200_000), ("b", 210_000), ("c", 10)] {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(Fixture.bytes(size, seed: UInt8(size % 251)), forKey: "image")
        }
        try context.save()
        var files: [String: String] = [:]
        for name in ["a", "b"] {
            let raw = try #require(try Fixture.raw(stack, of: name))
            files[name] = String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)
        }
        #expect(Fixture.files(stack) == files.values.sorted())
        return (stack, files)
    }

    static func image(_ stack: TestStack, of name: String) throws -> Data? {
        let photos = try Fixture.photos(Fixture.freshContext(stack))
        return try photos.first { try $0.value(forKey: "name") as? String == name }?.value(forKey: "image") as? Data
    }

    static func request(_ format: String) throws -> OpenCoreData.FetchRequest<ManagedObject> {
        let request = OpenCoreData.FetchRequest<ManagedObject>(entityName: "Photo")
        request.predicate = try QueryPredicate(format: format)
        return request
    }

    /// Makes every write of `operation` to ZPHOTO fail inside SQLite, as a store that refuses the batch.
    static func refuse(_ operation: String, in stack: TestStack) throws {
        try DatabaseQueue(path: stack.url.path).write { db in
            try db.execute(sql: "CREATE TRIGGER refuse_\(operation) BEFORE \(operation) ON ZPHOTO BEGIN SELECT RAISE(ABORT, 'refused'); END")
        }
    }

    @Test func aBatchUpdateRemovesTheFilesOfTheValuesItReplaced() throws {
        let (stack, files) = try Self.stack()
        let update = BatchUpdateRequest(entityName: "Photo")
        update.predicate = try QueryPredicate(format: "name == 'a' OR name == 'c'")
        update.propertiesToUpdate = ["image": Data("new".utf8)]
        try stack.context().execute(update)
        #expect(Fixture.files(stack) == [files["b"]!])
        #expect(try Self.image(stack, of: "a") == Data("new".utf8))
        #expect(try Self.image(stack, of: "b") == Fixture.bytes(210_000, seed: UInt8(210_000 % 251)))
        #expect(try Self.image(stack, of: "c") == Data("new".utf8))
    }

    @Test func aBatchUpdateOfOtherAttributesKeepsTheFiles() throws {
        let (stack, files) = try Self.stack()
        let update = BatchUpdateRequest(entityName: "Photo")
        update.propertiesToUpdate = ["plain": Data("p".utf8)]
        try stack.context().execute(update)
        #expect(Fixture.files(stack) == files.values.sorted())
        #expect(try Self.image(stack, of: "a") == Fixture.bytes(200_000, seed: UInt8(200_000 % 251)))
    }

    @Test func aBatchDeleteByPredicateRemovesTheDeletedRowsFiles() throws {
        let (stack, files) = try Self.stack()
        try stack.context().execute(BatchDeleteRequest(fetchRequest: Self.request("name == 'a'")))
        #expect(Fixture.files(stack) == [files["b"]!])
        #expect(try Self.image(stack, of: "b") == Fixture.bytes(210_000, seed: UInt8(210_000 % 251)))
    }

    @Test func aBatchDeleteByObjectIDRemovesTheDeletedRowsFiles() throws {
        let (stack, files) = try Self.stack()
        let context = stack.context()
        let b = try #require(try context.fetch(Self.request("name == 'b'")).first)
        try context.execute(BatchDeleteRequest(objectIDs: [b.objectID]))
        #expect(Fixture.files(stack) == [files["a"]!])
        #expect(try Self.image(stack, of: "a") == Fixture.bytes(200_000, seed: UInt8(200_000 % 251)))
    }

    @Test func aFailedBatchRemovesNothing() throws {
        let (stack, files) = try Self.stack()
        try Self.refuse("UPDATE", in: stack)
        try Self.refuse("DELETE", in: stack)
        let context = stack.context()
        let update = BatchUpdateRequest(entityName: "Photo")
        update.propertiesToUpdate = ["image": Data("new".utf8)]
        #expect(throws: (any Error).self) { try context.execute(update) }
        #expect(throws: (any Error).self) {
            try context.execute(BatchDeleteRequest(fetchRequest: OpenCoreData.FetchRequest<ManagedObject>(entityName: "Photo")))
        }
        let a = try #require(try context.fetch(Self.request("name == 'a'")).first)
        #expect(throws: (any Error).self) { try context.execute(BatchDeleteRequest(objectIDs: [a.objectID])) }
        #expect(Fixture.files(stack) == files.values.sorted())
        // Without the triggers, which keep a writable open out, every value reads as before.
        try DatabaseQueue(path: stack.url.path).write { db in
            try db.execute(sql: "DROP TRIGGER refuse_UPDATE; DROP TRIGGER refuse_DELETE")
        }
        #expect(try Self.image(stack, of: "a") == Fixture.bytes(200_000, seed: UInt8(200_000 % 251)))
        #expect(try Self.image(stack, of: "b") == Fixture.bytes(210_000, seed: UInt8(210_000 % 251)))
    }

    @Test func anUpsertingBatchInsertRemovesTheFilesOfTheValuesItReplaced() throws {
        let model = try ManagedObjectModel(xmlData: InteropFixtures.modelXML("""
            <entity name="Photo" representedClassName="Photo">
                <attribute name="name" attributeType="String"/>
                <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            """), source: "unique photos")
        let stack = try TestStack(model: model)
        let context = stack.context()
        for name in ["a", "b"] {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(Fixture.bytes(200_000, seed: name == "a" ? 41 : 42), forKey: "image")
        }
        try context.save()
        let before = Fixture.files(stack)
        let kept = try #require(try Fixture.raw(stack, of: "b"))
        #expect(before.count == 2)

        // "a" is upserted (its value replaced), "c" is new.
        try context.execute(BatchInsertRequest(entityName: "Photo", objects: [
            ["name": "a", "image": Data("new".utf8)], ["name": "c", "image": Data("c".utf8)],
        ]))
        #expect(Fixture.files(stack) == [String(decoding: kept.dropFirst().dropLast(), as: UTF8.self)])
        #expect(try Self.image(stack, of: "a") == Data("new".utf8))
        #expect(try Self.image(stack, of: "b") == Fixture.bytes(200_000, seed: 42))
        #expect(try Self.image(stack, of: "c") == Data("c".utf8))
    }
}
