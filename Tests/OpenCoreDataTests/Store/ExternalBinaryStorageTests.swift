import Foundation
import GRDB
import Testing
@testable import OpenCoreData

/// Attributes with `allowsExternalBinaryDataStorage` are kept as Core Data keeps them: a marker byte, then
/// the value (0x01) or the name of a file in `.<store>_SUPPORT/_EXTERNAL_DATA/` (0x02). Rows laid out by
/// hand as Core Data writes them read back; saves write the same form, and the folder always matches the
/// committed rows; hostile references give the typed error naming the row, and nothing outside the folder
/// is read.
@Suite struct ExternalBinaryStorageTests {
    static let xml = InteropFixtures.modelXML("""
    <entity name="Photo" representedClassName="Photo">
        <attribute name="name" optional="YES" attributeType="String"/>
        <attribute name="image" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
        <attribute name="plain" optional="YES" attributeType="Binary"/>
        <attribute name="info" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" allowsExternalBinaryDataStorage="YES"/>
    </entity>
    """)

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(xmlData: xml, source: "external-storage")
    }

    /// A store holding one photo per name, all values nil.
    static func stack(names: [String]) throws -> TestStack {
        let stack = try TestStack(model: model())
        let context = stack.context()
        for name in names {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
        }
        try context.save()
        return stack
    }

    static func folder(_ stack: TestStack) -> URL { stack.directory.file(".Test_SUPPORT/_EXTERNAL_DATA") }

    /// The file names in the store's `_EXTERNAL_DATA` folder.
    static func files(_ stack: TestStack) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder(stack).path)) ?? []).sorted()
    }

    /// Bytes no other test value shares, `count` long.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    /// A Core Data file reference: the marker, the name, a NUL.
    static func reference(_ name: String, terminated: Bool = true) -> Data {
        Data([0x02]) + Data(name.utf8) + (terminated ? Data([0]) : Data())
    }

    /// The raw bytes of a column of the photo named `name`, as the file holds them.
    static func raw(_ stack: TestStack, _ column: String = "ZIMAGE", of name: String) throws -> Data? {
        try DatabaseQueue(path: stack.url.path).read { db in
            try Data.fetchOne(db, sql: "SELECT \(column) FROM ZPHOTO WHERE ZNAME = ?", arguments: [name])
        }
    }

    /// Writes raw column bytes by hand, as another program would; returns the row's primary key.
    @discardableResult
    static func write(_ stack: TestStack, _ value: Data?, column: String = "ZIMAGE", of name: String) throws -> Int64 {
        try DatabaseQueue(path: stack.url.path).write { db in
            try db.execute(sql: "UPDATE ZPHOTO SET \(column) = ? WHERE ZNAME = ?", arguments: [value, name])
            return try Int64.fetchOne(db, sql: "SELECT Z_PK FROM ZPHOTO WHERE ZNAME = ?", arguments: [name])!
        }
    }

    /// A context on a coordinator of its own, so nothing comes from an earlier read's cache.
    static func freshContext(_ stack: TestStack) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: stack.model)
        try coordinator.addPersistentStore(type: .sqlite, at: stack.url)
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func photos(_ context: ManagedObjectContext, batchSize: Int = 0) throws -> [ManagedObject] {
        let request = OpenCoreData.FetchRequest<ManagedObject>(entityName: "Photo")
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        request.fetchBatchSize = batchSize
        return try context.fetch(request).map { $0 }
    }

    static func dictionaries(_ context: ManagedObjectContext, _ keys: [String]) throws -> [[String: Any]] {
        let request = OpenCoreData.FetchRequest<[String: Any]>(entityName: "Photo")
        request.resultType = .dictionary
        request.propertiesToFetch = keys
        request.sortDescriptors = [QuerySortDescriptor(key: "name")]
        return try context.fetch(request).map { $0 }
    }

    // MARK: Reading what Core Data wrote

    @Test func readsTheInlineAndFileFormsCoreDataWrites() throws {
        let stack = try Self.stack(names: ["a", "b", "c", "d", "e"])
        let large = Self.bytes(200_000, seed: 1)
        let small = Self.bytes(10, seed: 2)
        let bigName = UUID().uuidString.uppercased(), smallName = UUID().uuidString.uppercased()
        try FileManager.default.createDirectory(at: Self.folder(stack), withIntermediateDirectories: true)
        try large.write(to: Self.folder(stack).appendingPathComponent(bigName))
        try small.write(to: Self.folder(stack).appendingPathComponent(smallName))
        try Self.write(stack, Data([0x01]) + Data("tiny".utf8), of: "a")
        try Self.write(stack, Self.reference(bigName), of: "b")
        // Core Data reads the name up to a NUL or the column's end.
        try Self.write(stack, Self.reference(smallName, terminated: false), of: "c")
        try Self.write(stack, Data(), of: "d")
        // A column without the flag keeps its bytes as they are, marker-like first byte and all.
        try Self.write(stack, Data([0x01, 0x41]), column: "ZPLAIN", of: "a")
        let expected: [String: Data?] = ["a": Data("tiny".utf8), "b": large, "c": small, "d": Data(), "e": nil]

        for batchSize in [0, 2] {
            let photos = try Self.photos(Self.freshContext(stack), batchSize: batchSize)
            #expect(photos.count == 5)
            for photo in photos {
                let name = try #require(try photo.value(forKey: "name") as? String)
                #expect(try photo.value(forKey: "image") as? Data == expected[name]!, "photo \(name), batch size \(batchSize)")
            }
            #expect(try photos[0].value(forKey: "plain") as? Data == Data([0x01, 0x41]))
        }
        let rows = try Self.dictionaries(Self.freshContext(stack), ["name", "image", "plain"])
        for row in rows {
            let name = try #require(row["name"] as? String)
            #expect(row["image"] as? Data == expected[name]!, "dictionary row \(name)")
        }
        #expect(rows[0]["plain"] as? Data == Data([0x01, 0x41]))
    }

    @Test func aTransformableValueInAFileReadsBack() throws {
        let stack = try Self.stack(names: ["a"])
        let words = (0..<20_000).map { "word\($0)" }
        let archive = try SecureUnarchiveFromDataTransformer().archive(words)
        #expect(archive.count > ExternalBinaryStorage.inlineLimit)
        let name = UUID().uuidString.uppercased()
        try FileManager.default.createDirectory(at: Self.folder(stack), withIntermediateDirectories: true)
        try archive.write(to: Self.folder(stack).appendingPathComponent(name))
        try Self.write(stack, Self.reference(name), column: "ZINFO", of: "a")
        let photo = try #require(try Self.photos(Self.freshContext(stack)).first)
        #expect(try photo.value(forKey: "info") as? [String] == words)
        let row = try #require(try Self.dictionaries(Self.freshContext(stack), ["info"]).first)
        #expect(row["info"] as? [String] == words)
    }

    // MARK: Saving

    @Test func savesLargeValuesToFilesAndSmallOnesInline() throws {
        let stack = try Self.stack(names: [])
        let context = stack.context()
        let limit = ExternalBinaryStorage.inlineLimit
        let values: [String: Data] = [
            "large": Self.bytes(300_000, seed: 3), "small": Self.bytes(1_000, seed: 4),
            "limit": Self.bytes(limit, seed: 5), "over": Self.bytes(limit + 1, seed: 6), "empty": Data(),
        ]
        for (name, value) in values {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(value, forKey: "image")
        }
        try context.save()

        #expect(Self.files(stack).count == 2)
        for name in ["large", "over"] {
            let raw = try #require(try Self.raw(stack, of: name))
            #expect(raw.count == 38 && raw.first == 0x02 && raw.last == 0, "\(name) holds a file reference")
            let file = String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)
            #expect(ExternalBinaryStorage.isFileName(file) && file == file.uppercased())
            #expect(try Data(contentsOf: Self.folder(stack).appendingPathComponent(file)) == values[name])
        }
        for name in ["small", "limit", "empty"] {
            #expect(try Self.raw(stack, of: name) == Data([0x01]) + values[name]!, "\(name) is kept inline")
        }
        for photo in try Self.photos(Self.freshContext(stack)) {
            let name = try #require(try photo.value(forKey: "name") as? String)
            #expect(try photo.value(forKey: "image") as? Data == values[name], "\(name) reads back")
        }
    }

    @Test func replacingOrDeletingAValueRemovesItsFileAfterTheCommit() throws {
        let stack = try Self.stack(names: [])
        let context = stack.context()
        let photo = try context.insertNewObject(forEntityName: "Photo")
        try photo.setValue("p", forKey: "name")
        try photo.setValue(Self.bytes(200_000, seed: 7), forKey: "image")
        let other = try context.insertNewObject(forEntityName: "Photo")
        try other.setValue("q", forKey: "name")
        try other.setValue(Self.bytes(200_000, seed: 8), forKey: "image")
        try context.save()
        let first = Self.files(stack)
        #expect(first.count == 2)

        // A new large value: a new file, the old one gone.
        let replacement = Self.bytes(250_000, seed: 9)
        try photo.setValue(replacement, forKey: "image")
        try context.save()
        let second = Self.files(stack)
        #expect(second.count == 2)
        #expect(Set(second).intersection(first).count == 1)
        #expect(try Self.photos(Self.freshContext(stack))[0].value(forKey: "image") as? Data == replacement)

        // A small value: inline, and the file gone.
        try photo.setValue(Data("small".utf8), forKey: "image")
        try context.save()
        #expect(Self.files(stack).count == 1)
        #expect(try Self.raw(stack, of: "p") == Data([0x01]) + Data("small".utf8))

        // Another attribute changing leaves the file alone.
        try other.setValue("q2", forKey: "name")
        try context.save()
        #expect(Self.files(stack).count == 1)
        #expect(try Self.photos(Self.freshContext(stack))[1].value(forKey: "image") as? Data == Self.bytes(200_000, seed: 8))

        // Deleting the object removes its file.
        context.delete(other)
        try context.save()
        #expect(Self.files(stack).isEmpty)
    }

    @Test func aFailedSaveLeavesTheFilesAsTheyWere() throws {
        let stack = try Self.stack(names: [])
        let setup = stack.context()
        let photo = try setup.insertNewObject(forEntityName: "Photo")
        try photo.setValue("p", forKey: "name")
        try photo.setValue(Self.bytes(200_000, seed: 10), forKey: "image")
        try setup.save()
        let before = Self.files(stack)
        let rawBefore = try Self.raw(stack, of: "p")
        #expect(before.count == 1)

        // Two contexts change the same object: the second save conflicts and writes nothing.
        let first = stack.context(), second = stack.context()
        let mine = try #require(try Self.photos(first).first)
        let theirs = try #require(try Self.photos(second).first)
        try theirs.setValue("changed elsewhere", forKey: "name")
        try second.save()
        try mine.setValue(Self.bytes(300_000, seed: 11), forKey: "image")
        let extra = try first.insertNewObject(forEntityName: "Photo")
        try extra.setValue("new", forKey: "name")
        try extra.setValue(Self.bytes(300_000, seed: 12), forKey: "image")
        #expect(throws: (any Error).self) { try first.save() }

        #expect(Self.files(stack) == before)
        #expect(try Self.raw(stack, of: "changed elsewhere") == rawBefore)
        #expect(try Self.photos(Self.freshContext(stack))[0].value(forKey: "image") as? Data == Self.bytes(200_000, seed: 10))
    }

    @Test func aLargeTransformableValueRoundTripsThroughAFile() throws {
        let stack = try Self.stack(names: [])
        let context = stack.context()
        let words = (0..<20_000).map { "word\($0)" }
        let photo = try context.insertNewObject(forEntityName: "Photo")
        try photo.setValue("p", forKey: "name")
        try photo.setValue(words, forKey: "info")
        try context.save()
        #expect(Self.files(stack).count == 1)
        #expect(try Self.raw(stack, "ZINFO", of: "p")?.first == 0x02)
        #expect(try Self.photos(Self.freshContext(stack))[0].value(forKey: "info") as? [String] == words)
    }

    // MARK: Batch requests

    @Test func batchRequestsWriteTheInlineForm() throws {
        let stack = try Self.stack(names: [])
        let context = stack.context()
        let large = Self.bytes(200_000, seed: 13)
        try context.execute(BatchInsertRequest(entityName: "Photo", objects: [["name": "i", "image": large]]))
        #expect(try Self.raw(stack, of: "i") == Data([0x01]) + large)
        let update = BatchUpdateRequest(entityName: "Photo")
        update.propertiesToUpdate = ["plain": Data("p".utf8), "image": Data("u".utf8)]
        try context.execute(update)
        #expect(try Self.raw(stack, of: "i") == Data([0x01, 0x75]))
        #expect(try Self.raw(stack, "ZPLAIN", of: "i") == Data("p".utf8))
        let photo = try #require(try Self.photos(Self.freshContext(stack)).first)
        #expect(try photo.value(forKey: "image") as? Data == Data("u".utf8))
        // An expression would compute over the stored form: refused before any row changes.
        let computed = BatchUpdateRequest(entityName: "Photo")
        computed.propertiesToUpdate = ["image": QueryExpression.key("plain")]
        expectObjectGraphError(.unsupportedBatchValue(
            entity: "Photo", key: "image", reason: "it allows external storage; a batch update sets it to a constant value only")) {
            try context.execute(computed)
        }
        #expect(Self.files(stack).isEmpty)
    }

    // MARK: Predicates

    @Test func comparingAValueIsRefusedNamingTheAttributeAndNilTestsWork() throws {
        let stack = try Self.stack(names: [])
        let context = stack.context()
        for (name, value) in [("small", Data("abc".utf8)), ("large", Self.bytes(200_000, seed: 14)), ("none", nil)] {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue(name, forKey: "name")
            try photo.setValue(value, forKey: "image")
            try photo.setValue(value, forKey: "plain")
        }
        try context.save()
        func count(_ format: String, _ arguments: Any...) throws -> Int {
            let request = OpenCoreData.FetchRequest<ManagedObject>(entityName: "Photo")
            request.predicate = try QueryPredicate(format: format, argumentArray: arguments)
            return try Self.freshContext(stack).count(for: request)
        }
        // The stored form answers nil tests as the value does.
        #expect(try count("image == nil") == 1)
        #expect(try count("image != nil") == 2)
        #expect(try count("nil == image") == 1)
        // A column without the flag compares its bytes.
        #expect(try count("plain == %@", Data("abc".utf8)) == 1)
        for format in ["image == %@", "image != %@", "image IN %@", "name == 'small' OR image == %@"] {
            let argument: Any = format.contains("IN") ? [Data("abc".utf8)] : Data("abc".utf8)
            #expect(Comment(rawValue: format)) { try count(format, argument) } throws: { error in
                guard let refusal = error as? QueryDialectRefusal else { return false }
                return refusal.construct == .externalBinaryStorage && refusal.description.contains("Photo.image")
            }
        }
        // A batch request with such a predicate is refused before any row changes.
        let update = BatchUpdateRequest(entityName: "Photo")
        update.predicate = try QueryPredicate(format: "image == %@", Data("abc".utf8))
        update.propertiesToUpdate = ["name": "changed"]
        #expect(throws: QueryDialectRefusal.self) { try context.execute(update) }
        #expect(try count("name == 'changed'") == 0)
    }

    // MARK: Hostile columns

    @Test(arguments: ["../outside", "/etc/passwd", "..", "", "not-a-uuid", "AAAAAAAA-AAAA-AAAA-AAAA-AAAAAAAAAAAA/../x"])
    func aReferenceThatIsNotAUUIDFileNameIsATypedError(name: String) throws {
        let stack = try Self.stack(names: ["h"])
        // Something to find if the reference were followed out of the folder.
        try FileManager.default.createDirectory(at: Self.folder(stack), withIntermediateDirectories: true)
        try Data("secret".utf8).write(to: Self.folder(stack).deletingLastPathComponent().appendingPathComponent("outside"))
        let key = try Self.write(stack, Self.reference(name), of: "h")
        try Self.expectUnreadable(stack, key: key)
    }

    @Test func aMissingFileIsATypedError() throws {
        let stack = try Self.stack(names: ["h"])
        let key = try Self.write(stack, Self.reference(UUID().uuidString.uppercased()), of: "h")
        try Self.expectUnreadable(stack, key: key, mentioning: "missing")
    }

    @Test func aSymbolicLinkInTheFolderIsNotFollowed() throws {
        let stack = try Self.stack(names: ["h"])
        let name = UUID().uuidString.uppercased()
        let outside = stack.directory.file("outside")
        try Data("secret".utf8).write(to: outside)
        try FileManager.default.createDirectory(at: Self.folder(stack), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: Self.folder(stack).appendingPathComponent(name), withDestinationURL: outside)
        let key = try Self.write(stack, Self.reference(name), of: "h")
        try Self.expectUnreadable(stack, key: key, mentioning: "symbolic link")
    }

    /// A folder elsewhere holding `name` with secret bytes, reached from the store's folder through a
    /// symbolic link at `.Test_SUPPORT` (`linked == "support"`) or at `_EXTERNAL_DATA`.
    static func linkFolder(_ stack: TestStack, linked: String, holding name: String?) throws -> URL {
        let outside = stack.directory.file("elsewhere-\(UUID().uuidString)")
        let outsideData = linked == "support" ? outside.appendingPathComponent("_EXTERNAL_DATA") : outside
        try FileManager.default.createDirectory(at: outsideData, withIntermediateDirectories: true)
        if let name { try Data("secret".utf8).write(to: outsideData.appendingPathComponent(name)) }
        let support = stack.directory.file(".Test_SUPPORT")
        if linked == "support" {
            try FileManager.default.createSymbolicLink(at: support, withDestinationURL: outside)
        } else {
            try FileManager.default.createDirectory(at: support, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: folder(stack), withDestinationURL: outside)
        }
        return outsideData
    }

    @Test(arguments: ["support", "external data"])
    func aLinkedFolderIsNotFollowedForReading(linked: String) throws {
        let stack = try Self.stack(names: ["h"])
        let name = UUID().uuidString.uppercased()
        _ = try Self.linkFolder(stack, linked: linked, holding: name)
        let key = try Self.write(stack, Self.reference(name), of: "h")
        try Self.expectUnreadable(stack, key: key, mentioning: "symbolic link")
    }

    @Test(arguments: ["support", "external data"])
    func aLinkedFolderIsNeitherWrittenNorEmptiedBySaves(linked: String) throws {
        let stack = try Self.stack(names: ["h"])
        let name = UUID().uuidString.uppercased()
        let outside = try Self.linkFolder(stack, linked: linked, holding: name)
        try Self.write(stack, Self.reference(name), of: "h")
        let context = try Self.freshContext(stack)
        let photo = try context.insertNewObject(forEntityName: "Photo")
        try photo.setValue(Self.bytes(200_000, seed: 9), forKey: "image")
        #expect {
            try context.save()
        } throws: { error in
            guard case StoreError.externalDataNotWritten(_, "Photo", "image", let reason) = error else { return false }
            return reason.contains("symbolic link")
        }
        // Deleting the row that names the outside file leaves that file alone.
        try Self.freshContext(stack).execute(BatchDeleteRequest(fetchRequest: OpenCoreData.FetchRequest<ManagedObject>(entityName: "Photo")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == [name])
    }

    @Test func aFIFOInTheFolderIsRefusedWithoutWaiting() throws {
        let stack = try Self.stack(names: ["h"])
        let name = UUID().uuidString.uppercased()
        try FileManager.default.createDirectory(at: Self.folder(stack), withIntermediateDirectories: true)
        #expect(mkfifo(Self.folder(stack).appendingPathComponent(name).path, 0o644) == 0)
        let key = try Self.write(stack, Self.reference(name), of: "h")
        try Self.expectUnreadable(stack, key: key, mentioning: "not a regular file")
    }

    @Test(arguments: [Data([0x07, 0x41]), Data([0x00]), Data([0x03]) + Data("x".utf8),
                      reference(UUID().uuidString) + Data("junk".utf8)])
    func anUnknownMarkerOrTrailingBytesAreATypedError(stored: Data) throws {
        let stack = try Self.stack(names: ["h"])
        let key = try Self.write(stack, stored, of: "h")
        try Self.expectUnreadable(stack, key: key)
    }

    /// Object fetches, faults filled from the store, and dictionary fetches all refuse the row, naming it.
    static func expectUnreadable(_ stack: TestStack, key: Int64, mentioning reason: String? = nil) throws {
        func matches(_ error: any Error) -> Bool {
            guard case StoreError.unreadableExternalData(_, let entity, let name, let primaryKey, let text) = error else {
                return false
            }
            return entity == "Photo" && name == "image" && primaryKey == key && (reason.map { text.contains($0) } ?? true)
        }
        #expect { try photos(freshContext(stack)) } throws: { matches($0) }
        let context = try freshContext(stack)
        let request = OpenCoreData.FetchRequest<ManagedObjectID>(entityName: "Photo")
        request.resultType = .managedObjectID
        let id = try #require(try context.fetch(request).first)
        #expect { try context.object(with: id).value(forKey: "name") } throws: { matches($0) }
        #expect { try dictionaries(freshContext(stack), ["name", "image"]) } throws: { matches($0) }
    }
}
