import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// A store this library wrote before it kept external binary storage values marked holds plain bytes in
/// those columns, and metadata without `_OCDExternalDataMarked`. Such stores are made here by hand: rows
/// with plain bytes, the metadata as the library wrote it then. They read as before; opened writable they
/// are marked in one go; a store Core Data wrote is never taken for one.
@Suite struct UnmarkedExternalDataTests {
    typealias Fixture = ExternalBinaryStorageTests

    /// Plain values, as the library wrote them before the markers: some start with the markers' bytes.
    static let plainValues: [String: Data?] = [
        "text": Data("hello".utf8), "inlineLike": Data([0x01, 0x41, 0x42]), "referenceLike": Data([0x02, 0x00, 0x33]),
        "large": ExternalBinaryStorageTests.bytes(200_000, seed: 21), "empty": Data(), "none": nil,
    ]

    /// Metadata as this library wrote it before the flag (or with Core Data's later keys added).
    static func writeMetadata(_ stack: TestStack, coreDataKeys: Bool = false) throws {
        var metadata = StoreMetadata(model: stack.model)
        metadata.externalDataMarked = false
        var data = try metadata.plistData()
        if coreDataKeys {
            var plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
            plist["NSPersistenceMaximumFrameworkVersion"] = StoreMetadata.frameworkVersion
            plist["NSStoreModelVersionHashesDigest"] = "digest"
            plist["NSStoreModelVersionChecksumKey"] = "checksum"
            data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        }
        let uuid = try DatabaseQueue(path: stack.url.path).read { try String.fetchOne($0, sql: "SELECT Z_UUID FROM Z_METADATA") }
        metadata.storeUUID = try #require(uuid.flatMap(UUID.init(uuidString:)))
        try DatabaseQueue(path: stack.url.path).write { db in
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [data])
        }
    }

    /// A store laid out the old way: plain bytes in ZIMAGE, metadata without the flag.
    static func oldStore() throws -> TestStack {
        let stack = try Fixture.stack(names: plainValues.keys.sorted())
        for (name, value) in plainValues { try Fixture.write(stack, value, of: name) }
        try writeMetadata(stack)
        return stack
    }

    static func metadata(_ stack: TestStack) throws -> StoreMetadata {
        try StoreMetadata.read(storeAt: stack.url.path)
    }

    static func expectPlainValuesRead(_ context: ManagedObjectContext) throws {
        let photos = try Fixture.photos(context)
        #expect(photos.count == plainValues.count)
        for photo in photos {
            let name = try #require(try photo.value(forKey: "name") as? String)
            #expect(try photo.value(forKey: "image") as? Data == plainValues[name]!, "photo \(name)")
        }
    }

    @Test func anOldStoreOpenedWritableReadsAsBeforeAndIsMarkedOnce() throws {
        let stack = try Self.oldStore()
        #expect(try Self.metadata(stack).mayHoldUnmarkedExternalData)
        try Self.expectPlainValuesRead(Fixture.freshContext(stack))
        // Marked in the file now: Core Data's inline form, and the flag.
        #expect(try Fixture.raw(stack, of: "inlineLike") == Data([0x01, 0x01, 0x41, 0x42]))
        #expect(try Fixture.raw(stack, of: "large") == Data([0x01]) + Self.plainValues["large"]!!)
        #expect(try Fixture.raw(stack, of: "empty") == Data())
        #expect(try Fixture.raw(stack, of: "none") == nil)
        #expect(try Self.metadata(stack).externalDataMarked)
        // Opening again changes nothing more.
        try Self.expectPlainValuesRead(Fixture.freshContext(stack))
        #expect(try Fixture.raw(stack, of: "inlineLike") == Data([0x01, 0x01, 0x41, 0x42]))
        // Saves write the marked form beside the converted values.
        let context = try Fixture.freshContext(stack)
        let photo = try #require(try Fixture.photos(context).first { try $0.value(forKey: "name") as? String == "text" })
        try photo.setValue(Fixture.bytes(150_000, seed: 22), forKey: "image")
        try context.save()
        #expect(Fixture.files(stack).count == 1)
        #expect(try Fixture.photos(Fixture.freshContext(stack)).first { try $0.value(forKey: "name") as? String == "text" }?
            .value(forKey: "image") as? Data == Fixture.bytes(150_000, seed: 22))
    }

    @Test func anOldStoreOpenedReadOnlyReadsAsBeforeAndIsNotChanged() throws {
        let stack = try Self.oldStore()
        let before = try Data(contentsOf: stack.url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
        try coordinator.addPersistentStore(type: .sqlite, at: stack.url, options: StoreOptions(readOnly: true))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        try Self.expectPlainValuesRead(context)
        #expect(try Data(contentsOf: stack.url) == before)
        #expect(try !Self.metadata(stack).externalDataMarked)
    }

    @Test func aCoreDataStoreWithTheSameFrameworkVersionIsReadMarked() throws {
        let stack = try Fixture.stack(names: ["a", "b"])
        try Fixture.write(stack, Data([0x01, 0x41]), of: "a")
        try Fixture.write(stack, Data([0x07, 0x41]), of: "b")
        try Self.writeMetadata(stack, coreDataKeys: true)
        #expect(try !Self.metadata(stack).mayHoldUnmarkedExternalData)
        // The 0x07 marker is Core Data's unknown one: refused, never read as plain bytes.
        #expect(throws: StoreError.self) { try Fixture.photos(Fixture.freshContext(stack)) }
        try Fixture.write(stack, nil, of: "b")
        let photos = try Fixture.photos(Fixture.freshContext(stack))
        #expect(try photos[0].value(forKey: "image") as? Data == Data([0x41]))
        #expect(try Fixture.raw(stack, of: "a") == Data([0x01, 0x41]))
        #expect(try !Self.metadata(stack).externalDataMarked)
    }

    @Test func aMarkedStoreWithoutTheFlagKeepsItsValues() throws {
        // What the library wrote between keeping the markers and writing the flag: marked values, old metadata.
        let stack = try Fixture.stack(names: [])
        let context = stack.context()
        for (name, size) in [("small", 10), ("large", 200_000)] {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(Fixture.bytes(size, seed: 23), forKey: "image")
        }
        try context.save()
        try Self.writeMetadata(stack)
        let raw = try Fixture.raw(stack, of: "small")
        for photo in try Fixture.photos(Fixture.freshContext(stack)) {
            let name = try #require(try photo.value(forKey: "name") as? String)
            #expect(try photo.value(forKey: "image") as? Data == Fixture.bytes(name == "small" ? 10 : 200_000, seed: 23))
        }
        #expect(try Fixture.raw(stack, of: "small") == raw)
        #expect(try Self.metadata(stack).externalDataMarked)
    }
}
