import Foundation
import Testing
@testable import OpenCoreData

/// An XML store opened with an app's model: every value type, to-one, to-many (ordered), many-to-many and
/// sub-entities survive a save and a reopen; fetches take predicates as on any store; a save whose file
/// cannot be written changes neither the file nor the store.
struct XMLStoreTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Shelf", properties: [
                AttributeDescription(name: "name", type: .string),
                ToMany("books", "Book", inverse: "shelf", ordered: true).makeProperty(),
            ]),
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "pages", type: .integer16),
                AttributeDescription(name: "copies", type: .integer32),
                AttributeDescription(name: "isbn", type: .integer64),
                AttributeDescription(name: "price", type: .decimal),
                AttributeDescription(name: "rating", type: .double),
                AttributeDescription(name: "weight", type: .float),
                AttributeDescription(name: "added", type: .date),
                AttributeDescription(name: "read", type: .boolean),
                AttributeDescription(name: "cover", type: .binaryData),
                AttributeDescription(name: "uid", type: .uuid),
                AttributeDescription(name: "link", type: .uri),
                ToOne("shelf", "Shelf", inverse: "books").makeProperty(),
                ToMany("tags", "Tag", inverse: "books").makeProperty(),
            ]),
            EntityDescription(name: "Novel", properties: [AttributeDescription(name: "genre", type: .string)], superentityName: "Book"),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "label", type: .string),
                ToMany("books", "Book", inverse: "tags").makeProperty(),
            ]),
        ])
    }

    static func open(_ url: URL, _ model: ManagedObjectModel, readOnly: Bool = false) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .xml, at: url, options: StoreOptions(readOnly: readOnly))
        let context = ManagedObjectContext(concurrencyType: .confinement)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("xml-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func everyValueAndRelationshipSurvivesReopening() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Library.xml")
        let model = try Self.model()
        let uid = UUID()
        let added = Date(timeIntervalSinceReferenceDate: 336046917.00164198875427246094)
        do {
            let context = try Self.open(url, model)
            let shelf = try context.insertNewObject(forEntityName: "Shelf")
            try shelf.setValue("Fiction & <more>", forKey: "name")
            let fiction = try context.insertNewObject(forEntityName: "Tag")
            try fiction.setValue("fiction", forKey: "label")
            var books: [ManagedObject] = []
            for index in 0..<5 {
                let book = try context.insertNewObject(forEntityName: index % 2 == 0 ? "Novel" : "Book")
                try book.setValue("Book \(index)\nsecond line", forKey: "title")
                try book.setValue(Int16(100 * index), forKey: "pages")
                try book.setValue(Int32(-index), forKey: "copies")
                try book.setValue(Int64.max - Int64(index), forKey: "isbn")
                try book.setValue(Decimal(string: "12.\(index)5")!, forKey: "price")
                try book.setValue(0.1 * Double(index), forKey: "rating")
                try book.setValue(Float(index) / 3, forKey: "weight")
                try book.setValue(added, forKey: "added")
                try book.setValue(index % 2 == 0, forKey: "read")
                try book.setValue(Data([UInt8(index), 0, 255]), forKey: "cover")
                try book.setValue(uid, forKey: "uid")
                try book.setValue(URL(string: "https://example.com/\(index)?a=1&b=2")!, forKey: "link")
                if index % 2 == 0 { try book.setValue("genre \(index)", forKey: "genre") }
                try book.setValue(Set([fiction]), forKey: "tags")
                books.append(book)
            }
            // Ordered, and not in insertion order.
            try shelf.setValue(Array(books.reversed()), forKey: "books")
            try context.save()
        }
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(#"<object type="NOVEL""#) && text.contains(#"type="int16""#) && text.contains(#"type="0/0" destination="BOOK""#))

        let context = try Self.open(url, model, readOnly: true)
        let request = FetchRequest<ManagedObject>(entityName: "Book")
        request.sortDescriptors = [QuerySortDescriptor(key: "pages", ascending: true)]
        let books = try context.fetch(request)
        #expect(books.count == 5)
        for (index, book) in books.enumerated() {
            #expect(try book.value(forKey: "title") as? String == "Book \(index)\nsecond line")
            #expect(try book.value(forKey: "pages") as? Int16 == Int16(100 * index))
            #expect(try book.value(forKey: "copies") as? Int32 == Int32(-index))
            #expect(try book.value(forKey: "isbn") as? Int64 == Int64.max - Int64(index))
            #expect(try book.value(forKey: "price") as? Decimal == Decimal(string: "12.\(index)5")!)
            #expect(try book.value(forKey: "rating") as? Double == 0.1 * Double(index))
            #expect(try book.value(forKey: "weight") as? Float == Float(index) / 3)
            #expect(try book.value(forKey: "added") as? Date == added)
            #expect(try book.value(forKey: "read") as? Bool == (index % 2 == 0))
            #expect(try book.value(forKey: "cover") as? Data == Data([UInt8(index), 0, 255]))
            #expect(try book.value(forKey: "uid") as? UUID == uid)
            #expect(try book.value(forKey: "link") as? URL == URL(string: "https://example.com/\(index)?a=1&b=2"))
            #expect(book.entity.name == (index % 2 == 0 ? "Novel" : "Book"))
            #expect((try book.value(forKey: "tags") as? Set<ManagedObject>)?.count == 1)
        }
        let shelf = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Shelf")).first)
        #expect(try shelf.value(forKey: "name") as? String == "Fiction & <more>")
        let ordered = try #require(try shelf.value(forKey: "books") as? [ManagedObject])
        #expect(ordered.compactMap { try? $0.value(forKey: "pages") as? Int16 } == [400, 300, 200, 100, 0])
        let tag = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).first)
        #expect((try tag.value(forKey: "books") as? Set<ManagedObject>)?.count == 5)

        let filtered = FetchRequest<ManagedObject>(entityName: "Book")
        filtered.predicate = try QueryPredicate(format: "pages >= 200 AND read == YES AND shelf.name BEGINSWITH 'Fiction'")
        #expect(try context.count(for: filtered) == 2)
        let novels = FetchRequest<ManagedObject>(entityName: "Novel")
        novels.predicate = try QueryPredicate(format: "genre == 'genre 4'")
        #expect(try context.count(for: novels) == 1)
    }

    @Test func aSaveTheFileCannotTakeChangesNothing() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Library.xml")
        let model = try Self.model()
        let context = try Self.open(url, model)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        try tag.setValue("kept", forKey: "label")
        try context.save()
        let before = try Data(contentsOf: url)
        try tag.setValue("bell \u{7}", forKey: "label")
        #expect(throws: XMLStoreError.unwritableValue(path: url.path, entity: "Tag", key: "label",
                                                      reason: "the value of object 'z101' holds characters XML cannot carry")) {
            try context.save()
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Library.xml"])
        let other = ManagedObjectContext(concurrencyType: .confinement)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        let labels = try other.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).map { try $0.value(forKey: "label") as? String }
        #expect(labels == ["kept"])
    }

    @Test func theTwoSidesOfARelationshipMustAgree() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Library.xml")
        try Data("""
            <database>
                <object type="SHELF" id="z1"><relationship name="books" type="0/0" destination="BOOK" idrefs="z3"></relationship></object>
                <object type="SHELF" id="z2"></object>
                <object type="BOOK" id="z3"><relationship name="shelf" type="1/1" destination="SHELF" idrefs="z2"></relationship></object>
            </database>
            """.utf8).write(to: url)
        #expect(throws: XMLStoreError.self) { try Self.open(url, try Self.model(), readOnly: true) }
        do {
            _ = try Self.open(url, try Self.model(), readOnly: true)
        } catch let XMLStoreError.invalidObject(_, objectID, key, reason) {
            // Whichever side is read second is the one named.
            #expect((objectID == "z1" && key == "books") || (objectID == "z3" && key == "shelf"))
            #expect(reason.contains("disagree"))
        }
    }

    /// Batch requests write straight to the store's tables, so they write the file too.
    @Test func aBatchDeleteIsWrittenToTheFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Tags.xml")
        let context = try Self.open(url, try Self.model())
        for label in ["a", "b", "c"] { try context.insertNewObject(forEntityName: "Tag").setValue(label, forKey: "label") }
        try context.save()
        let request = FetchRequest<ManagedObject>(entityName: "Tag")
        request.predicate = try QueryPredicate(format: "label != 'b'")
        _ = try context.execute(BatchDeleteRequest(fetchRequest: request))
        let document = try XMLStoreDocument.parse(Data(contentsOf: url), path: url.path)
        #expect(document.objects.map { $0.attributes.map(\.text) } == [["b"]])
    }

    @Test func aDescriptionOfAnXMLFileOpensAnXMLStore() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Tags.xml")
        #expect(PersistentStoreDescription(url: url).type == .xml)
        #expect(try StoreType(coreDataName: XMLStoreType) == .xml)
        let container = PersistentContainer(name: "Tags", managedObjectModel: try Self.model())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertNewObject(forEntityName: "Tag").setValue("one", forKey: "label")
            try context.save()
        }
        let document = try XMLStoreDocument.parse(Data(contentsOf: url), path: url.path)
        #expect(document.objects.map(\.type) == ["TAG"])
        #expect(document.info.metadata[StoreMetadata.Key.storeType] == .string("XML"))
        #expect(document.info.nextObjectID == 102)
    }
}
